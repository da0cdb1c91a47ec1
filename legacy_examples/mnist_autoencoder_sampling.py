"""The wiseodd/generative-models training-loop shape, with a plain autoencoder.

A tiny synthetic MNIST is written to a temporary folder and read with the tutorial loader
(`input_data.read_data_sets`). The model is built from `tf.Variable` weights with xavier-style
initialisers, as those scripts build theirs.

The loop runs `for it in range(...)` and does, at each iteration:
- draws its minibatch with `X_mb, _ = mnist.train.next_batch(mb_size)`;
- runs one solver step;
- every `display` iterations, prints the loss and decodes samples from `np.random.randn` noise.

That noise comes from NumPy's global random state, which the loader's shuffles also draw from.
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
iterations = 400
display = 100


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


X = tf.placeholder(tf.float32, shape=[None, X_dim])
z = tf.placeholder(tf.float32, shape=[None, z_dim])

E_W1 = tf.Variable(xavier_init([X_dim, h_dim]))
E_b1 = tf.Variable(tf.zeros(shape=[h_dim]))
E_W2 = tf.Variable(xavier_init([h_dim, z_dim]))
E_b2 = tf.Variable(tf.zeros(shape=[z_dim]))

D_W1 = tf.Variable(xavier_init([z_dim, h_dim]))
D_b1 = tf.Variable(tf.zeros(shape=[h_dim]))
D_W2 = tf.Variable(xavier_init([h_dim, X_dim]))
D_b2 = tf.Variable(tf.zeros(shape=[X_dim]))


def encode(x):
    h = tf.nn.relu(tf.matmul(x, E_W1) + E_b1)
    return tf.matmul(h, E_W2) + E_b2


def decode(code):
    h = tf.nn.relu(tf.matmul(code, D_W1) + D_b1)
    return tf.nn.sigmoid(tf.matmul(h, D_W2) + D_b2)


X_recon = decode(encode(X))
X_samples = decode(z)
recon_loss = tf.reduce_mean(tf.reduce_sum(tf.square(X_recon - X), 1))
solver = tf.train.AdamOptimizer(learning_rate=0.002).minimize(recon_loss)

sess = tf.Session()
sess.run(tf.global_variables_initializer())

np.random.seed(7)
for it in range(iterations):
    X_mb, _ = mnist.train.next_batch(mb_size)

    _, loss = sess.run([solver, recon_loss], feed_dict={X: X_mb})

    if it % display == 0:
        print('Iter: {}'.format(it))
        print('Loss: {:.4}'.format(loss))
        samples = sess.run(X_samples, feed_dict={z: np.random.randn(16, z_dim)})
        report("loss_%d" % it, loss)
        report("sample_mean_%d" % it, samples.mean())

report("final_loss", loss)
report("epochs_completed", mnist.train.epochs_completed)
