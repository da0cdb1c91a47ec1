"""A training script in the style of research code: the graph reset first, L2 penalties gathered in a
graph collection, feed dicts built under names before the runs (one for training, one for
validation), a session that restores a checkpoint when there is one, initialises otherwise, and only
then merges the summaries, and a second session that restores what the first saved to evaluate it.

The collection is outside what TFM201 models, so the graph stays TF1 code, wrapped once by
`tf.compat.v1.wrap_function` (TFM203): each named feed dict becomes the tuple of its values, passed
to the run-site function unpacked, and the merge joins the graph.
"""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

EPOCHS = 4
BATCH = 25


def layer(inputs, units, name, activation=None):
    weights = tf.get_variable(name + "_weights", [inputs.shape[1], units],
                              initializer=tf.glorot_uniform_initializer(seed=3))
    tf.add_to_collection("l2_losses", tf.nn.l2_loss(weights))
    outputs = tf.matmul(inputs, weights)
    return activation(outputs) if activation is not None else outputs


rng = np.random.RandomState(9)
features = rng.normal(size=(200, 6)).astype(np.float32)
targets = (features[:, :2].sum(axis=1, keepdims=True) > 0).astype(np.float32)
checkpoint_dir = tempfile.mkdtemp()

tf.reset_default_graph()
tf.set_random_seed(5)
x = tf.placeholder(tf.float32, [None, 6], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
hidden = layer(x, 12, "hidden", tf.nn.tanh)
logits = layer(hidden, 1, "output")
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits)) + \
    1e-3 * tf.add_n(tf.get_collection("l2_losses"))
global_step = tf.Variable(0, trainable=False, name="global_step")
train_op = tf.train.AdamOptimizer(0.02).minimize(loss, global_step=global_step)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits > 0, tf.float32), y), tf.float32))
tf.summary.scalar("loss", loss)
tf.summary.scalar("accuracy", accuracy)
saver = tf.train.Saver(max_to_keep=2)

with tf.Session() as sess:
    checkpoint = tf.train.latest_checkpoint(checkpoint_dir)
    if checkpoint:
        saver.restore(sess, checkpoint)
    else:
        sess.run(tf.global_variables_initializer())
    merged = tf.summary.merge_all()
    for epoch in range(EPOCHS):
        for start in range(0, 150, BATCH):
            train_feed = {x: features[start:start + BATCH], y: targets[start:start + BATCH]}
            _, batch_loss = sess.run([train_op, loss], feed_dict=train_feed)
        valid_feed = {x: features[150:], y: targets[150:]}
        summary, valid_accuracy = sess.run([merged, accuracy], valid_feed)
        print("epoch %d: loss %.4f, validation accuracy %.3f" % (epoch, batch_loss, valid_accuracy))
    saver.save(sess, os.path.join(checkpoint_dir, "model"), global_step=global_step)
    print("RESULT train_loss", batch_loss)

with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(checkpoint_dir))
    valid_feed = {x: features[150:], y: targets[150:]}
    print("RESULT restored_step", sess.run(global_step))
    print("RESULT restored_validation_accuracy", sess.run(accuracy, feed_dict=valid_feed))
shutil.rmtree(checkpoint_dir)
