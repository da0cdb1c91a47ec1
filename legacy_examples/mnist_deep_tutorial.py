"""TensorFlow's "Deep MNIST for Experts" tutorial, the most copied TF1 program, as repositories hold it.

`input_data.read_data_sets` reads MNIST's four idx files from a folder (it would download them; here
a tiny synthetic MNIST, a bright bar whose place is the digit over seeded noise, is written to a
temporary one first), `mnist.train.next_batch(50)` feeds each step, the model comes from the tutorial's
`weight_variable` / `bias_variable` / `conv2d` / `max_pool_2x2` helpers, and an `InteractiveSession`
runs it through `train_step.run(feed_dict=...)` and `accuracy.eval(feed_dict=...)`. Evaluations
feed `keep_prob: 1.0`; training feeds 0.5 only with `--dropout`, so that the default run is
deterministic end to end.
"""
import argparse
import gzip
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

TRAIN_IMAGES, TEST_IMAGES = 400, 200
STEPS = 60


def report(key, value):
    print("RESULT %s %r" % (key, float(value)))


def write_synthetic_mnist(folder, seed=0):
    """MNIST's file format (gzipped idx, big-endian counts) with learnable images."""
    rng = np.random.RandomState(seed)
    for prefix, count in (("train", TRAIN_IMAGES), ("t10k", TEST_IMAGES)):
        labels = rng.randint(0, 10, size=count).astype(np.uint8)
        images = rng.randint(0, 170, size=(count, 28, 28)).astype(np.uint8)
        for image, label in zip(images, labels):
            image[3 + 2 * label, 4:24] = 230
        with gzip.open(os.path.join(folder, prefix + "-images-idx3-ubyte.gz"), "wb") as stream:
            stream.write(np.array([2051, count, 28, 28], dtype=">u4").tobytes() + images.tobytes())
        with gzip.open(os.path.join(folder, prefix + "-labels-idx1-ubyte.gz"), "wb") as stream:
            stream.write(np.array([2049, count], dtype=">u4").tobytes() + labels.tobytes())


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    initial = tf.constant(0.1, shape=shape)
    return tf.Variable(initial)


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding='SAME')


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')


parser = argparse.ArgumentParser()
parser.add_argument("--dropout", action="store_true", help="train with keep_prob 0.5, as the tutorial does")
args = parser.parse_args()

tf.set_random_seed(0)
with tempfile.TemporaryDirectory() as data_dir:
    write_synthetic_mnist(data_dir)
    mnist = input_data.read_data_sets(data_dir, one_hot=True, validation_size=100)

x = tf.placeholder(tf.float32, shape=[None, 784])
y_ = tf.placeholder(tf.float32, shape=[None, 10])
x_image = tf.reshape(x, [-1, 28, 28, 1])

W_conv1 = weight_variable([5, 5, 1, 8])
b_conv1 = bias_variable([8])
h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
h_pool1 = max_pool_2x2(h_conv1)

W_conv2 = weight_variable([5, 5, 8, 16])
b_conv2 = bias_variable([16])
h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
h_pool2 = max_pool_2x2(h_conv2)

W_fc1 = weight_variable([7 * 7 * 16, 64])
b_fc1 = bias_variable([64])
h_pool2_flat = tf.reshape(h_pool2, [-1, 7 * 7 * 16])
h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)

keep_prob = tf.placeholder(tf.float32)
h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)

W_fc2 = weight_variable([64, 10])
b_fc2 = bias_variable([10])
y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2

cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv))
train_step = tf.train.AdamOptimizer(1e-3).minimize(cross_entropy)
correct_prediction = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

sess = tf.InteractiveSession()
sess.run(tf.global_variables_initializer())
train_keep_prob = 0.5 if args.dropout else 1.0
for i in range(STEPS):
    batch = mnist.train.next_batch(50)
    if i % 20 == 0:
        train_accuracy = accuracy.eval(feed_dict={x: batch[0], y_: batch[1], keep_prob: 1.0})
        print('step %d, training accuracy %g' % (i, train_accuracy))
        report("train_accuracy_%d" % i, train_accuracy)
    train_step.run(feed_dict={x: batch[0], y_: batch[1], keep_prob: train_keep_prob})

test_accuracy = accuracy.eval(feed_dict={x: mnist.test.images, y_: mnist.test.labels, keep_prob: 1.0})
print('test accuracy %g' % test_accuracy)
report("test_accuracy", test_accuracy)
report("test_loss", cross_entropy.eval(feed_dict={x: mnist.test.images, y_: mnist.test.labels, keep_prob: 1.0}))
sess.close()
