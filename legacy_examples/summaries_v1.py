"""TensorBoard logging the TF1 way: summary ops, merge_all, a FileWriter, then read it back.

Fits y = 3x - 1 with SGD, logging the loss (scalar) and the weight (histogram) every
step into a temporary log dir, then parses the event file to show what was written.
"""
import glob
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

STEPS = 12

tf.set_random_seed(3)
rng = np.random.RandomState(3)
xs = rng.uniform(-1, 1, size=(64, 1)).astype(np.float32)
ys = 3.0 * xs - 1.0

x = tf.placeholder(tf.float32, [None, 1])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(tf.random_uniform([1, 1], -1.0, 1.0, seed=4), name="w")
b = tf.Variable(tf.zeros([1]), name="b")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)

with tf.name_scope("summaries"):
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("bias", tf.reshape(b, []))
    tf.summary.histogram("weights", w)
merged = tf.summary.merge_all()

log_dir = tempfile.mkdtemp(prefix="summaries_v1_")
try:
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(log_dir, sess.graph)
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            summary, _ = sess.run([merged, train_op], feed_dict={x: xs, y: ys})
            writer.add_summary(summary, step)
        writer.close()

    # Read the events back: one Event per add_summary call, plus the file-version event.
    scalars, histogram_tags = {}, set()
    event_file, = glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
    for event in tf.train.summary_iterator(event_file):
        for value in event.summary.value:
            if value.HasField("histo"):
                histogram_tags.add(value.tag)
            else:
                scalars.setdefault(value.tag, []).append(value.simple_value)
finally:
    shutil.rmtree(log_dir)

print("scalar tags:", sorted(scalars), "histogram tags:", sorted(histogram_tags))
print("RESULT num_scalar_tags %r" % float(len(scalars)))
print("RESULT num_histogram_tags %r" % float(len(histogram_tags)))
print("RESULT logged_loss %s" % json.dumps([float(v) for v in scalars["summaries/loss"]]))
print("RESULT last_logged_bias %r" % float(scalars["summaries/bias"][-1]))
