"""Harness case: a training loop that fetches only its train op, in TF1 style.

Nothing the runs fetch carries a value and the program prints nothing: only the trained weights,
read at the end on both sides, can tell whether the migration trains the same model.
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

rng = np.random.RandomState(5)
features = rng.uniform(-1.0, 1.0, size=(32, 3)).astype(np.float32)
targets = (features @ np.array([[0.5], [-1.0], [2.0]], np.float32)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(tf.zeros([3, 1]), name="w")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(20):
        sess.run(train_op, feed_dict={x: features, y: targets})
