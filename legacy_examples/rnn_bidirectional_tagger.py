"""A sequence tagger the TF1 way: forward and backward LSTM cells run by tf.nn.bidirectional_dynamic_rnn.

Each time step of a seeded synthetic sequence (10 steps of 4 features) is tagged 1 when its first
feature is larger than the previous step's and the next step's (a local peak), which needs context
from both directions. The two directions' outputs are concatenated per step and a dense layer tags
them; the backward LSTM's final state `h` also feeds a per-sequence score. Momentum trains both
from fed minibatches.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 25
BATCH = 24
UNITS = 8

tf.set_random_seed(23)
rng = np.random.RandomState(23)
sequences = rng.randn(240, 10, 4).astype(np.float32)
first = sequences[:, :, 0]
padded = np.pad(first, ((0, 0), (1, 1)), constant_values=-np.inf)
tags_np = ((first > padded[:, :-2]) & (first > padded[:, 2:])).astype(np.int64)

inputs = tf.placeholder(tf.float32, [None, 10, 4], name="inputs")
tags = tf.placeholder(tf.int64, [None, 10], name="tags")
cell_fw = tf.nn.rnn_cell.LSTMCell(UNITS)
cell_bw = tf.nn.rnn_cell.LSTMCell(UNITS)
(outputs_fw, outputs_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
    cell_fw, cell_bw, inputs, dtype=tf.float32)
both = tf.concat([outputs_fw, outputs_bw], axis=2)
logits = tf.layers.dense(both, 2, name="tagger")
score = tf.reduce_mean(state_bw.h) + tf.reduce_mean(state_fw.c)
loss = tf.losses.sparse_softmax_cross_entropy(labels=tags, logits=logits)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 2), tags), tf.float32))
train_op = tf.train.MomentumOptimizer(0.1, momentum=0.9).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(STEPS):
        start = (step * BATCH) % 192
        feed = {inputs: sequences[start:start + BATCH], tags: tags_np[start:start + BATCH]}
        _, loss_value = sess.run([train_op, loss], feed_dict=feed)
        losses.append(float(loss_value))
    held_out = {inputs: sequences[192:], tags: tags_np[192:]}
    final_accuracy, final_score = sess.run([accuracy, score], feed_dict=held_out)

print("RESULT losses %s" % json.dumps(losses[::5]))
print("RESULT held_out_accuracy %r" % float(final_accuracy))
print("RESULT state_score %r" % float(final_score))
