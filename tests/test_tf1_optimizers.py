"""The optimizers TFM201 emulates (tf1_optimizer_classes.py) update exactly as TF1's did.

One TF1 program trains five models, one per emulated case: RMSProp with TF1's defaults on dense and
sparse (embedding) gradients, centered RMSProp with momentum, Nesterov momentum with an exponentially
decayed rate, momentum with a fed rate, Adam on dense and sparse gradients. It runs on the legacy runtime and, migrated, on plain
TensorFlow 2; every weight after every step must be bit for bit the same (both sides run the same
TF1 kernels on the same float32 inputs, so no tolerance is needed).
"""
from __future__ import annotations

import ast
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

from migrate.runner import migrate_path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = """\
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
features = rng.randn(8, 3).astype(np.float32)
targets = rng.randn(8, 1).astype(np.float32)
ids = np.array([0, 2, 0, 5, 2, 1, 0, 3], dtype=np.int32)

x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
rows = tf.placeholder(tf.int32, [None])
rate = tf.placeholder(tf.float32, [])
global_step = tf.Variable(0, trainable=False, name="global_step")

# RMSProp with TF1's defaults, sparse gradients (an embedding) and dense ones
embedding = tf.Variable(tf.constant(np.linspace(-1, 1, 24).reshape(6, 4), tf.float32), name="embedding")
w1 = tf.Variable(tf.constant(np.linspace(-0.5, 0.5, 12).reshape(3, 4), tf.float32), name="w1")
loss1 = tf.reduce_mean(tf.square(tf.reduce_sum(tf.matmul(x, w1) * tf.gather(embedding, rows), 1, keepdims=True) - y))
train1 = tf.train.RMSPropOptimizer(0.01).minimize(loss1, var_list=[embedding, w1])

# centered RMSProp with momentum
w2 = tf.Variable(tf.constant([[0.3], [-0.2], [0.1]], tf.float32), name="w2")
b2 = tf.Variable(0.5, name="b2")
loss2 = tf.reduce_mean(tf.square(tf.matmul(x, w2) + b2 - y))
train2 = tf.train.RMSPropOptimizer(0.02, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True).minimize(loss2, var_list=[w2, b2])

# Nesterov momentum with an exponentially decayed rate
w3 = tf.Variable(tf.constant([[0.1], [0.2], [0.3]], tf.float32), name="w3")
loss3 = tf.reduce_mean(tf.square(tf.matmul(x, w3) - y))
decayed = tf.train.exponential_decay(0.1, global_step, 2, 0.5)
train3 = tf.train.MomentumOptimizer(decayed, 0.9, use_nesterov=True).minimize(loss3, global_step=global_step, var_list=[w3])

# momentum with a fed rate
w4 = tf.Variable(tf.constant([[-0.1], [0.4], [0.2]], tf.float32), name="w4")
loss4 = tf.reduce_mean(tf.square(tf.matmul(x, w4) - y))
train4 = tf.train.MomentumOptimizer(rate, momentum=0.8).minimize(loss4, var_list=[w4])

# Adam on sparse (embedding) and dense gradients, TF1's defaults but for the rate and beta1
embedding5 = tf.Variable(tf.constant(np.linspace(1, -1, 24).reshape(6, 4), tf.float32), name="embedding5")
w5 = tf.Variable(tf.constant(np.linspace(0.5, -0.5, 12).reshape(3, 4), tf.float32), name="w5")
loss5 = tf.reduce_mean(tf.square(tf.reduce_sum(tf.matmul(x, w5) * tf.gather(embedding5, rows), 1, keepdims=True) - y))
train5 = tf.train.AdamOptimizer(0.05, beta1=0.8).minimize(loss5, var_list=[embedding5, w5])

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(6):
        sess.run(train1, {x: features, y: targets, rows: ids})
        sess.run(train2, {x: features, y: targets})
        sess.run(train3, {x: features, y: targets})
        sess.run(train4, {x: features, y: targets, rate: 0.1 / (step + 1)})
        sess.run(train5, {x: features, y: targets, rows: ids})
        values = sess.run([embedding, w1, w2, b2, w3, w4, embedding5, w5])
        print("WEIGHTS", step, [np.asarray(v).tolist() for v in values])
"""


def _weights(command: list[str], env: dict, cwd: Path) -> list[list]:
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    return [ast.literal_eval(line.split(" ", 2)[2]) for line in run.stdout.splitlines() if line.startswith("WEIGHTS ")]


def test_emulated_optimizers_train_as_tf1_did(tmp_path) -> None:
    legacy = tmp_path / "legacy" / "optimizers.py"
    legacy.parent.mkdir()
    legacy.write_text(PROGRAM, encoding="utf-8")
    result = migrate_path(str(legacy))
    assert result.status == "changed" and result.level == "tf2", result.reason
    emulated = [f for f in result.findings if f.code == "TFM201" and f.fixed and "defined in this file" in f.message]
    assert len(emulated) == 5
    migrated = tmp_path / "optimizers.py"
    migrated.write_text(result.new_source, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    expected = _weights([sys.executable, "-m", "migrate.legacy_runtime", str(legacy)], dict(env, PYTHONPATH=str(ROOT)),
                        ROOT)
    got = _weights([sys.executable, str(migrated)], env, tmp_path)
    assert len(expected) == len(got) == 6
    for step, (tf1, tf2) in enumerate(zip(expected, got)):
        for index, (a, b) in enumerate(zip(tf1, tf2)):
            np.testing.assert_array_equal(np.array(b), np.array(a), err_msg=f"step {step}, weight {index}")
    first, last = expected[0], expected[-1]
    assert all(not np.array_equal(a, b) for a, b in zip(first, last)), "every model trains"
    embedding_rows_without_gradient = [4]
    for row in embedding_rows_without_gradient:  # sparse updates leave other rows and their slots alone
        assert first[0][row] == last[0][row] and first[6][row] == last[6][row]


TRAINED_WITH_A_VAR_LIST = """\
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.ones([3, 1]))
b = tf.Variable(tf.zeros([1]))
theta = [w, b]
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
train_op = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=theta)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, value = sess.run([train_op, loss], feed_dict={x: np.ones((2, 3), np.float32)})
        print(step, value)
"""


def test_optimizers_make_their_slots_before_the_first_step_so_it_traces_once(tmp_path) -> None:
    """Slots made in a tf.function's first trace make it trace twice (and a fused loop around the
    step too); the optimizer of plain variables is built right after its step function."""
    source = tmp_path / "legacy.py"
    source.write_text(TRAINED_WITH_A_VAR_LIST)
    migrated = migrate_path(str(source)).new_source
    assert "optimizer.build([w, b])  # its slots now, not in train_step's first trace" in migrated
    program = tmp_path / "migrated.py"
    program.write_text(migrated)
    namespace = runpy.run_path(str(program))
    assert namespace["train_step"].experimental_get_tracing_count() == 1


def test_layer_variables_made_at_the_first_call_leave_the_optimizer_to_build_itself(tmp_path) -> None:
    source = tmp_path / "legacy.py"
    source.write_text(TRAINED_WITH_A_VAR_LIST.replace(
        "loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))",
        "loss = tf.reduce_mean(tf.square(tf.layers.dense(x, 1) + tf.matmul(x, w) + b))").replace(
        ", var_list=theta", ""))
    migrated = migrate_path(str(source)).new_source
    assert "tf.keras.layers.Dense" in migrated and "optimizer.build(" not in migrated
