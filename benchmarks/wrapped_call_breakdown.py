"""Where one call of a wrapped graph's pruned step (TFM203's `graph_function`) spends its time, against
TF1's `Session.run` of the same step, side by side in one process (medians over alternating rounds).

The step: a two-layer classifier trained by TF1's Adam, fed a float batch and int64 labels (converted
to the int32 placeholder, as real programs feed them). Variants, each called the same number of times:

* `Session.run` on a `tf.Graph` of its own (tf.compat.v1, graph mode), fed NumPy;
* `graph_function`'s run, as migrated code calls it (NumPy in, NumPy out);
* its parts: the concrete function called with tensors made once, the same then reading the loss
  (`.numpy()` waits for the step), the concrete function called with tensors made at the call (both,
  or the batch only), the conversion of the fed values alone, the conversion of the results alone;
* the concrete function's private `_call_flat` (not used by the tool: it shows what the public call
  path's argument binding costs).

    python benchmarks/wrapped_call_breakdown.py [--calls 500] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from transforms.graph.bridge.runtime import graph_function, wrap_tf1_graph  # noqa: E402

BATCH, FEATURES, HIDDEN, CLASSES = 16, 20, 32, 3


def build_step() -> dict:
    """The step's graph in the current default graph: its placeholders, loss, train op and initializer."""
    x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES])
    y = tf.compat.v1.placeholder(tf.int32, [None])
    hidden = tf.nn.relu(tf.matmul(x, tf.compat.v1.get_variable("w1", [FEATURES, HIDDEN])))
    logits = tf.matmul(hidden, tf.compat.v1.get_variable("w2", [HIDDEN, CLASSES]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss)
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "init": tf.compat.v1.global_variables_initializer()}


def session_step(batch_x, batch_y):
    graph = tf.Graph()
    with graph.as_default():
        step = build_step()
    session = tf.compat.v1.Session(graph=graph)
    session.run(step["init"])
    return lambda: session.run([step["train_op"], step["loss"]], {step["x"]: batch_x, step["y"]: batch_y})


def wrapped_steps(batch_x, batch_y) -> dict:
    built = {}
    wrapped = wrap_tf1_graph(lambda: built.update(build_step()))
    graph_function(wrapped, [], built["init"], "run_init")()
    run = graph_function(wrapped, [built["x"], built["y"]], [built["train_op"], built["loss"]], "run_train")
    concrete = next(cell.cell_contents for cell in run.__closure__ if hasattr(cell.cell_contents, "_call_flat"))
    made_x, made_y = tf.constant(batch_x), tf.constant(batch_y, tf.int32)
    return {
        "graph_function (as migrated code calls it)": lambda: run(batch_x, batch_y),
        "concrete function, tensors made once": lambda: concrete(made_x, made_y),
        "the same, then the loss read (.numpy())": lambda: concrete(made_x, made_y)[1].numpy(),
        "concrete function, tensors made at the call": lambda: concrete(tf.constant(batch_x),
                                                                        tf.constant(batch_y, tf.int32)),
        "concrete function, the batch made at the call": lambda: concrete(tf.constant(batch_x), made_y),
        "fed values converted (alone)": lambda: (tf.constant(np.asarray(batch_x, np.float32), tf.float32),
                                                 tf.constant(np.asarray(batch_y, np.int32), tf.int32)),
        "results converted (alone)": lambda: tf.nest.map_structure(
            lambda value: None if value is None else value.numpy(), [None, made_x]),
        "private _call_flat, tensors made once": lambda: concrete._call_flat([made_x, made_y],
                                                                             concrete.captured_inputs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    batch_x = rng.rand(BATCH, FEATURES).astype(np.float32)
    batch_y = rng.randint(0, CLASSES, BATCH)  # int64, as NumPy makes labels
    variants = {"Session.run (TF1, graph mode)": session_step(batch_x, batch_y), **wrapped_steps(batch_x, batch_y)}
    times = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, call in variants.items():
            for _ in range(args.calls // 10):
                call()
            start = time.perf_counter()
            for _ in range(args.calls):
                call()
            times[name].append((time.perf_counter() - start) / args.calls * 1e6)
    session = statistics.median(times["Session.run (TF1, graph mode)"])
    print(f"TensorFlow {tf.__version__}, {os.cpu_count()} CPUs; {args.calls} calls x {args.rounds} rounds, medians")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:48s} {median:8.1f} us  ({median / session:.2f} of Session.run)")


if __name__ == "__main__":
    main()
