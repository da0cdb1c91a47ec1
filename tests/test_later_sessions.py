"""Issue #16: sessions opened one after another over the same graph (transforms/graph/sessions/later_sessions.py).

Each program runs unmodified on the legacy runtime and, migrated, on plain TF 2: a second session
that restores the checkpoint the first one saved, and one that runs the initializer again, must
compute what TF1 computed. Initial values from NumPy arrays give the same numbers on both sides; a
random initializer under a graph seed is checked for what TF1 guarantees (a new session's
initializer run draws the first session's initial values again), since TF1's and TF2's random
streams differ.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from migrate.runner import migrate_path
from test_sessions_to_functions_examples import FORBIDDEN, close, code_names, results, run

GRAPH = """\
import json
import os
import tempfile

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
data = rng.normal(size=(16, 3)).astype(np.float32)
labels = data @ np.array([[0.5], [-1.0], [2.0]], np.float32)
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32), name="w")
b = tf.Variable(tf.zeros([1]), name="b")
prediction = tf.matmul(x, w) + b
loss = tf.reduce_mean(tf.square(prediction - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
"""

TRAIN = """
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(15):
        sess.run(train_op, feed_dict={x: data, y: labels})
    print("RESULT trained_loss %r" % float(sess.run(loss, feed_dict={x: data, y: labels})))
"""

RESTORE = GRAPH + "saver = tf.train.Saver()\npath = os.path.join(tempfile.mkdtemp(), 'model.ckpt')\n" + TRAIN + """\
    saver.save(sess, path)

with tf.Session() as sess:
    saver.restore(sess, path)
    print("RESULT restored_loss %r" % float(sess.run(loss, feed_dict={x: data, y: labels})))
    print("RESULT restored_prediction %s" % json.dumps(sess.run(prediction, feed_dict={x: data[:4]}).ravel().tolist()))
"""

REINITIALISE = GRAPH + TRAIN + """
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("RESULT initial_loss %r" % float(sess.run(loss, feed_dict={x: data, y: labels})))
    print("RESULT initial_prediction %s" % json.dumps(sess.run(prediction, feed_dict={x: data[:4]}).ravel().tolist()))
"""

SEEDED_RANDOM = """\
import numpy as np
import tensorflow as tf

tf.set_random_seed(4)
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.random_normal([3, 1]), name="w")
prediction = tf.matmul(x, w)
loss = tf.reduce_mean(tf.square(prediction))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
data = np.ones((2, 3), np.float32)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    first = sess.run(prediction, feed_dict={x: data})
    sess.run(train_op, feed_dict={x: data})
    trained = sess.run(prediction, feed_dict={x: data})

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    again = sess.run(prediction, feed_dict={x: data})
print("RESULT reinitialised_like_first %r" % float(np.array_equal(first, again)))
print("RESULT trained_differs %r" % float(not np.array_equal(first, trained)))
"""


def both_sides(source: str, tmp_path: Path) -> tuple[dict, dict]:
    """(legacy RESULTs on the legacy runtime, migrated RESULTs on plain TF 2)."""
    legacy_path = tmp_path / "legacy.py"
    legacy_path.write_text(source, encoding="utf-8")
    migration = migrate_path(str(legacy_path))
    assert migration.level == "tf2", [f.message for f in migration.findings if not f.fixed]
    assert not code_names(migration.new_source) & set(FORBIDDEN)
    migrated_path = tmp_path / "migrated.py"
    migrated_path.write_text(migration.new_source, encoding="utf-8")
    with ThreadPoolExecutor(max_workers=1) as pool:
        legacy = pool.submit(run, ["-m", "migrate.legacy_runtime", str(legacy_path)], tmp_path)
        migrated = results(run([str(migrated_path)], tmp_path))
        return results(legacy.result()), migrated


def same_results(legacy: dict, migrated: dict) -> bool:
    return legacy.keys() == migrated.keys() and all(close(legacy[key], migrated[key]) for key in legacy)


def test_a_later_session_restoring_the_checkpoint_predicts_what_tf1_did(tmp_path: Path) -> None:
    legacy, migrated = both_sides(RESTORE, tmp_path)
    assert same_results(legacy, migrated), (legacy, migrated)
    assert close(migrated["restored_loss"], migrated["trained_loss"])


def test_a_later_session_initialising_again_computes_with_the_initial_values(tmp_path: Path) -> None:
    legacy, migrated = both_sides(REINITIALISE, tmp_path)
    assert same_results(legacy, migrated), (legacy, migrated)
    assert migrated["initial_loss"][0] > 10 * migrated["trained_loss"][0]  # not the trained weights


def test_a_seeded_random_initializer_gives_the_first_sessions_values_again(tmp_path: Path) -> None:
    legacy, migrated = both_sides(SEEDED_RANDOM, tmp_path)
    expected = {"reinitialised_like_first": [1.0], "trained_differs": [1.0]}
    assert legacy == expected and migrated == expected
