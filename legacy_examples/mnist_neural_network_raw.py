"""The aymericdamien TensorFlow-Examples `neural_network_raw.py` shape, copied into countless repos.

Parameters at the top and the tutorial loader (`input_data.read_data_sets(..., one_hot=True)`) on a
tiny synthetic MNIST written to a temporary folder first. Weights and biases live in dicts of
`tf.Variable(tf.random_normal(...))`, with a `neural_net(x)` model function, v1
`softmax_cross_entropy_with_logits` and Adam.

`with tf.Session() as sess:` runs `for step in range(1, num_steps + 1)`. Each step draws
`batch_x, batch_y = mnist.train.next_batch(batch_size)` and runs the train op. Every `display_step`
steps, and at step 1, the loss and accuracy of that minibatch are printed. The test accuracy is
read at the end.
"""
import gzip
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

# Parameters
learning_rate = 0.01
num_steps = 250
batch_size = 32
display_step = 50

# Network Parameters
n_hidden_1 = 32  # 1st layer number of neurons
n_hidden_2 = 32  # 2nd layer number of neurons
num_input = 784  # MNIST data input (img shape: 28*28)
num_classes = 10  # MNIST total classes (0-9 digits)


def report(key, value):
    print("RESULT %s %r" % (key, float(value)))


def write_synthetic_mnist(folder, train=260, test=100, seed=4):
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


tf.set_random_seed(2)
with tempfile.TemporaryDirectory() as data_dir:
    write_synthetic_mnist(data_dir)
    mnist = input_data.read_data_sets(data_dir, one_hot=True, validation_size=20)

# tf Graph input
X = tf.placeholder("float", [None, num_input])
Y = tf.placeholder("float", [None, num_classes])

# Store layers weight & bias
weights = {
    'h1': tf.Variable(tf.random_normal([num_input, n_hidden_1], stddev=0.1)),
    'h2': tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2], stddev=0.1)),
    'out': tf.Variable(tf.random_normal([n_hidden_2, num_classes], stddev=0.1))
}
biases = {
    'b1': tf.Variable(tf.random_normal([n_hidden_1], stddev=0.1)),
    'b2': tf.Variable(tf.random_normal([n_hidden_2], stddev=0.1)),
    'out': tf.Variable(tf.random_normal([num_classes], stddev=0.1))
}


# Create model
def neural_net(x):
    # Hidden fully connected layer with 32 neurons
    layer_1 = tf.add(tf.matmul(x, weights['h1']), biases['b1'])
    # Hidden fully connected layer with 32 neurons
    layer_2 = tf.add(tf.matmul(layer_1, weights['h2']), biases['b2'])
    # Output fully connected layer with a neuron for each class
    out_layer = tf.matmul(layer_2, weights['out']) + biases['out']
    return out_layer


# Construct model
logits = neural_net(X)
prediction = tf.nn.softmax(logits)

# Define loss and optimizer
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)

# Evaluate model
correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

# Initialize the variables (i.e. assign their default value)
init = tf.global_variables_initializer()

# Start training
with tf.Session() as sess:

    # Run the initializer
    sess.run(init)

    for step in range(1, num_steps + 1):
        batch_x, batch_y = mnist.train.next_batch(batch_size)
        # Run optimization op (backprop)
        sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
        if step % display_step == 0 or step == 1:
            # Calculate batch loss and accuracy
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y})
            print("Step " + str(step) + ", Minibatch Loss= " + "{:.4f}".format(loss) +
                  ", Training Accuracy= " + "{:.3f}".format(acc))
            report("loss_%d" % step, loss)

    print("Optimization Finished!")

    # Calculate accuracy for MNIST test images
    test_accuracy = sess.run(accuracy, feed_dict={X: mnist.test.images, Y: mnist.test.labels})
    print("Testing Accuracy:", test_accuracy)
    report("test_accuracy", test_accuracy)
    report("epochs_completed", mnist.train.epochs_completed)
