"""A Wasserstein GAN in the shape of the tutorial WGANs of 2017: critic and generator weights in
module-level `tf.Variable`s from seeded NumPy, `theta_D` / `theta_G` lists, `tf.train.RMSPropOptimizer`
solvers (the critic's minimising the negated Wasserstein estimate), the critic's weights clipped by
`[p.assign(tf.clip_by_value(p, -c, c)) for p in theta_D]` fetched in the same `sess.run` as its
solver, and five critic steps per generator step, each on a Python minibatch and fresh noise.

Seeded data and noise; a few tens of iterations; the critic and generator losses, the largest critic
weight and the generated sample mean are printed.
"""
import json

import numpy as np
import tensorflow as tf

ITERATIONS = 20
CRITIC_STEPS = 5
BATCH = 16
Z_DIM = 4
CLIP = 0.05

rng = np.random.RandomState(11)
real_data = (rng.randn(512, 2) * 0.5 + [2.0, -1.0]).astype(np.float32)


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
z = tf.placeholder(tf.float32, shape=[None, Z_DIM])


def sample_z(m, n):
    return rng.uniform(-1., 1., size=[m, n]).astype(np.float32)


def next_batch(size):
    return real_data[rng.randint(0, len(real_data), size=size)]


def generator(z):
    G_h1 = tf.nn.relu(tf.matmul(z, G_W1) + G_b1)
    return tf.matmul(G_h1, G_W2) + G_b2


def critic(x):
    D_h1 = tf.nn.relu(tf.matmul(x, D_W1) + D_b1)
    return tf.matmul(D_h1, D_W2) + D_b2


G_sample = generator(z)
D_real = critic(X)
D_fake = critic(G_sample)

D_loss = tf.reduce_mean(D_real) - tf.reduce_mean(D_fake)
G_loss = -tf.reduce_mean(D_fake)

D_solver = (tf.train.RMSPropOptimizer(learning_rate=5e-3)
            .minimize(-D_loss, var_list=theta_D))
G_solver = (tf.train.RMSPropOptimizer(learning_rate=5e-3)
            .minimize(G_loss, var_list=theta_G))

clip_D = [p.assign(tf.clip_by_value(p, -CLIP, CLIP)) for p in theta_D]

sess = tf.Session()
sess.run(tf.global_variables_initializer())

d_losses, g_losses = [], []
for it in range(ITERATIONS):
    for _ in range(CRITIC_STEPS):
        X_mb = next_batch(BATCH)
        _, D_loss_curr, _ = sess.run(
            [D_solver, D_loss, clip_D],
            feed_dict={X: X_mb, z: sample_z(BATCH, Z_DIM)}
        )

    _, G_loss_curr = sess.run(
        [G_solver, G_loss],
        feed_dict={z: sample_z(BATCH, Z_DIM)}
    )

    if it % 5 == 0:
        d_losses.append(float(D_loss_curr))
        g_losses.append(float(G_loss_curr))

samples = sess.run(G_sample, feed_dict={z: sample_z(200, Z_DIM)})
print("RESULT d_losses %s" % json.dumps(d_losses))
print("RESULT g_losses %s" % json.dumps(g_losses))
print("RESULT critic_max_weight %s" % json.dumps(float(np.abs(sess.run(D_W1)).max())))
print("RESULT sample_mean %s" % json.dumps([float(v) for v in samples.mean(axis=0)]))
