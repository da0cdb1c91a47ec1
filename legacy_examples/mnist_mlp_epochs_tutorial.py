"""The aymericdamien TensorFlow-Examples `multilayer_perceptron.py` shape, copied into countless repos.

Parameters at the top, `input_data.read_data_sets(..., one_hot=True)` (a tiny synthetic MNIST written
to a temporary folder first, the tutorial loader reading it as it read the real files), weights and
biases in dicts of `tf.Variable(tf.random_normal(...))`, a `multilayer_perceptron(x)` model function,
`tf.nn.softmax_cross_entropy_with_logits` (v1) and Adam; `with tf.Session() as sess:` runs
`training_epochs` epochs of `total_batch = int(mnist.train.num_examples / batch_size)` minibatches from
`mnist.train.next_batch`, averaging the cost with `avg_cost += c / total_batch` and printing it every
`display_step` epochs; the test accuracy is read with `accuracy.eval({X: ..., Y: ...})`.
"""
import gzip
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

# Parameters
learning_rate = 0.01
training_epochs = 6
batch_size = 50
display_step = 2

# Network Parameters
n_hidden_1 = 32  # 1st layer number of neurons
n_hidden_2 = 32  # 2nd layer number of neurons
n_input = 784  # MNIST data input (img shape: 28*28)
n_classes = 10  # MNIST total classes (0-9 digits)


def report(key, value):
    print("RESULT %s %r" % (key, float(value)))


def write_synthetic_mnist(folder, train=350, test=150, seed=1):
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


tf.set_random_seed(1)
with tempfile.TemporaryDirectory() as data_dir:
    write_synthetic_mnist(data_dir)
    mnist = input_data.read_data_sets(data_dir, one_hot=True, validation_size=50)

# tf Graph input
X = tf.placeholder("float", [None, n_input])
Y = tf.placeholder("float", [None, n_classes])

# Store layers weight & bias
weights = {
    'h1': tf.Variable(tf.random_normal([n_input, n_hidden_1], stddev=0.1)),
    'h2': tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2], stddev=0.1)),
    'out': tf.Variable(tf.random_normal([n_hidden_2, n_classes], stddev=0.1))
}
biases = {
    'b1': tf.Variable(tf.random_normal([n_hidden_1], stddev=0.1)),
    'b2': tf.Variable(tf.random_normal([n_hidden_2], stddev=0.1)),
    'out': tf.Variable(tf.random_normal([n_classes], stddev=0.1))
}


# Create model
def multilayer_perceptron(x):
    # Hidden fully connected layer with 32 neurons
    layer_1 = tf.nn.relu(tf.add(tf.matmul(x, weights['h1']), biases['b1']))
    # Hidden fully connected layer with 32 neurons
    layer_2 = tf.nn.relu(tf.add(tf.matmul(layer_1, weights['h2']), biases['b2']))
    # Output fully connected layer with a neuron for each class
    out_layer = tf.matmul(layer_2, weights['out']) + biases['out']
    return out_layer


# Construct model
logits = multilayer_perceptron(X)

# Define loss and optimizer
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)
# Initializing the variables
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)

    # Training cycle
    for epoch in range(training_epochs):
        avg_cost = 0.
        total_batch = int(mnist.train.num_examples / batch_size)
        # Loop over all batches
        for i in range(total_batch):
            batch_x, batch_y = mnist.train.next_batch(batch_size)
            # Run optimization op (backprop) and cost op (to get loss value)
            _, c = sess.run([train_op, loss_op], feed_dict={X: batch_x, Y: batch_y})
            # Compute average loss
            avg_cost += c / total_batch
        # Display logs per epoch step
        if epoch % display_step == 0:
            print("Epoch:", '%04d' % (epoch + 1), "cost={:.9f}".format(avg_cost))
        report("avg_cost_%d" % epoch, avg_cost)
    print("Optimization Finished!")

    # Test model
    pred = tf.nn.softmax(logits)  # Apply softmax to logits
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(Y, 1))
    # Calculate accuracy
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    test_accuracy = accuracy.eval({X: mnist.test.images, Y: mnist.test.labels})
    print("Accuracy:", test_accuracy)
    report("test_accuracy", test_accuracy)
