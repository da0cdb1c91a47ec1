"""The "add layer" tutorial shape: a helper that creates its own weights and picks its activation
with a Python `if`, called once per layer, and a second helper that adds hidden layers in a Python
`for` loop (each layer's variables its own); plain gradient descent fed the whole data set each step,
the loss printed every 50 steps.

`add_layer(inputs, in_size, out_size, activation_function=None)` is the helper of
MorvanZhou's tensorflow-tutorial, copied into countless TF1 programs; its weights here start from
seeded NumPy draws instead of `tf.random_normal`, so that the migrated program must print the same
numbers.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 201


def add_layer(inputs, in_size, out_size, activation_function=None):
    seeded = np.random.RandomState(in_size * 100 + out_size)
    Weights = tf.Variable(seeded.normal(0.0, 0.5, size=(in_size, out_size)).astype(np.float32))
    biases = tf.Variable(tf.zeros([1, out_size]) + 0.1)
    Wx_plus_b = tf.matmul(inputs, Weights) + biases
    if activation_function is None:
        outputs = Wx_plus_b
    else:
        outputs = activation_function(Wx_plus_b)
    return outputs


def residual_block(inputs, size, repeats):
    """`repeats` tanh layers of the same width, each added to its input."""
    weights = tf.Variable(np.full((size, size), 0.05, np.float32))
    net = inputs
    for _ in range(repeats):
        net = net + tf.tanh(tf.matmul(net, weights))
    return net


x_data = np.linspace(-1, 1, 300)[:, np.newaxis].astype(np.float32)
noise = np.random.RandomState(1).normal(0, 0.05, x_data.shape).astype(np.float32)
y_data = np.square(x_data) - 0.5 + noise

xs = tf.placeholder(tf.float32, [None, 1])
ys = tf.placeholder(tf.float32, [None, 1])
l1 = add_layer(xs, 1, 10, activation_function=tf.nn.relu)
l2 = residual_block(l1, 10, 2)
prediction = add_layer(l2, 10, 1, activation_function=None)

loss = tf.reduce_mean(tf.reduce_sum(tf.square(ys - prediction), reduction_indices=[1]))
train_step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

sess = tf.Session()
sess.run(tf.global_variables_initializer())
losses = []
for i in range(STEPS):
    sess.run(train_step, feed_dict={xs: x_data, ys: y_data})
    if i % 50 == 0:
        losses.append(float(sess.run(loss, feed_dict={xs: x_data, ys: y_data})))
        print("step", i, "loss", losses[-1])
print("RESULT losses %s" % json.dumps(losses))
print("RESULT prediction %s" % json.dumps(
    [float(v) for v in sess.run(prediction, feed_dict={xs: x_data[::60]}).ravel()]))
