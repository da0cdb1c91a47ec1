"""The helpers TFM503 writes into migrated files compute what tf.contrib computed.

tf-slim holds tf.contrib's code; on the legacy runtime (which mends what tf-slim 1.1 reaches for on
TensorFlow 2.21) its batch_norm and optimize_loss are the reference. Each check builds the same
model twice in one graph, once per implementation, and compares every value they produce. The
parts TFM504 imports from tf-slim are run on plain TensorFlow 2, as migrated programs run.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

from transforms.contrib._tf1_emulations import BATCH_NORM, OPTIMIZE_LOSS
from transforms.contrib.import_tf_slim import RUNS_ON_TF2

ROOT = Path(__file__).resolve().parent.parent

BATCH_NORM_CHECK = """
import numpy as np
from migrate.legacy_runtime import install
tf = install()
import tf_slim
exec(HELPER, globals())

rng = np.random.RandomState(0)
checked = 0
for shape in ([6, 4, 4, 3], [5, 3]):
    for training in (True, False, "fed"):
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, [None] + shape[1:])
        flag = tf.placeholder(tf.bool, []) if training == "fed" else training
        options = dict(decay=0.9, updates_collections=None, epsilon=1e-5, scale=True, is_training=flag)
        reference = tf_slim.batch_norm(x, scope="contrib", **options)
        emulated = tf1_batch_norm(x, scope="emulated", **options)
        names = sorted(v.name.replace("contrib/", "") for v in tf.global_variables() if v.name.startswith("contrib/"))
        assert names == sorted(v.name.replace("emulated/", "") for v in tf.global_variables()
                               if v.name.startswith("emulated/")), names
        model = sorted(v.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES))
        assert len(model) == 2 * len(names), model
        trainable = sorted(v.name.split("/", 1)[1] for v in tf.trainable_variables())
        assert trainable == ["beta:0", "beta:0", "gamma:0", "gamma:0"], trainable
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                batch = rng.randn(*shape).astype(np.float32)
                feed = {x: batch}
                if training == "fed":
                    feed[flag] = step != 2
                got_reference, got_emulated = sess.run([reference, emulated], feed)
                np.testing.assert_array_equal(got_reference, got_emulated)
                for name in ("moving_mean", "moving_variance"):
                    a, b = sess.run([tf.get_default_graph().get_tensor_by_name(f"{scope}/{name}:0")
                                     for scope in ("contrib", "emulated")])
                    np.testing.assert_array_equal(a, b)
                checked += 1
print("CHECKED", checked)
"""

OPTIMIZE_LOSS_CHECK = """
import numpy as np
from migrate.legacy_runtime import install
tf = install()
from tf_slim.layers import optimizers
exec(HELPER, globals())

NAMES = {"Adam": tf.train.AdamOptimizer, "SGD": tf.train.GradientDescentOptimizer,
         "Adagrad": tf.train.AdagradOptimizer, "RMSProp": tf.train.RMSPropOptimizer}

def build(scope, optimize, optimizer, learning_rate, clip):
    with tf.variable_scope(scope):
        step = tf.Variable(0, trainable=False, name="step", dtype=tf.int64)
        w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.5))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        rate = learning_rate if isinstance(learning_rate, float) else tf.train.exponential_decay(
            0.1, step, 2, 0.5, staircase=True)
        train = optimize(loss, global_step=step, learning_rate=rate, optimizer=optimizer,
                         clip_gradients=clip, variables=[w])
    return train, w, step

rng = np.random.RandomState(1)
checked = 0
for name, learning_rate, clip in (("Adam", 0.05, None), ("SGD", 0.3, 0.5), ("Adagrad", "decayed", 1.0),
                                  ("RMSProp", 0.01, None)):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    reference = build("contrib", optimizers.optimize_loss, name, learning_rate, clip)
    emulated = build("emulated", tf1_optimize_loss, NAMES[name], learning_rate, clip)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            feed = {x: rng.randn(8, 3).astype(np.float32), y: rng.randn(8, 1).astype(np.float32)}
            got_reference, got_emulated = sess.run([reference, emulated], feed)
            for a, b in zip(got_reference, got_emulated):
                np.testing.assert_array_equal(a, b)
            checked += 1
print("CHECKED", checked)
"""

SLIM_PARTS_CHECK = """
import tensorflow as tf
tf.compat.v1.disable_v2_behavior()
import tf_slim as slim
tf.compat.v1.get_variable("w", [3, 4])
slim.model_analyzer.analyze_vars(tf.compat.v1.trainable_variables(), print_info=True)
print("CHECKED", len(PARTS))
"""


def code_names(source: str) -> set[str]:
    """The identifiers the code uses (not the words in its comments or strings)."""
    return {token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.NAME}


def run_check(script: str, helper: str = "", **constants) -> str:
    prelude = f"HELPER = {helper!r}\nPARTS = {sorted(RUNS_ON_TF2)!r}\n"
    process = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)], cwd=ROOT,
                             capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr[-3000:]
    return process.stdout


def test_batch_norm_helper_matches_contrib_batch_norm() -> None:
    assert "CHECKED 18" in run_check(BATCH_NORM_CHECK, BATCH_NORM.source)


def test_optimize_loss_helper_matches_contrib_optimize_loss() -> None:
    assert "CHECKED 16" in run_check(OPTIMIZE_LOSS_CHECK, OPTIMIZE_LOSS.source)


def test_slim_parts_tfm504_imports_run_on_plain_tensorflow() -> None:
    output = run_check(SLIM_PARTS_CHECK)
    assert "Total size of variables: 12" in output and f"CHECKED {len(RUNS_ON_TF2)}" in output


def test_contrib_example_runs_on_plain_tensorflow_2_with_the_same_results(tmp_path) -> None:
    """legacy_examples/contrib_bn_gru_optimize_loss.py: contrib batch_norm, tf.contrib.rnn cells,
    optimize_loss and np.float, migrated, run without the legacy runtime, print what TF1 printed."""
    from migrate.runner import migrate_path

    example = ROOT / "legacy_examples" / "contrib_bn_gru_optimize_loss.py"
    result = migrate_path(str(example))
    assert result.status == "changed", result.reason
    assert "contrib" not in code_names(result.new_source)
    assert not [f for f in result.findings if f.code in ("TFM101", "TFM107", "TFM503", "TFM504") and not f.fixed]
    migrated = tmp_path / example.name
    migrated.write_text(result.new_source, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    legacy_env = dict(env, PYTHONPATH=str(ROOT))
    runs = [subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=run_env)
            for command, run_env in (([sys.executable, "-m", "migrate.legacy_runtime", str(example)], legacy_env),
                                     ([sys.executable, str(migrated)], env))]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    legacy, plain = ([line for line in run.stdout.splitlines() if line.startswith("RESULT ")] for run in runs)
    assert len(legacy) == 13 and plain == legacy
