"""Where a migrated step's time goes on small models, measured side by side in one process.

The corpus's verified programs are tiny CPU models, where the cost of calling a step dominates the
computation. Six measurements, each alternating its variants over several rounds (medians):

1. call overhead of one small training step: TF1's `Session.run` with a feed (a `tf.Graph` of its
   own, run through tf.compat.v1), the migrated `tf.function` with an input_signature called with
   NumPy arrays, the same with tensors, and its concrete function called with NumPy and with tensors;
2. Keras's Adam against `TF1Adam` (TF1's kernel, transforms/graph/training/tf1_optimizer_classes.py)
   in the same step: ops in the step graph and time per step;
3. tracing a GAN-sized step with AutoGraph and without it (`autograph=False`, what TFM201 writes);
4. traces of a step whose optimizer creates its slots at the first call, against one built before;
5. one iteration of a GAN of the corpus's sizes (wiseodd's: an MLP discriminator and generator, batch
   128, TF1's Adam on each): two `Session.run` calls, two migrated step calls, and one call of the
   function TFM311 writes for them (both steps' Python functions traced into one graph);
6. what a step is given and what a run fetches, in a cnn-text-sized step (batch 16 of 8 word ids):
   the batch as the tuples of rows `x_batch, y_batch = zip(*batch)` makes, fed to `Session.run` and to
   the migrated step, against the same rows as arrays (`np.asarray`, what TF1's feed does to them);
   and a run fetching only a variable (`sess.run(global_step)`) as `Session.run`, as the `tf.function`
   TFM201 writes for it, and as a read of the variable.

    python benchmarks/step_overhead.py [--calls 1000] [--rounds 3] [--only-gan | --only-feeds]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from transforms.graph.training.tf1_optimizer_classes import class_sources  # noqa: E402

FEATURES, OUTPUTS, BATCH = 784, 10, 32


def _optimizer_classes() -> dict:
    namespace = {"tf": tf}
    exec("\n\n".join(class_sources(["TF1Adam"])), namespace)
    return namespace


def _per_call_ms(call, calls: int) -> float:
    for _ in range(20):
        call()
    started = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - started) / calls * 1e3


def _medians(variants: dict, calls: int, rounds: int) -> dict[str, float]:
    """Median ms per call of each variant, the variants alternating round by round."""
    times = {name: [] for name in variants}
    for _ in range(rounds):
        for name, call in variants.items():
            times[name].append(_per_call_ms(call, calls))
    return {name: statistics.median(values) for name, values in times.items()}


def _session_step(x_np, y_np):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES])
        y = tf.compat.v1.placeholder(tf.float32, [None, OUTPUTS])
        w = tf.compat.v1.Variable(tf.zeros([FEATURES, OUTPUTS]))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        session = tf.compat.v1.Session(graph=graph)
        session.run(tf.compat.v1.global_variables_initializer())
    return lambda: session.run([train, loss], {x: x_np, y: y_np})


def _function_step():
    w = tf.Variable(tf.zeros([FEATURES, OUTPUTS]))
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32),
                                  tf.TensorSpec([None, OUTPUTS], tf.float32)], autograph=False)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    return train_step


def call_overhead(calls: int, rounds: int) -> dict[str, float]:
    rng = np.random.RandomState(0)
    x_np, y_np = rng.rand(BATCH, FEATURES).astype(np.float32), rng.rand(BATCH, OUTPUTS).astype(np.float32)
    x_tensor, y_tensor = tf.constant(x_np), tf.constant(y_np)
    train_step = _function_step()
    concrete = train_step.get_concrete_function()
    variants = {"Session.run, NumPy feed": _session_step(x_np, y_np),
                "tf.function, NumPy arguments": lambda: train_step(x_np, y_np),
                "tf.function, tensor arguments": lambda: train_step(x_tensor, y_tensor),
                "concrete function, NumPy arguments": lambda: concrete(x_np, y_np),
                "concrete function, tensor arguments": lambda: concrete(x_tensor, y_tensor)}
    return _medians(variants, calls, rounds)


def adam_kernels(calls: int, rounds: int) -> dict[str, tuple[int, float]]:
    tf1_adam = _optimizer_classes()["TF1Adam"]
    x_np = np.random.RandomState(1).rand(64, FEATURES).astype(np.float32)
    steps = {}
    for name, make in (("Keras Adam", lambda: tf.keras.optimizers.Adam(0.001, epsilon=1e-8)),
                       ("TF1Adam", lambda: tf1_adam(0.001))):
        tf.random.set_seed(1)
        weights = [tf.Variable(tf.random.normal([FEATURES, 128]) * .05), tf.Variable(tf.zeros([128])),
                   tf.Variable(tf.random.normal([128, 1]) * .05), tf.Variable(tf.zeros([1]))]
        optimizer = make()

        @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32)], autograph=False)
        def step(x, weights=weights, optimizer=optimizer):
            with tf.GradientTape() as tape:
                hidden = tf.nn.relu(tf.matmul(x, weights[0]) + weights[1])
                loss = tf.reduce_mean(tf.square(tf.matmul(hidden, weights[2]) + weights[3]))
            optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
            return loss

        step(x_np)
        steps[name] = (len(step.get_concrete_function().graph.get_operations()), step)
    times = {name: [] for name in steps}
    for _ in range(rounds):
        for name, (_, step) in steps.items():
            times[name].append(_per_call_ms(lambda: step(x_np), calls))
    return {name: (ops, statistics.median(times[name])) for name, (ops, _) in steps.items()}


GAN_BATCH, NOISE, HIDDEN = 128, 100, 128


def _gan_weights(variable):
    rng = np.random.RandomState(2)
    shapes = {"D_W1": [FEATURES, HIDDEN], "D_b1": [HIDDEN], "D_W2": [HIDDEN, 1], "D_b2": [1],
              "G_W1": [NOISE, HIDDEN], "G_b1": [HIDDEN], "G_W2": [HIDDEN, FEATURES], "G_b2": [FEATURES]}
    return {name: variable((rng.randn(*shape) * 0.05).astype(np.float32)) for name, shape in shapes.items()}


def _generator(w, z):
    return tf.nn.sigmoid(tf.matmul(tf.nn.relu(tf.matmul(z, w["G_W1"]) + w["G_b1"]), w["G_W2"]) + w["G_b2"])


def _logit(w, inputs):
    return tf.matmul(tf.nn.relu(tf.matmul(inputs, w["D_W1"]) + w["D_b1"]), w["D_W2"]) + w["D_b2"]


def _cross_entropy(logits, label):
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=logits, labels=label(logits)))


def _d_loss(w, x, z):
    """wiseodd's vanilla GAN: the discriminator's loss on real `x` and generated `z`."""
    return _cross_entropy(_logit(w, x), tf.ones_like) + _cross_entropy(_logit(w, _generator(w, z)), tf.zeros_like)


def _g_loss(w, z):
    return _cross_entropy(_logit(w, _generator(w, z)), tf.ones_like)


D_VARIABLES, G_VARIABLES = ("D_W1", "D_W2", "D_b1", "D_b2"), ("G_W1", "G_W2", "G_b1", "G_b2")


def _session_gan(x_np, z_np):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES])
        z = tf.compat.v1.placeholder(tf.float32, [None, NOISE])
        w = _gan_weights(tf.compat.v1.Variable)
        d_loss, g_loss = _d_loss(w, x, z), _g_loss(w, z)
        d_solver = tf.compat.v1.train.AdamOptimizer().minimize(d_loss, var_list=[w[k] for k in D_VARIABLES])
        g_solver = tf.compat.v1.train.AdamOptimizer().minimize(g_loss, var_list=[w[k] for k in G_VARIABLES])
        session = tf.compat.v1.Session(graph=graph)
        session.run(tf.compat.v1.global_variables_initializer())

    def iteration():
        session.run([d_solver, d_loss], {x: x_np, z: z_np[0]})
        session.run([g_solver, g_loss], {z: z_np[1]})
    return iteration


def _function_gan():
    """The migrated GAN steps (as TFM201 writes them: TF1Adam, no AutoGraph) and TFM311's merged function."""
    tf1_adam = _optimizer_classes()["TF1Adam"]
    w = _gan_weights(tf.Variable)
    d_optimizer, g_optimizer = tf1_adam(), tf1_adam()
    x_spec, z_spec = tf.TensorSpec([None, FEATURES], tf.float32), tf.TensorSpec([None, NOISE], tf.float32)

    @tf.function(input_signature=[x_spec, z_spec], autograph=False)
    def D_solver_step(X, Z):
        d_vars = [w[k] for k in D_VARIABLES]
        with tf.GradientTape() as tape:
            d_loss = _d_loss(w, X, Z)
        d_optimizer.apply_gradients(zip(tape.gradient(d_loss, d_vars), d_vars))
        return d_loss

    @tf.function(input_signature=[z_spec], autograph=False)
    def G_solver_step(Z):
        g_vars = [w[k] for k in G_VARIABLES]
        with tf.GradientTape() as tape:
            g_loss = _g_loss(w, Z)
        g_optimizer.apply_gradients(zip(tape.gradient(g_loss, g_vars), g_vars))
        return g_loss

    @tf.function(input_signature=[x_spec, z_spec, z_spec], autograph=False)
    def D_solver_and_G_solver_step(X, Z, Z_1):
        return D_solver_step.python_function(X, Z), G_solver_step.python_function(Z_1)

    return D_solver_step, G_solver_step, D_solver_and_G_solver_step


def gan_iteration(calls: int, rounds: int) -> dict[str, float]:
    rng = np.random.RandomState(3)
    x_np = rng.rand(GAN_BATCH, FEATURES).astype(np.float32)
    z_np = rng.uniform(-1, 1, size=(2, GAN_BATCH, NOISE)).astype(np.float32)
    d_step, g_step, merged = _function_gan()
    variants = {"two Session.run calls": _session_gan(x_np, z_np),
                "two step calls (TFM201)": lambda: (d_step(x_np, z_np[0]), g_step(z_np[1])),
                "one merged call (TFM311)": lambda: merged(x_np, z_np[0], z_np[1])}
    return _medians(variants, calls, rounds)


WORDS, SENTENCE, LABELS, TEXT_BATCH, EMBEDDING = 30, 8, 2, 16, 6


def _text_rows():
    """One batch as cnn-text-classification's `batch_iter` yields it: an object array of (x, y) rows."""
    rng = np.random.RandomState(4)
    rows = list(zip(rng.randint(0, WORDS, (TEXT_BATCH, SENTENCE)), np.eye(LABELS)[rng.randint(0, LABELS, TEXT_BATCH)]))
    return np.array(rows, dtype=object)


def _session_text_step():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.int32, [None, SENTENCE])
        y = tf.compat.v1.placeholder(tf.float32, [None, LABELS])
        step = tf.compat.v1.train.get_or_create_global_step()
        loss = _text_loss(tf.compat.v1.Variable(tf.zeros([WORDS, EMBEDDING])),
                          tf.compat.v1.Variable(tf.zeros([EMBEDDING, LABELS])), x, y)
        train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        session = tf.compat.v1.Session(graph=graph)
        session.run(tf.compat.v1.global_variables_initializer())

    def train_step(x_batch, y_batch):
        return session.run([train, loss], {x: x_batch, y: y_batch})

    return train_step, lambda: session.run(step)


def _text_loss(embedding, weights, x, y):
    features = tf.reduce_max(tf.nn.embedding_lookup(embedding, x), axis=1)
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=tf.matmul(features, weights), labels=y))


def _function_text_step():
    embedding, weights = tf.Variable(tf.zeros([WORDS, EMBEDDING])), tf.Variable(tf.zeros([EMBEDDING, LABELS]))
    step = tf.Variable(0, dtype=tf.int64)
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function(input_signature=[tf.TensorSpec([None, SENTENCE], tf.int32),
                                  tf.TensorSpec([None, LABELS], tf.float32)], autograph=False)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = _text_loss(embedding, weights, x, y)
        optimizer.apply_gradients(zip(tape.gradient(loss, [embedding, weights]), [embedding, weights]))
        step.assign_add(1)
        return loss

    @tf.function(autograph=False)
    def compute_global_step():
        return step

    return train_step, compute_global_step, step


def feeds_and_reads(calls: int, rounds: int) -> dict[str, float]:
    x_rows, y_rows = zip(*_text_rows())
    x_array, y_array = np.asarray(x_rows, np.int32), np.asarray(y_rows, np.float32)
    session_step, session_read = _session_text_step()
    train_step, compute_global_step, step = _function_text_step()
    variants = {"Session.run, rows fed as tuples": lambda: session_step(x_rows, y_rows),
                "Session.run, rows fed as arrays": lambda: session_step(x_array, y_array),
                "tf.function, rows as tuples": lambda: train_step(x_rows, y_rows),
                "tf.function, rows as arrays": lambda: train_step(x_array, y_array),
                "tf.function, rows made arrays at the call":
                    lambda: train_step(np.asarray(x_rows, np.int32), np.asarray(y_rows, np.float32)),
                "Session.run(global_step)": lambda: int(session_read()),
                "tf.function returning global_step": lambda: int(compute_global_step()),
                "global_step read (int(variable))": lambda: int(step)}
    return _medians(variants, calls, rounds)


def _first_call_s(autograph: bool, prebuilt: bool) -> tuple[float, int]:
    """Seconds of the first call (tracing) of a discriminator-sized train step, and its trace count."""
    weights = [tf.Variable(tf.random.normal([FEATURES, 128])), tf.Variable(tf.zeros([128])),
               tf.Variable(tf.random.normal([128, 1])), tf.Variable(tf.zeros([1]))]
    optimizer = tf.keras.optimizers.Adam(0.001)
    started = time.perf_counter()
    if prebuilt:
        optimizer.build(weights)

    def discriminator(x):
        hidden = tf.nn.relu(tf.matmul(x, weights[0]) + weights[1])
        logit = tf.matmul(hidden, weights[2]) + weights[3]
        return tf.nn.sigmoid(logit), logit

    @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32)], autograph=autograph)
    def step(x):
        with tf.GradientTape() as tape:
            _, logit = discriminator(x)
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=logit, labels=tf.ones_like(logit)))
        optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
        return loss

    step(np.ones((4, FEATURES), np.float32))
    return time.perf_counter() - started, step.experimental_get_tracing_count()


def tracing(rounds: int) -> dict[str, tuple[float, int]]:
    """Each first call in a fresh interpreter, as a user's script makes it: AutoGraph caches what it
    converted, so a second measurement in one process would not pay the conversion again."""
    variants = {"AutoGraph, slots built at the first call": ("autograph", "lazy"),
                "no AutoGraph, slots built at the first call": ("plain", "lazy"),
                "no AutoGraph, optimizer built before": ("plain", "prebuilt")}
    results = {name: [] for name in variants}
    counts = {}
    for _ in range(rounds):
        for name, flags in variants.items():
            output = subprocess.run([sys.executable, __file__, "--first-call", *flags], capture_output=True,
                                    text=True, check=True).stdout.split()
            results[name].append(float(output[0]))
            counts[name] = int(output[1])
    return {name: (statistics.median(values), counts[name]) for name, values in results.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only-gan", action="store_true", help="only measurement 5")
    parser.add_argument("--only-feeds", action="store_true", help="only measurement 6")
    parser.add_argument("--first-call", nargs=2, metavar=("AUTOGRAPH", "OPTIMIZER"),
                        help="internal: time one first call (autograph|plain, lazy|prebuilt) and exit")
    args = parser.parse_args(argv)
    if args.first_call:
        seconds, traces = _first_call_s(args.first_call[0] == "autograph", args.first_call[1] == "prebuilt")
        print(seconds, traces)
        return 0
    print(f"# {os.cpu_count()} CPUs, TensorFlow {tf.__version__}, Python {sys.version.split()[0]}; "
          f"load average at start {os.getloadavg()[0]:.1f}; medians of {args.rounds} rounds")
    if args.only_gan:
        return _print_gan(args)
    if args.only_feeds:
        return _print_feeds(args)
    print("\n1. one small training step, per call:")
    for name, ms in call_overhead(args.calls, args.rounds).items():
        print(f"   {name:38s} {ms:.3f} ms")
    print("\n2. Adam in a two-layer step (batch 64):")
    for name, (ops, ms) in adam_kernels(args.calls, args.rounds).items():
        print(f"   {name:12s} {ops:4d} ops in the step graph, {ms:.3f} ms per step")
    print("\n3-4. first call (tracing) of a GAN discriminator step with Keras Adam, each in a fresh process:")
    for name, (seconds, traces) in tracing(args.rounds).items():
        print(f"   {name:45s} {seconds:.3f} s, {traces} trace(s)")
    _print_gan(args)
    return _print_feeds(args)


def _print_gan(args) -> int:
    print(f"\n5. one GAN iteration (discriminator step, then generator step; batch {GAN_BATCH}):")
    gan = gan_iteration(max(args.calls // 4, 50), args.rounds)
    legacy = gan["two Session.run calls"]
    for name, ms in gan.items():
        print(f"   {name:38s} {ms:.3f} ms   {legacy / ms:.2f}x the Session.run iteration's speed")
    return 0


def _print_feeds(args) -> int:
    print(f"\n6. a cnn-text-sized step (batch {TEXT_BATCH} of {SENTENCE} word ids), per call:")
    for name, ms in feeds_and_reads(args.calls, args.rounds).items():
        print(f"   {name:42s} {ms:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
