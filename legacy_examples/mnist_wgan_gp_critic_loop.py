"""The wiseodd/generative-models WGAN-GP training loop, on a tiny synthetic MNIST.

A tiny synthetic MNIST is written to a temporary folder and read with the tutorial loader
(`input_data.read_data_sets`). The critic and generator are built from `tf.Variable` weights with
xavier-style initialisers; the critic's loss carries the gradient penalty, taken by `tf.gradients`
at points drawn between real and generated images with `tf.random_uniform`. Each is trained by its
own Adam (`beta1=0.5`) on its own variables.

Each iteration of `for it in range(...)` trains the critic `n_critic` times in an inner loop,
`for _ in range(n_critic):`, whose body rebinds `_` with the labels it does not use
(`X_mb, _ = mnist.train.next_batch(mb_size)`) and feeds noise drawn inline; then it trains the
generator once, and every `display` iterations prints both losses and generates samples.
"""
import gzip
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

mb_size = 32
z_dim = 8
h_dim = 32
lam = 10
n_critic = 5
iterations = 120
display = 40


def report(key, value):
    print("RESULT %s %r" % (key, float(value)))


def write_synthetic_mnist(folder, train=300, test=100, seed=3):
    """MNIST's file format (gzipped idx, big-endian counts): a faint bar whose row is the digit."""
    rng = np.random.RandomState(seed)
    for prefix, count in (("train", train), ("t10k", test)):
        labels = rng.randint(0, 10, size=count).astype(np.uint8)
        images = rng.randint(0, 200, size=(count, 28, 28)).astype(np.uint8)
        for image, label in zip(images, labels):
            image[4 + 2 * label, 2:26] = 220
        with gzip.open(os.path.join(folder, prefix + "-images-idx3-ubyte.gz"), "wb") as stream:
            stream.write(np.array([2051, count, 28, 28], dtype=">u4").tobytes() + images.tobytes())
        with gzip.open(os.path.join(folder, prefix + "-labels-idx1-ubyte.gz"), "wb") as stream:
            stream.write(np.array([2049, count], dtype=">u4").tobytes() + labels.tobytes())


with tempfile.TemporaryDirectory() as data_dir:
    write_synthetic_mnist(data_dir)
    mnist = input_data.read_data_sets(data_dir, one_hot=True, validation_size=20, seed=5)
X_dim = mnist.train.images.shape[1]


def xavier_init(size):
    in_dim = size[0]
    xavier_stddev = 1. / tf.sqrt(in_dim / 2.)
    return tf.random_normal(shape=size, stddev=xavier_stddev)


def sample_z(m, n):
    return np.random.uniform(-1., 1., size=[m, n])


X = tf.placeholder(tf.float32, shape=[None, X_dim])
z = tf.placeholder(tf.float32, shape=[None, z_dim])

D_W1 = tf.Variable(xavier_init([X_dim, h_dim]))
D_b1 = tf.Variable(tf.zeros(shape=[h_dim]))
D_W2 = tf.Variable(xavier_init([h_dim, 1]))
D_b2 = tf.Variable(tf.zeros(shape=[1]))
theta_D = [D_W1, D_W2, D_b1, D_b2]

G_W1 = tf.Variable(xavier_init([z_dim, h_dim]))
G_b1 = tf.Variable(tf.zeros(shape=[h_dim]))
G_W2 = tf.Variable(xavier_init([h_dim, X_dim]))
G_b2 = tf.Variable(tf.zeros(shape=[X_dim]))
theta_G = [G_W1, G_W2, G_b1, G_b2]


def G(z):
    G_h1 = tf.nn.relu(tf.matmul(z, G_W1) + G_b1)
    return tf.nn.sigmoid(tf.matmul(G_h1, G_W2) + G_b2)


def D(X):
    D_h1 = tf.nn.relu(tf.matmul(X, D_W1) + D_b1)
    return tf.matmul(D_h1, D_W2) + D_b2


G_sample = G(z)
D_real = D(X)
D_fake = D(G_sample)

eps = tf.random_uniform([mb_size, 1], minval=0., maxval=1.)
X_inter = eps * X + (1. - eps) * G_sample
grad = tf.gradients(D(X_inter), [X_inter])[0]
grad_norm = tf.sqrt(tf.reduce_sum(grad ** 2, axis=1))
grad_pen = lam * tf.reduce_mean((grad_norm - 1) ** 2)

D_loss = tf.reduce_mean(D_fake) - tf.reduce_mean(D_real) + grad_pen
G_loss = -tf.reduce_mean(D_fake)

D_solver = tf.train.AdamOptimizer(learning_rate=1e-3, beta1=0.5).minimize(D_loss, var_list=theta_D)
G_solver = tf.train.AdamOptimizer(learning_rate=1e-3, beta1=0.5).minimize(G_loss, var_list=theta_G)

sess = tf.Session()
sess.run(tf.global_variables_initializer())

np.random.seed(11)
for it in range(iterations):
    for _ in range(n_critic):
        X_mb, _ = mnist.train.next_batch(mb_size)
        _, D_loss_curr = sess.run([D_solver, D_loss], feed_dict={X: X_mb, z: sample_z(mb_size, z_dim)})

    _, G_loss_curr = sess.run([G_solver, G_loss], feed_dict={z: sample_z(mb_size, z_dim)})

    if it % display == 0:
        print('Iter: {}; D loss: {:.4}; G_loss: {:.4}'.format(it, D_loss_curr, G_loss_curr))
        samples = sess.run(G_sample, feed_dict={z: sample_z(16, z_dim)})
        report("D_loss_%d" % it, D_loss_curr)
        report("G_loss_%d" % it, G_loss_curr)
        report("sample_mean_%d" % it, samples.mean())

report("final_D_loss", D_loss_curr)
report("final_G_loss", G_loss_curr)
report("epochs_completed", mnist.train.epochs_completed)
