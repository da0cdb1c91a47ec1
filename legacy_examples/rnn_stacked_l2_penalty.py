"""The human-activity-recognition LSTM shape copied across so many TF1 repositories: a model function
that projects each time step through a ReLU layer held in dicts of variables, splits the sequence into
per-step tensors, runs two stacked tf.contrib.rnn.BasicLSTMCells (a MultiRNNCell) with
tf.contrib.rnn.static_rnn, and classifies the last output; the loss adds an L2 penalty over every
trainable variable, the LSTMs' included, summed by Python's `sum`.

Each seeded synthetic sequence (6 steps of 4 features) belongs to one of 3 classes by which of its
first three features has the largest mean. Adam trains from fed minibatches; the loss is printed every
10 steps and the accuracy of a held-out batch at the end.
"""
import json

import numpy as np
import tensorflow as tf

TIMESTEPS, FEATURES, CLASSES, HIDDEN = 6, 4, 3, 10
STEPS = 30
BATCH = 24
L2_WEIGHT = 0.0015

rng = np.random.RandomState(7)
sequences = rng.randn(264, TIMESTEPS, FEATURES).astype(np.float32)
labels = np.eye(CLASSES, dtype=np.float32)[np.argmax(sequences[:, :, :CLASSES].mean(axis=1), axis=1)]

x = tf.placeholder(tf.float32, [None, TIMESTEPS, FEATURES])
y = tf.placeholder(tf.float32, [None, CLASSES])
weights = {
    "hidden": tf.Variable(rng.normal(0.0, 0.4, (FEATURES, HIDDEN)).astype(np.float32)),
    "out": tf.Variable(rng.normal(0.0, 0.4, (HIDDEN, CLASSES)).astype(np.float32)),
}
biases = {
    "hidden": tf.Variable(np.full(HIDDEN, 0.1, np.float32)),
    "out": tf.Variable(np.zeros(CLASSES, np.float32)),
}


def lstm_net(inputs, weights, biases):
    steps = tf.reshape(inputs, [-1, FEATURES])
    steps = tf.nn.relu(tf.matmul(steps, weights["hidden"]) + biases["hidden"])
    steps = tf.split(steps, TIMESTEPS, 0)
    lstm_cells = tf.contrib.rnn.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(HIDDEN, forget_bias=1.0),
                                              tf.contrib.rnn.BasicLSTMCell(HIDDEN, forget_bias=1.0)])
    outputs, states = tf.contrib.rnn.static_rnn(lstm_cells, steps, dtype=tf.float32)
    return tf.matmul(outputs[-1], weights["out"]) + biases["out"]


logits = lstm_net(tf.transpose(x, [1, 0, 2]), weights, biases)
l2 = L2_WEIGHT * sum(tf.nn.l2_loss(variable) for variable in tf.trainable_variables())
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits)) + l2
optimizer = tf.train.AdamOptimizer(learning_rate=0.01).minimize(cost)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1)), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    costs = []
    for step in range(STEPS):
        start = (step * BATCH) % 240
        batch_x, batch_y = sequences[start:start + BATCH], labels[start:start + BATCH]
        _, cost_value = sess.run([optimizer, cost], feed_dict={x: batch_x, y: batch_y})
        costs.append(float(cost_value))
        if step % 10 == 0:
            print("step %d cost %.4f" % (step, cost_value))
    held_out = sess.run(accuracy, feed_dict={x: sequences[240:], y: labels[240:]})

print("RESULT costs %s" % json.dumps(costs[::6]))
print("RESULT held_out_accuracy %r" % float(held_out))
