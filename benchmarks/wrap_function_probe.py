"""Can `tf.compat.v1.wrap_function` carry a TF1 graph that TFM201 does not model into TF2?

Issue 16 asks for a smaller unit of refusal, built on TensorFlow's own bridges. This probe measures
the bridge on the shapes real TF1 programs have, before any transform is built on it:

1. equivalence and speed: one graph (a tf.layers dense layer, a get_variable weight, Adam with a
   global step) trained for the same steps by a legacy `Session.run` (in a subprocess on the legacy
   runtime) and by the wrapped graph's pruned functions on plain TF 2; losses compared step by step,
   per-step medians of the session, the pruned function called as generated code would call it, and
   that pruned function inside a `tf.function`;
2. constructs of real programs that the bridge itself rejects, each tried in a fresh wrapped graph;
3. the same, through the helpers TFM203 writes into a migrated file (`wrap_tf1_graph`,
   `graph_function`: transforms/graph/bridge/runtime.py), called as the migrated code calls them
   (NumPy in, NumPy out), and the constructs again through `wrap_tf1_graph`.

    python benchmarks/wrap_function_probe.py [--steps 2000] [--repeats 5]

A `tf.Variable` given a tensor as its initial value and a dynamic_rnn's cell need `wrap_tf1_graph`'s
variable creator; a returned train op is no concern for TFM203, whose build function returns nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.layers in the graph need tf-keras
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

BATCH, FEATURES, CLASSES = 64, 16, 4


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    return rng.rand(BATCH, FEATURES).astype(np.float32), (np.arange(BATCH) % CLASSES).astype(np.int32)


def build(x, y, handles: dict) -> None:
    """The TF1 graph; `handles` receives its tensors and ops (a wrapped function cannot return ops)."""
    hidden = tf.compat.v1.layers.dense(x, 32, activation=tf.nn.relu,
                                       kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=1))
    weights = tf.compat.v1.get_variable("weights", [32, CLASSES],
                                        initializer=tf.compat.v1.glorot_uniform_initializer(seed=2))
    logits = tf.matmul(hidden, weights)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    train = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    handles.update(x=x, y=y, loss=loss, train=train)


def median_ms(step, steps: int, repeats: int) -> float:
    for _ in range(50):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - start) / steps * 1e3)
    return statistics.median(times)


def legacy(steps: int, repeats: int) -> dict:
    tf.compat.v1.disable_v2_behavior()
    x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES])
    y = tf.compat.v1.placeholder(tf.int32, [None])
    handles: dict = {}
    build(x, y, handles)
    session = tf.compat.v1.Session()
    session.run(tf.compat.v1.global_variables_initializer())
    features, labels = data()
    feed = {x: features, y: labels}
    losses = [float(session.run([handles["train"], handles["loss"]], feed)[1]) for _ in range(20)]
    return {"losses": losses, "session_run_ms": median_ms(lambda: session.run([handles["train"], handles["loss"]], feed),
                                                          steps, repeats)}


def wrapped(steps: int, repeats: int) -> dict:
    handles: dict = {}
    graph = tf.compat.v1.wrap_function(lambda x, y: build(x, y, handles),
                                       [tf.TensorSpec([None, FEATURES], tf.float32), tf.TensorSpec([None], tf.int32)])
    train_step = graph.prune(feeds=[handles["x"], handles["y"]], fetches=[handles["train"], handles["loss"]])
    features, labels = (tf.constant(value) for value in data())
    losses = [float(train_step(features, labels)[1]) for _ in range(20)]
    traced = tf.function(lambda a, b: train_step(a, b))
    return {"losses": losses,
            "pruned_call_ms": median_ms(lambda: train_step(features, labels), steps, repeats),
            "pruned_in_tf_function_ms": median_ms(lambda: traced(features, labels), steps, repeats)}


def bridged(steps: int, repeats: int) -> dict:
    from transforms.graph.bridge.runtime import graph_function, wrap_tf1_graph

    handles: dict = {}

    def build_graph():
        x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES])
        y = tf.compat.v1.placeholder(tf.int32, [None])
        build(x, y, handles)
        handles["init"] = tf.compat.v1.global_variables_initializer()

    graph = wrap_tf1_graph(build_graph)
    graph_function(graph, [], handles["init"], "initialize")()
    train_step = graph_function(graph, [handles["x"], handles["y"]], [handles["train"], handles["loss"]], "train_step")
    features, labels = data()
    losses = [float(train_step(features, labels)[1]) for _ in range(20)]
    return {"losses": losses, "graph_function_ms": median_ms(lambda: train_step(features, labels), steps, repeats)}


def tensor_initial_value() -> None:
    tf.compat.v1.Variable(tf.zeros([3]))  # TF1's commonest spelling: tf.Variable(tf.zeros(...))


def dynamic_rnn_cell() -> None:
    x = tf.zeros([2, 5, 3])
    cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(4)
    tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)


def returned_train_op() -> tf.Operation:
    variable = tf.compat.v1.get_variable("v", [], initializer=tf.compat.v1.zeros_initializer())
    return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(variable * variable)


def rejected_constructs(wrap) -> dict[str, str]:
    outcomes = {}
    for probe in (tensor_initial_value, dynamic_rnn_cell, returned_train_op):
        try:
            wrap(probe)
            outcomes[probe.__name__] = "wraps"
        except Exception as error:  # the point is which constructs fail, and how
            outcomes[probe.__name__] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--legacy-side", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.legacy_side:
        print(json.dumps(legacy(options.steps, options.repeats)))
        return
    command = [sys.executable, __file__, "--legacy-side", "--steps", str(options.steps), "--repeats", str(options.repeats)]
    old = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
    new = wrapped(options.steps, options.repeats)
    helper = bridged(options.steps, options.repeats)
    difference = max(abs(a - b) for a, b in zip(old["losses"], new["losses"]))
    helper_difference = max(abs(a - b) for a, b in zip(old["losses"], helper["losses"]))
    print(f"TensorFlow {tf.__version__}, {os.cpu_count()} CPUs; {options.steps} steps x {options.repeats} repeats, medians")
    print(f"losses over 20 steps, legacy session vs wrapped graph: max abs difference {difference:.3g}")
    print(f"per step: Session.run {old['session_run_ms']:.3f} ms; pruned function {new['pruned_call_ms']:.3f} ms "
          f"({old['session_run_ms'] / new['pruned_call_ms']:.2f}x); pruned function in a tf.function "
          f"{new['pruned_in_tf_function_ms']:.3f} ms ({old['session_run_ms'] / new['pruned_in_tf_function_ms']:.2f}x)")
    print(f"TFM203's helpers: losses max abs difference {helper_difference:.3g}; graph_function "
          f"{helper['graph_function_ms']:.3f} ms per step ({old['session_run_ms'] / helper['graph_function_ms']:.2f}x)")
    from transforms.graph.bridge.runtime import wrap_tf1_graph

    for name, outcome in rejected_constructs(lambda probe: tf.compat.v1.wrap_function(probe, [])).items():
        print(f"construct {name}: {outcome}")
    for name, outcome in rejected_constructs(wrap_tf1_graph).items():
        print(f"construct {name} through wrap_tf1_graph: {outcome}")


if __name__ == "__main__":
    main()
