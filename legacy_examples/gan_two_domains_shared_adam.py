"""A DiscoGAN in the shape of the tutorial GANs of 2017: two domains of 2-D points, generators A->B
and B->A and a discriminator per domain, all weights in module-level `tf.Variable`s from seeded NumPy
collected in `theta_D` / `theta_G`; the discriminator loss and the generator loss (adversarial plus
reconstruction through the other generator) both minimised by one `tf.train.AdamOptimizer`, whose
beta powers TF1 shares between the two train ops; minibatches sampled from each domain in Python.

Seeded data; a few tens of iterations; the losses and the mean of the mapped points are printed.
"""
import json

import numpy as np
import tensorflow as tf

ITERATIONS = 30
BATCH = 16
HIDDEN = 16

rng = np.random.RandomState(5)
domain_A = (rng.randn(256, 2) * 0.3 + [1.0, 1.0]).astype(np.float32)
domain_B = (rng.randn(256, 2) * 0.3 + [-1.0, 0.5]).astype(np.float32)


def xavier(shape):
    return (rng.randn(*shape) / np.sqrt(shape[0] / 2.0)).astype(np.float32)


X_A = tf.placeholder(tf.float32, shape=[None, 2])
X_B = tf.placeholder(tf.float32, shape=[None, 2])

D_A_W1 = tf.Variable(xavier([2, HIDDEN]))
D_A_b1 = tf.Variable(tf.zeros(shape=[HIDDEN]))
D_A_W2 = tf.Variable(xavier([HIDDEN, 1]))
D_A_b2 = tf.Variable(tf.zeros(shape=[1]))
D_B_W1 = tf.Variable(xavier([2, HIDDEN]))
D_B_b1 = tf.Variable(tf.zeros(shape=[HIDDEN]))
D_B_W2 = tf.Variable(xavier([HIDDEN, 1]))
D_B_b2 = tf.Variable(tf.zeros(shape=[1]))
G_AB_W1 = tf.Variable(xavier([2, HIDDEN]))
G_AB_b1 = tf.Variable(tf.zeros(shape=[HIDDEN]))
G_AB_W2 = tf.Variable(xavier([HIDDEN, 2]))
G_AB_b2 = tf.Variable(tf.zeros(shape=[2]))
G_BA_W1 = tf.Variable(xavier([2, HIDDEN]))
G_BA_b1 = tf.Variable(tf.zeros(shape=[HIDDEN]))
G_BA_W2 = tf.Variable(xavier([HIDDEN, 2]))
G_BA_b2 = tf.Variable(tf.zeros(shape=[2]))

theta_D = [D_A_W1, D_A_W2, D_A_b1, D_A_b2, D_B_W1, D_B_W2, D_B_b1, D_B_b2]
theta_G = [G_AB_W1, G_AB_W2, G_AB_b1, G_AB_b2, G_BA_W1, G_BA_W2, G_BA_b1, G_BA_b2]


def D_A(X):
    h = tf.nn.relu(tf.matmul(X, D_A_W1) + D_A_b1)
    return tf.nn.sigmoid(tf.matmul(h, D_A_W2) + D_A_b2)


def D_B(X):
    h = tf.nn.relu(tf.matmul(X, D_B_W1) + D_B_b1)
    return tf.nn.sigmoid(tf.matmul(h, D_B_W2) + D_B_b2)


def G_AB(X):
    h = tf.nn.relu(tf.matmul(X, G_AB_W1) + G_AB_b1)
    return tf.matmul(h, G_AB_W2) + G_AB_b2


def G_BA(X):
    h = tf.nn.relu(tf.matmul(X, G_BA_W1) + G_BA_b1)
    return tf.matmul(h, G_BA_W2) + G_BA_b2


def log(x):
    return tf.log(x + 1e-8)


def sample_X(X, size):
    start_idx = rng.randint(0, X.shape[0] - size)
    return X[start_idx:start_idx + size]


X_BA = G_BA(X_B)
X_AB = G_AB(X_A)
X_ABA = G_BA(X_AB)
X_BAB = G_AB(X_BA)

D_A_real = D_A(X_A)
D_A_fake = D_A(X_BA)
D_B_real = D_B(X_B)
D_B_fake = D_B(X_AB)

L_D_A = -tf.reduce_mean(log(D_A_real) + log(1 - D_A_fake))
L_D_B = -tf.reduce_mean(log(D_B_real) + log(1 - D_B_fake))
D_loss = L_D_A + L_D_B

L_G_AB = -tf.reduce_mean(log(D_B_fake)) + tf.reduce_mean(tf.reduce_sum((X_A - X_ABA) ** 2, 1))
L_G_BA = -tf.reduce_mean(log(D_A_fake)) + tf.reduce_mean(tf.reduce_sum((X_B - X_BAB) ** 2, 1))
G_loss = L_G_AB + L_G_BA

solver = tf.train.AdamOptimizer(learning_rate=0.01)
D_solver = solver.minimize(D_loss, var_list=theta_D)
G_solver = solver.minimize(G_loss, var_list=theta_G)

sess = tf.Session()
sess.run(tf.global_variables_initializer())

d_losses, g_losses = [], []
for it in range(ITERATIONS):
    X_A_mb = sample_X(domain_A, BATCH)
    X_B_mb = sample_X(domain_B, BATCH)

    _, D_loss_curr = sess.run([D_solver, D_loss], feed_dict={X_A: X_A_mb, X_B: X_B_mb})
    _, G_loss_curr = sess.run([G_solver, G_loss], feed_dict={X_A: X_A_mb, X_B: X_B_mb})

    if it % 10 == 0:
        d_losses.append(float(D_loss_curr))
        g_losses.append(float(G_loss_curr))

mapped = sess.run(X_AB, feed_dict={X_A: domain_A})
print("RESULT d_losses %s" % json.dumps(d_losses))
print("RESULT g_losses %s" % json.dumps(g_losses))
print("RESULT mapped_mean %s" % json.dumps([float(v) for v in mapped.mean(axis=0)]))
