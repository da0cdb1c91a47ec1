"""The GAN shape of DCGAN-style repositories: an `ops` section whose `linear(input_, output_size,
scope)` makes its weights with `tf.get_variable` in `tf.variable_scope(scope or "Linear")`, sized by
its input's static shape; `generator(z, reuse)` and `discriminator(x, reuse)` composed of such calls
inside `tf.variable_scope(<network>, reuse=reuse)`. The discriminator is built on real data, then on
the generator's samples with reuse=True; the generator again with reuse=True to draw samples. Each
network's variables are picked out of `tf.trainable_variables()` by name, for its own Adam.

Initial weights from seeded NumPy, seeded data and noise, so the migrated program must print the
same numbers.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 30
BATCH = 16
Z_DIM = 4

rng = np.random.RandomState(11)
real_data = (rng.randn(256, 2) * 0.3 + [1.0, -0.5]).astype(np.float32)
noise_data = rng.uniform(-1.0, 1.0, (256, Z_DIM)).astype(np.float32)


def lrelu(x, leak=0.2):
    return tf.maximum(x, leak * x)


def seeded(rows, columns, seed, stddev):
    return np.random.RandomState(seed).normal(0.0, stddev, size=(rows, columns)).astype(np.float32)


def linear(input_, output_size, scope=None, stddev=0.2, seed=0):
    shape = input_.get_shape().as_list()
    with tf.variable_scope(scope or "Linear"):
        matrix = tf.get_variable("Matrix", [shape[1], output_size], tf.float32,
                                 tf.constant_initializer(seeded(shape[1], output_size, seed, stddev)))
        bias = tf.get_variable("bias", [output_size], initializer=tf.constant_initializer(0.0))
        return tf.matmul(input_, matrix) + bias


def generator(z, reuse=False):
    with tf.variable_scope("generator", reuse=reuse):
        net = tf.nn.relu(linear(z, 16, scope="g_fc1", seed=1))
        return linear(net, 2, scope="g_fc2", seed=2)


def discriminator(x, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        net = lrelu(linear(x, 16, scope="d_fc1", seed=3))
        logits = linear(net, 1, scope="d_fc2", seed=4)
        return tf.nn.sigmoid(logits), logits


inputs = tf.placeholder(tf.float32, [BATCH, 2], name="real_inputs")
z = tf.placeholder(tf.float32, [None, Z_DIM], name="z")

D_real, D_real_logits = discriminator(inputs)
G = generator(z)
D_fake, D_fake_logits = discriminator(G, reuse=True)

d_loss_real = tf.reduce_mean(
    tf.nn.sigmoid_cross_entropy_with_logits(logits=D_real_logits, labels=tf.ones_like(D_real)))
d_loss_fake = tf.reduce_mean(
    tf.nn.sigmoid_cross_entropy_with_logits(logits=D_fake_logits, labels=tf.zeros_like(D_fake)))
d_loss = d_loss_real + d_loss_fake
g_loss = tf.reduce_mean(
    tf.nn.sigmoid_cross_entropy_with_logits(logits=D_fake_logits, labels=tf.ones_like(D_fake)))

t_vars = tf.trainable_variables()
d_vars = [var for var in t_vars if "d_" in var.name]
g_vars = [var for var in t_vars if "g_" in var.name]
d_optim = tf.train.AdamOptimizer(0.002, beta1=0.5).minimize(d_loss, var_list=d_vars)
g_optim = tf.train.AdamOptimizer(0.002, beta1=0.5).minimize(g_loss, var_list=g_vars)

fake_samples = generator(z, reuse=True)

d_losses, g_losses = [], []
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        start = (step * BATCH) % 256
        batch_images = real_data[start:start + BATCH]
        batch_z = noise_data[start:start + BATCH]
        _, d_value = sess.run([d_optim, d_loss], feed_dict={inputs: batch_images, z: batch_z})
        _, g_value = sess.run([g_optim, g_loss], feed_dict={z: batch_z})
        d_losses.append(round(float(d_value), 6))
        g_losses.append(round(float(g_value), 6))
    samples = sess.run(fake_samples, feed_dict={z: noise_data[:8]})

print("RESULT d_losses %s" % json.dumps(d_losses[::5]))
print("RESULT g_losses %s" % json.dumps(g_losses[::5]))
print("RESULT sample_mean %s" % json.dumps(round(float(samples.mean()), 6)))
