"""Harness case: a two-hidden-layer regression MLP trained with plain gradient descent (TF1 style)."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

rng = np.random.RandomState(0)
features = rng.randn(256, 4).astype(np.float32)
targets = (features @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.1 * rng.randn(256, 1)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 4], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")


def dense(inputs, scope, units, activation=None):
    with tf.variable_scope(scope):
        weights = tf.get_variable("W", [inputs.shape[1], units], initializer=tf.glorot_uniform_initializer())
        bias = tf.get_variable("b", [units], initializer=tf.zeros_initializer())
        out = tf.matmul(inputs, weights) + bias
        return activation(out) if activation else out


hidden1 = dense(x, "hidden1", 8, tf.nn.relu)
hidden2 = dense(hidden1, "hidden2", 8, tf.nn.relu)
prediction = dense(hidden2, "out", 1)
loss = tf.reduce_mean(tf.square(prediction - y))
train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(40):
        batch = slice((step * 32) % 256, (step * 32) % 256 + 32)
        _, batch_loss = sess.run([train_op, loss], feed_dict={x: features[batch], y: targets[batch]})
    final_loss = sess.run(loss, feed_dict={x: features, y: targets})

print("RESULT final_loss", float(final_loss))
