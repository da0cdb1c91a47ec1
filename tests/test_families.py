"""Per-family site counts in the report (migrate/families.py): which TF1 API families a file uses and
how many of their sites reached TF2, stayed on compat.v1, or are gone from current TensorFlow."""
from __future__ import annotations

import json

from migrate.families import family_of
from migrate.report import Report, render_json, render_markdown
from migrate.runner import Options, migrate_text

CONVERTIBLE = '''import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 3, "training steps")
FLAGS = flags.FLAGS

x = tf.placeholder(tf.float32, [None, 2])
w = tf.Variable(tf.zeros([2, 1]))
loss = tf.reduce_mean(tf.matmul(x, w))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(FLAGS.steps):
        sess.run(train_op, feed_dict={x: np.ones((4, 2), np.float32)})
'''

CONTRIB = '''import tensorflow as tf

slim = tf.contrib.slim
net = slim.fully_connected(tf.zeros([1, 2]), 3)
loss = slim.losses.mean_squared_error(net, tf.zeros([1, 3]))
'''


def test_symbols_are_sorted_into_families_by_canonical_name():
    assert family_of("tf.train.Saver") == "checkpoints"
    assert family_of("tf.contrib.rnn.LSTMCell") == "rnn"  # rnn before the contrib catch-all
    assert family_of("tf.contrib.slim.conv2d") == "contrib/slim"
    assert family_of("tf.summary.merge_all") == "summaries"
    assert family_of("tf.nn.relu") is None
    assert family_of("tf.Session") == "sessions"


def test_converted_sites_count_as_tf2():
    result = migrate_text("train.py", CONVERTIBLE, Options())
    assert result.level == "tf2", result.findings
    families = result.families
    assert families["sessions"] == {"sites": 3, "tf2": 3, "compat": 0, "tf1": 0}
    assert families["optimizers"] == {"sites": 1, "tf2": 1, "compat": 0, "tf1": 0}
    # `flags = tf.app.flags` is followed: the alias, its DEFINE and its FLAGS are three sites.
    assert families["flags/logging"] == {"sites": 3, "tf2": 3, "compat": 0, "tf1": 0}


def test_sites_left_on_compat_or_gone_are_counted_so():
    refused = CONVERTIBLE.replace("with tf.Session() as sess:", "saver = tf.train.Saver()\nwith tf.Session() as sess:")
    families = migrate_text("train.py", refused, Options()).families
    assert families["checkpoints"] == {"sites": 1, "tf2": 0, "compat": 1, "tf1": 0}
    # The session is gone (TFM203 wraps the graph TFM201 refused); the placeholder and the initializer
    # stay on compat.v1 inside the wrapped graph.
    assert families["sessions"] == {"sites": 3, "tf2": 1, "compat": 2, "tf1": 0}
    contrib = migrate_text("net.py", CONTRIB, Options()).families
    assert contrib["contrib/slim"] == {"sites": 3, "tf2": 0, "compat": 0, "tf1": 3}
    # Every slim part used runs on tf_slim: the alias becomes `import tf_slim as slim` (no site left),
    # the layer call stays on tf-slim, which is TF1 graph code.
    on_tf_slim = CONTRIB.rsplit("loss =", 1)[0]
    assert migrate_text("net.py", on_tf_slim, Options()).families["contrib/slim"] == {
        "sites": 2, "tf2": 1, "compat": 1, "tf1": 0}


def test_report_totals_families_across_files():
    results = (migrate_text("a.py", CONVERTIBLE, Options()), migrate_text("b.py", CONTRIB, Options()))
    report = Report("diff", results)
    totals = json.loads(render_json(report))["totals"]["families"]
    assert totals["sessions"] == {"files": 1, "sites": 3, "tf2": 3, "compat": 0, "tf1": 0}
    assert totals["contrib/slim"]["files"] == 1 and totals["contrib/slim"]["tf1"] == 3
    assert list(totals)[:2] == ["sessions", "contrib/slim"]  # the families' own order
    assert "| contrib/slim | 1 | 3 | 0 | 0 | 3 |" in render_markdown(report)
