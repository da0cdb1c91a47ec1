"""The classic TF1 RNN tutorial shape: a model function that unstacks the sequence into per-step
tensors, runs a tf.contrib.rnn.BasicLSTMCell with tf.contrib.rnn.static_rnn and feeds the last
output (`outputs[-1]`) into a linear layer held in a dict of variables.

Each seeded synthetic sequence (8 steps of 5 features) belongs to one of 3 classes by which of its
first three features has the largest sum. Adam trains from fed minibatches; training accuracy is
printed every 10 steps and a held-out batch is evaluated at the end.
"""
import json

import numpy as np
import tensorflow as tf

TIMESTEPS, FEATURES, CLASSES, HIDDEN = 8, 5, 3, 12
STEPS = 40
BATCH = 32

rng = np.random.RandomState(31)
sequences = rng.randn(288, TIMESTEPS, FEATURES).astype(np.float32)
classes = np.argmax(sequences[:, :, :CLASSES].sum(axis=1), axis=1).astype(np.int64)

x = tf.placeholder(tf.float32, [None, TIMESTEPS, FEATURES])
y = tf.placeholder(tf.int64, [None])
weights = {"out": tf.Variable(rng.normal(0.0, 0.3, (HIDDEN, CLASSES)).astype(np.float32))}
biases = {"out": tf.Variable(np.zeros(CLASSES, np.float32))}


def recurrent_net(x, weights, biases):
    steps = tf.unstack(x, TIMESTEPS, 1)
    lstm_cell = tf.contrib.rnn.BasicLSTMCell(HIDDEN, forget_bias=1.0)
    outputs, states = tf.contrib.rnn.static_rnn(lstm_cell, steps, dtype=tf.float32)
    return tf.matmul(outputs[-1], weights["out"]) + biases["out"]


logits = recurrent_net(x, weights, biases)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(STEPS):
        start = (step * BATCH) % 256
        batch_x, batch_y = sequences[start:start + BATCH], classes[start:start + BATCH]
        _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})
        losses.append(float(loss_value))
        if step % 10 == 0:
            print("step %d loss %.4f" % (step, loss_value))
    held_out = sess.run(accuracy, feed_dict={x: sequences[256:], y: classes[256:]})

print("RESULT losses %s" % json.dumps(losses[::8]))
print("RESULT held_out_accuracy %r" % float(held_out))
