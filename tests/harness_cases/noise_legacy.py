"""Harness case: randomness inside every training step (TF1 style), none of it seeded.

Gaussian noise is added to the inputs in the graph and dropout is fed keep_prob=0.5 while training:
every training step's values depend on random draws. Aligned by creation site, both sides draw the
same numbers, so the values after training can be compared strictly.
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

rng = np.random.RandomState(3)
features = rng.uniform(-1.0, 1.0, size=(64, 4)).astype(np.float32)
targets = np.cos(features.sum(axis=1, keepdims=True)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 4], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
keep_prob = tf.placeholder(tf.float32, [], name="keep_prob")
w1 = tf.get_variable("w1", [4, 16], initializer=tf.glorot_uniform_initializer())
w2 = tf.get_variable("w2", [16, 1], initializer=tf.glorot_uniform_initializer())
noisy = x + tf.random_normal(tf.shape(x), stddev=0.1)
hidden = tf.nn.dropout(tf.nn.relu(tf.matmul(noisy, w1)), keep_prob=keep_prob)
loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(15):
        _, train_loss = sess.run([train_op, loss], feed_dict={x: features, y: targets, keep_prob: 0.5})
    weights = sess.run(w2)
    print("RESULT trained_weight_sum", float(weights.sum()))
