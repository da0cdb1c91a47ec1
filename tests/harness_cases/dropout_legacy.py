"""Harness case: dropout through a fed keep_prob (TF1 style).

Evaluation feeds keep_prob=1.0 and is deterministic; training feeds 0.5, so the dropout masks (which
no two runtimes draw alike) make everything after the first training step runtime-specific.
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

rng = np.random.RandomState(2)
features = rng.uniform(-1.0, 1.0, size=(128, 5)).astype(np.float32)
targets = np.sin(features.sum(axis=1, keepdims=True)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 5], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
keep_prob = tf.placeholder(tf.float32, [], name="keep_prob")
with tf.variable_scope("layer1"):
    w1 = tf.get_variable("W", [5, 32], initializer=tf.glorot_uniform_initializer())
    b1 = tf.get_variable("b", [32], initializer=tf.zeros_initializer())
with tf.variable_scope("layer2"):
    w2 = tf.get_variable("W", [32, 1], initializer=tf.glorot_uniform_initializer())
    b2 = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
hidden = tf.nn.dropout(tf.nn.relu(tf.matmul(x, w1) + b1), rate=1.0 - keep_prob)
loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) + b2 - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    before = sess.run(loss, feed_dict={x: features, y: targets, keep_prob: 1.0})
    print("RESULT loss_before_training", float(before))
    for step in range(20):
        _, train_loss = sess.run([train_op, loss], feed_dict={x: features, y: targets, keep_prob: 0.5})
    after = sess.run(loss, feed_dict={x: features, y: targets, keep_prob: 1.0})
    print("RESULT loss_after_training", float(after))
