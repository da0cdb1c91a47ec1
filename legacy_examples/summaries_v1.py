"""TensorBoard logging the TF1 way: summary ops in a name scope, merge_all, a FileWriter.

Fits y = 3x - 1 with SGD, logging the loss and the bias (scalars) and the weight (histogram) before
every third step through `writer.add_summary(summary, step)`. The events go to `--logdir` (by
default a temporary folder, removed at the end); `tests/test_summaries.py` reads the events of the
legacy and of the migrated program and compares their tags, steps and values.
"""
import argparse
import json
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

STEPS = 12

parser = argparse.ArgumentParser()
parser.add_argument("--logdir", default=None, help="where to write the event file (default: a temporary folder)")
args = parser.parse_args()

tf.set_random_seed(3)
rng = np.random.RandomState(3)
xs = rng.uniform(-1, 1, size=(64, 1)).astype(np.float32)
ys = 3.0 * xs - 1.0

x = tf.placeholder(tf.float32, [None, 1])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.uniform(-1, 1, size=(1, 1)).astype(np.float32), name="w")
b = tf.Variable(tf.zeros([1]), name="b")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)

with tf.name_scope("summaries"):
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("bias", tf.reshape(b, []))
    tf.summary.histogram("weights", w)
merged = tf.summary.merge_all()

log_dir = args.logdir or tempfile.mkdtemp(prefix="summaries_v1_")
losses = []
with tf.Session() as sess:
    writer = tf.summary.FileWriter(log_dir, sess.graph)
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        if step % 3 == 0:  # the model before this step's update (a run of its own: TF1 gave no order
            # between reading a variable and the train op updating it in the same run)
            summary = sess.run(merged, feed_dict={x: xs, y: ys})
            writer.add_summary(summary, step)
        loss_value, _ = sess.run([loss, train_op], feed_dict={x: xs, y: ys})
        losses.append(float(loss_value))
    final_w, final_b = sess.run([w, b])
    writer.close()
if args.logdir is None:
    shutil.rmtree(log_dir)

print("RESULT losses %s" % json.dumps(losses))
print("RESULT final_w %r" % float(final_w[0, 0]))
print("RESULT final_b %r" % float(final_b[0]))
