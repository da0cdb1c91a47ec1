"""A GAN on 2-D points in the style of hwalsuklee's generative-model collections and wiseodd's GANs.

An ops-file `linear(input_, output_size, scope)` helper creating `Matrix` / `bias` with
`tf.get_variable` and `tf.random_normal_initializer(stddev=0.02)`, `lrelu` via `tf.maximum`; the
discriminator built twice under `tf.variable_scope("discriminator", reuse=...)`; the generator
built a second time with `reuse=True` for the sampling run; the variables split by name from
`tf.trainable_variables()` (`'d_' in var.name`, `'g_' in var.name`) as each optimizer's
`var_list`; two `tf.train.AdamOptimizer(beta1=0.5)` under
`tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`; the generator updated twice
per discriminator update; a fixed `sample_z` drawn once and fed to the sampling run at the end.
Noise comes from a seeded NumPy `RandomState` (`np.random.uniform` style), the initial weights
from `tf.set_random_seed`.
"""
from __future__ import print_function

import numpy as np
import tensorflow as tf

BATCH_SIZE = 32
Z_DIM = 4
EPOCHS = 3
LEARNING_RATE = 0.002
BETA1 = 0.5

tf.set_random_seed(23)
rng = np.random.RandomState(23)

# Real data: a ring of eight Gaussian modes (the classic 2-D GAN toy problem).
angles = rng.randint(0, 8, size=512) * (2.0 * np.pi / 8.0)
data_X = np.stack([np.cos(angles), np.sin(angles)], axis=1) * 2.0 + rng.normal(0.0, 0.05, size=(512, 2))
data_X = data_X.astype(np.float32)
num_batches = len(data_X) // BATCH_SIZE


def lrelu(x, leak=0.2, name="lrelu"):
    return tf.maximum(x, leak * x)


def linear(input_, output_size, scope=None, stddev=0.02, bias_start=0.0):
    shape = input_.get_shape().as_list()
    with tf.variable_scope(scope or "Linear"):
        matrix = tf.get_variable("Matrix", [shape[1], output_size], tf.float32,
                                 tf.random_normal_initializer(stddev=stddev))
        bias = tf.get_variable("bias", [output_size], initializer=tf.constant_initializer(bias_start))
        return tf.matmul(input_, matrix) + bias


def discriminator(x, is_training=True, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        net = lrelu(linear(x, 32, scope='d_fc1'))
        net = lrelu(linear(net, 32, scope='d_fc2'))
        out_logit = linear(net, 1, scope='d_fc3')
        out = tf.nn.sigmoid(out_logit)
        return out, out_logit, net


def generator(z, is_training=True, reuse=False):
    with tf.variable_scope("generator", reuse=reuse):
        net = tf.nn.relu(linear(z, 32, scope='g_fc1'))
        net = tf.nn.relu(linear(net, 32, scope='g_fc2'))
        out = linear(net, 2, scope='g_fc3')
        return out


# some placeholders
inputs = tf.placeholder(tf.float32, [BATCH_SIZE, 2], name='real_points')
z = tf.placeholder(tf.float32, [None, Z_DIM], name='z')

# output of D for real images
D_real, D_real_logits, _ = discriminator(inputs, is_training=True, reuse=False)

# output of D for fake images
G = generator(z, is_training=True, reuse=False)
D_fake, D_fake_logits, _ = discriminator(G, is_training=True, reuse=True)

# get loss for discriminator
d_loss_real = tf.reduce_mean(
    tf.nn.sigmoid_cross_entropy_with_logits(logits=D_real_logits, labels=tf.ones_like(D_real)))
d_loss_fake = tf.reduce_mean(
    tf.nn.sigmoid_cross_entropy_with_logits(logits=D_fake_logits, labels=tf.zeros_like(D_fake)))
d_loss = d_loss_real + d_loss_fake

# get loss for generator
g_loss = tf.reduce_mean(
    tf.nn.sigmoid_cross_entropy_with_logits(logits=D_fake_logits, labels=tf.ones_like(D_fake)))

""" Training """
# divide trainable variables into a group for D and a group for G
t_vars = tf.trainable_variables()
d_vars = [var for var in t_vars if 'd_' in var.name]
g_vars = [var for var in t_vars if 'g_' in var.name]

# optimizers
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    d_optim = tf.train.AdamOptimizer(LEARNING_RATE, beta1=BETA1) \
        .minimize(d_loss, var_list=d_vars)
    g_optim = tf.train.AdamOptimizer(LEARNING_RATE * 5, beta1=BETA1) \
        .minimize(g_loss, var_list=g_vars)

"""" Testing """
# for test
fake_points = generator(z, is_training=False, reuse=True)

# graph inputs for visualize training results
sample_z = rng.uniform(-1, 1, size=(8, Z_DIM)).astype(np.float32)

with tf.Session() as sess:
    tf.global_variables_initializer().run()
    print("RESULT num_d_vars %d" % len(d_vars))
    print("RESULT num_g_vars %d" % len(g_vars))
    for epoch in range(EPOCHS):
        for idx in range(num_batches):
            batch_points = data_X[idx * BATCH_SIZE:(idx + 1) * BATCH_SIZE]
            batch_z = rng.uniform(-1, 1, [BATCH_SIZE, Z_DIM]).astype(np.float32)

            # update D network
            _, D_loss = sess.run([d_optim, d_loss], feed_dict={inputs: batch_points, z: batch_z})

            # update G network (twice, to keep D from winning too early)
            _, G_loss = sess.run([g_optim, g_loss], feed_dict={z: batch_z})
            _, G_loss = sess.run([g_optim, g_loss], feed_dict={z: batch_z})

        print("Epoch: [%2d] d_loss: %.8f, g_loss: %.8f" % (epoch, D_loss, G_loss))
        print("RESULT d_loss_epoch%d %r" % (epoch, float(D_loss)))
        print("RESULT g_loss_epoch%d %r" % (epoch, float(G_loss)))

    samples = sess.run(fake_points, feed_dict={z: sample_z})
    print("RESULT sample_radius_mean %r" % float(np.mean(np.linalg.norm(samples, axis=1))))
    print("RESULT samples %s" % [float(v) for v in samples[:2].ravel()])
