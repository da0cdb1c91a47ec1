"""A sequence classifier the TF1 way: an LSTMCell run by tf.nn.dynamic_rnn.

Each seeded synthetic sequence (12 steps of 3 features) is labelled by the sign of the sum of its
first feature. The LSTM's final hidden state (`state.h`) feeds a dense softmax layer; Adam trains
it from placeholders fed with minibatches, and a held-out batch is evaluated at the end.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 30
BATCH = 32
UNITS = 16

tf.set_random_seed(17)
rng = np.random.RandomState(17)
sequences = rng.randn(320, 12, 3).astype(np.float32)
labels_np = (sequences[:, :, 0].sum(axis=1) > 0).astype(np.int64)

inputs = tf.placeholder(tf.float32, [None, 12, 3], name="inputs")
labels = tf.placeholder(tf.int64, [None], name="labels")
cell = tf.nn.rnn_cell.LSTMCell(UNITS)
outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
logits = tf.layers.dense(state.h, 2, name="classifier")
loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(STEPS):
        start = (step * BATCH) % 256
        feed = {inputs: sequences[start:start + BATCH], labels: labels_np[start:start + BATCH]}
        _, loss_value = sess.run([train_op, loss], feed_dict=feed)
        losses.append(float(loss_value))
    held_out = {inputs: sequences[256:], labels: labels_np[256:]}
    final_accuracy, final_outputs = sess.run([accuracy, outputs], feed_dict=held_out)

print("RESULT losses %s" % json.dumps(losses[::5]))
print("RESULT held_out_accuracy %r" % float(final_accuracy))
print("RESULT output_mean %r" % float(np.mean(final_outputs)))
