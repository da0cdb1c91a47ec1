"""The MNIST GAN shape of many tutorials: `generator(z)` and `discriminator(x)` create their weights
with `tf.get_variable`, sized by their input's static shape; the discriminator is built inside
`with tf.variable_scope("D") as scope:`, once on real data and, after `scope.reuse_variables()`, once
on the generator's samples with the same weights. Each network's variables are picked out of
`tf.trainable_variables()` by name, for its own Adam.

Seeded initial weights, data and noise, so the migrated program must print the same numbers.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 30
BATCH = 16

rng = np.random.RandomState(5)
real_data = (rng.randn(256, 8) * 0.5 + 1.0).astype(np.float32)
noise_data = rng.randn(256, 4).astype(np.float32)


def seeded(rows, columns, seed):
    return np.random.RandomState(seed).normal(0.0, 0.2, size=(rows, columns)).astype(np.float32)


def generator(z):
    w0 = tf.get_variable("G_w0", [z.get_shape()[1], 16], initializer=tf.constant_initializer(seeded(4, 16, 1)))
    b0 = tf.get_variable("G_b0", [16], initializer=tf.constant_initializer(0.))
    h0 = tf.nn.relu(tf.matmul(z, w0) + b0)
    w1 = tf.get_variable("G_w1", [h0.get_shape()[1], 8], initializer=tf.constant_initializer(seeded(16, 8, 2)))
    b1 = tf.get_variable("G_b1", [8], initializer=tf.constant_initializer(0.))
    return tf.matmul(h0, w1) + b1


def discriminator(x):
    w0 = tf.get_variable("D_w0", [x.get_shape()[1], 16], initializer=tf.constant_initializer(seeded(8, 16, 3)))
    b0 = tf.get_variable("D_b0", [16], initializer=tf.constant_initializer(0.))
    h0 = tf.nn.leaky_relu(tf.matmul(x, w0) + b0)
    w1 = tf.get_variable("D_w1", [h0.get_shape()[1], 1], initializer=tf.constant_initializer(seeded(16, 1, 4)))
    b1 = tf.get_variable("D_b1", [1], initializer=tf.constant_initializer(0.))
    return tf.nn.sigmoid(tf.matmul(h0, w1) + b1)


with tf.variable_scope("G"):
    z = tf.placeholder(tf.float32, shape=(None, 4))
    G_z = generator(z)

with tf.variable_scope("D") as scope:
    x = tf.placeholder(tf.float32, shape=(None, 8))
    D_real = discriminator(x)
    scope.reuse_variables()
    D_fake = discriminator(G_z)

eps = 1e-2
D_loss = tf.reduce_mean(-tf.log(D_real + eps) - tf.log(1 - D_fake + eps))
G_loss = tf.reduce_mean(-tf.log(D_fake + eps))

t_vars = tf.trainable_variables()
D_vars = [var for var in t_vars if "D_" in var.name]
G_vars = [var for var in t_vars if "G_" in var.name]

D_optim = tf.train.AdamOptimizer(0.01).minimize(D_loss, var_list=D_vars)
G_optim = tf.train.AdamOptimizer(0.01).minimize(G_loss, var_list=G_vars)

sess = tf.InteractiveSession()
tf.global_variables_initializer().run()

d_losses, g_losses = [], []
for step in range(STEPS):
    start = (step * BATCH) % 256
    x_ = real_data[start:start + BATCH]
    z_ = noise_data[start:start + BATCH]
    loss_d_, _ = sess.run([D_loss, D_optim], {x: x_, z: z_})
    loss_g_, _ = sess.run([G_loss, G_optim], {z: z_})
    d_losses.append(round(float(loss_d_), 6))
    g_losses.append(round(float(loss_g_), 6))

print("RESULT d_losses %s" % json.dumps(d_losses[::5]))
print("RESULT g_losses %s" % json.dumps(g_losses[::5]))
samples = sess.run(G_z, {z: noise_data[:4]})
print("RESULT sample_mean %s" % json.dumps(round(float(samples.mean()), 6)))
