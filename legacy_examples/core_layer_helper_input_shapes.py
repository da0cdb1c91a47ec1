"""The DCGAN `ops.py` shape: `linear(input_, output_size, scope)` reads its input's static shape
(`input_.get_shape().as_list()`) to size the matrix it creates with `tf.get_variable` in a variable
scope, and a `dense_block` helper sizes each layer by the one before it; an autoencoder on seeded
data, trained with Adam.

The initial values are seeded NumPy draws, so the migrated program must print the same numbers.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 40


def linear(input_, output_size, scope=None, bias_start=0.0):
    shape = input_.get_shape().as_list()
    seeded = np.random.RandomState(shape[1] * 100 + output_size).normal(0.0, 0.3, size=(shape[1], output_size))
    with tf.variable_scope(scope or "Linear"):
        matrix = tf.get_variable("Matrix", [shape[1], output_size], tf.float32,
                                 initializer=tf.constant_initializer(seeded))
        bias = tf.get_variable("bias", [output_size], initializer=tf.constant_initializer(bias_start))
        return tf.matmul(input_, matrix) + bias


def dense_block(x, width):
    w0 = tf.get_variable("block_w0", [x.get_shape()[1], width], initializer=tf.constant_initializer(0.02))
    h0 = tf.nn.relu(tf.matmul(x, w0))
    w1 = tf.get_variable("block_w1", [h0.get_shape()[1], width], initializer=tf.constant_initializer(-0.03))
    return tf.nn.tanh(tf.matmul(h0, w1))


rng = np.random.RandomState(11)
data = rng.normal(size=(64, 12)).astype(np.float32)

inputs = tf.placeholder(tf.float32, [None, 12])
code = tf.nn.relu(linear(inputs, 6, "encoder", bias_start=0.1))
hidden = dense_block(code, 8)
reconstruction = linear(hidden, 12, "decoder")
loss = tf.reduce_mean(tf.square(reconstruction - inputs))
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(STEPS):
        _, value = sess.run([train_op, loss], feed_dict={inputs: data[(step % 4) * 16:(step % 4 + 1) * 16]})
        if step % 10 == 0:
            losses.append(float(value))
    print("RESULT losses %s" % json.dumps(losses))
    print("RESULT code %s" % json.dumps([round(float(v), 6) for v in sess.run(code, {inputs: data[:2]}).ravel()]))
