"""A small GAN in the shape of the tutorial GANs of 2016-2017: weights held in module-level
`tf.Variable`s initialised from seeded NumPy, `generator` / `discriminator` functions, a discriminator
and a generator solver each minimising its own loss over its own `var_list` with Adam, and a training
loop that draws each minibatch in Python (`next_batch`) and feeds freshly sampled noise to each
`sess.run`: the discriminator step, then the generator step, every iteration.

Seeded data and noise; a few tens of iterations; the losses and the generated sample mean are printed.
"""
import json

import numpy as np
import tensorflow as tf

ITERATIONS = 40
BATCH = 16
Z_DIM = 4

rng = np.random.RandomState(7)
real_data = (rng.randn(512, 2) * 0.3 + [1.0, -1.0]).astype(np.float32)


def xavier(shape):
    return (rng.randn(*shape) / np.sqrt(shape[0] / 2.0)).astype(np.float32)


D_W1 = tf.Variable(xavier([2, 16]))
D_b1 = tf.Variable(tf.zeros(shape=[16]))
D_W2 = tf.Variable(xavier([16, 1]))
D_b2 = tf.Variable(tf.zeros(shape=[1]))
theta_D = [D_W1, D_W2, D_b1, D_b2]

G_W1 = tf.Variable(xavier([Z_DIM, 16]))
G_b1 = tf.Variable(tf.zeros(shape=[16]))
G_W2 = tf.Variable(xavier([16, 2]))
G_b2 = tf.Variable(tf.zeros(shape=[2]))
theta_G = [G_W1, G_W2, G_b1, G_b2]

X = tf.placeholder(tf.float32, shape=[None, 2])
Z = tf.placeholder(tf.float32, shape=[None, Z_DIM])


def sample_Z(m, n):
    return rng.uniform(-1., 1., size=[m, n]).astype(np.float32)


def next_batch(size):
    return real_data[rng.randint(0, len(real_data), size=size)]


def generator(z):
    G_h1 = tf.nn.relu(tf.matmul(z, G_W1) + G_b1)
    return tf.matmul(G_h1, G_W2) + G_b2


def discriminator(x):
    D_h1 = tf.nn.relu(tf.matmul(x, D_W1) + D_b1)
    return tf.matmul(D_h1, D_W2) + D_b2


G_sample = generator(Z)
D_logit_real = discriminator(X)
D_logit_fake = discriminator(G_sample)

D_loss_real = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_logit_real, labels=tf.ones_like(D_logit_real)))
D_loss_fake = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_logit_fake, labels=tf.zeros_like(D_logit_fake)))
D_loss = D_loss_real + D_loss_fake
G_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_logit_fake, labels=tf.ones_like(D_logit_fake)))

D_solver = tf.train.AdamOptimizer(0.01).minimize(D_loss, var_list=theta_D)
G_solver = tf.train.AdamOptimizer(0.01).minimize(G_loss, var_list=theta_G)

sess = tf.Session()
sess.run(tf.global_variables_initializer())

d_losses, g_losses = [], []
for it in range(ITERATIONS):
    X_mb = next_batch(BATCH)

    _, D_loss_curr = sess.run([D_solver, D_loss], feed_dict={X: X_mb, Z: sample_Z(BATCH, Z_DIM)})
    _, G_loss_curr = sess.run([G_solver, G_loss], feed_dict={Z: sample_Z(BATCH, Z_DIM)})

    if it % 10 == 0:
        d_losses.append(float(D_loss_curr))
        g_losses.append(float(G_loss_curr))

samples = sess.run(G_sample, feed_dict={Z: sample_Z(200, Z_DIM)})
print("RESULT d_losses %s" % json.dumps(d_losses))
print("RESULT g_losses %s" % json.dumps(g_losses))
print("RESULT sample_mean %s" % json.dumps([float(v) for v in samples.mean(axis=0)]))
