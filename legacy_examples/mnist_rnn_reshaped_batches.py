"""The aymericdamien TensorFlow-Examples `recurrent_network.py` shape, on a tiny synthetic MNIST.

A tiny synthetic MNIST is written to a temporary folder and read with the tutorial loader
(`input_data.read_data_sets`). Each image is read as a sequence of its rows: the placeholder is
`[None, timesteps, num_input]`, `tf.unstack` splits it into steps for `tf.nn.static_rnn` over a
`BasicLSTMCell`, and a dense layer of `tf.Variable` weights reads the last output. Adam trains it.

The loop draws its minibatch with `batch_x, batch_y = mnist.train.next_batch(batch_size)`, then
reshapes it into sequences, `batch_x = batch_x.reshape((batch_size, timesteps, num_input))`,
before feeding it; every `display_step` steps it prints the minibatch's loss and accuracy.
"""
import gzip
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

learning_rate = 0.01
training_steps = 300
batch_size = 16
display_step = 100

num_input = 28
timesteps = 28
num_hidden = 16
num_classes = 10


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

X = tf.placeholder("float", [None, timesteps, num_input])
Y = tf.placeholder("float", [None, num_classes])

weights = {'out': tf.Variable(tf.random_normal([num_hidden, num_classes]))}
biases = {'out': tf.Variable(tf.random_normal([num_classes]))}


def RNN(x, weights, biases):
    x = tf.unstack(x, timesteps, 1)
    lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
    outputs, states = tf.nn.static_rnn(lstm_cell, x, dtype=tf.float32)
    return tf.matmul(outputs[-1], weights['out']) + biases['out']


logits = RNN(X, weights, biases)
prediction = tf.nn.softmax(logits)

loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)

correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for step in range(1, training_steps + 1):
        batch_x, batch_y = mnist.train.next_batch(batch_size)
        batch_x = batch_x.reshape((batch_size, timesteps, num_input))
        sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
        if step % display_step == 0 or step == 1:
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y})
            print("Step " + str(step) + ", Minibatch Loss= " + "{:.4f}".format(loss) +
                  ", Training Accuracy= " + "{:.3f}".format(acc))
            report("loss_%d" % step, loss)
            report("accuracy_%d" % step, acc)
    test_data = mnist.test.images[:64].reshape((-1, timesteps, num_input))
    test_label = mnist.test.labels[:64]
    report("test_accuracy", sess.run(accuracy, feed_dict={X: test_data, Y: test_label}))
