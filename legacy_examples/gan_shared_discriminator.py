"""A tiny GAN on 1-D data, TF1 style: the discriminator is built twice under
`tf.variable_scope("discriminator", reuse=...)` (real and fake inputs share its weights), and the
generator and discriminator each train their own variables (`var_list`) with their own Adam.

Seeded weights and noise; a few alternating steps; the losses and the generated sample mean are
printed.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 20
BATCH = 32

rng = np.random.RandomState(41)
real_data = (rng.randn(640, 1) * 0.5 + 2.0).astype(np.float32)
noise_data = rng.randn(640, 4).astype(np.float32)
g_init = (rng.randn(4, 1) * 0.3).astype(np.float32)
d_init = (rng.randn(1, 8) * 0.3).astype(np.float32)
d_out_init = (rng.randn(8, 1) * 0.3).astype(np.float32)


def generator(z):
    with tf.variable_scope("generator"):
        weights = tf.get_variable("weights", initializer=g_init)
        bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
        return tf.matmul(z, weights) + bias


def discriminator(x, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        hidden_weights = tf.get_variable("hidden", initializer=d_init)
        output_weights = tf.get_variable("output", initializer=d_out_init)
        return tf.matmul(tf.nn.relu(tf.matmul(x, hidden_weights)), output_weights)


real = tf.placeholder(tf.float32, [None, 1])
noise = tf.placeholder(tf.float32, [None, 4])
fake = generator(noise)
real_logits = discriminator(real)
fake_logits = discriminator(fake, reuse=True)

d_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones_like(real_logits), logits=real_logits)
                        + tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros_like(fake_logits), logits=fake_logits))
g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones_like(fake_logits), logits=fake_logits))
d_vars = tf.trainable_variables(scope="discriminator")
g_vars = tf.trainable_variables(scope="generator")
d_train = tf.train.AdamOptimizer(0.01).minimize(d_loss, var_list=d_vars)
g_train = tf.train.AdamOptimizer(0.01).minimize(g_loss, var_list=g_vars)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    d_losses, g_losses = [], []
    for step in range(STEPS):
        batch = slice(step * BATCH, (step + 1) * BATCH)
        _, d_value = sess.run([d_train, d_loss], feed_dict={real: real_data[batch], noise: noise_data[batch]})
        _, g_value = sess.run([g_train, g_loss], feed_dict={noise: noise_data[batch]})
        d_losses.append(float(d_value))
        g_losses.append(float(g_value))
    sample_mean = sess.run(tf.reduce_mean(fake), feed_dict={noise: noise_data[:200]})

print("RESULT d_losses %s" % json.dumps(d_losses[::5]))
print("RESULT g_losses %s" % json.dumps(g_losses[::5]))
print("RESULT sample_mean %r" % float(sample_mean))
