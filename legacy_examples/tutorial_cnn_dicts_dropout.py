"""A convolutional classifier in the aymericdamien TensorFlow-Examples tutorial style.

`conv2d` / `maxpool2d` / `conv_net(x, weights, biases, dropout)` helpers over weights and biases
held in dicts of `tf.Variable(tf.random_normal(...))`, the flattened size read back with
`weights['wd1'].get_shape().as_list()[0]`, `tf.nn.dropout` driven by a `keep_prob` placeholder
(fed 0.75 to train, 1.0 to evaluate), `tf.nn.softmax_cross_entropy_with_logits`, Adam,
`correct_pred` / `accuracy`, a display step that re-runs loss and accuracy on the training batch, and
the loss before training and the accuracy after it on a held-out set. The images are seeded
synthetic 8x8 "digits" (three bar patterns plus noise); `tf.set_random_seed` makes the initial
weights and dropout masks repeatable.
"""
from __future__ import print_function

import numpy as np
import tensorflow as tf

# Training Parameters
learning_rate = 0.01
num_steps = 40
batch_size = 32
display_step = 10

# Network Parameters
num_input = 64  # 8x8 images
num_classes = 3
dropout = 0.75  # Dropout, probability to keep units

tf.set_random_seed(1)
rng = np.random.RandomState(11)


def make_images(count):
    """Three classes: a horizontal bar, a vertical bar, a diagonal, anywhere in the image."""
    images = rng.normal(0.0, 0.3, size=(count, 8, 8)).astype(np.float32)
    labels = rng.randint(0, num_classes, size=count)
    for image, label in zip(images, labels):
        offset = rng.randint(1, 7)
        if label == 0:
            image[offset, :] += 1.0
        elif label == 1:
            image[:, offset] += 1.0
        else:
            image[np.arange(8), np.arange(8)] += 1.0
    return images.reshape(count, num_input), np.eye(num_classes, dtype=np.float32)[labels]


train_x, train_y = make_images(320)
test_x, test_y = make_images(96)

# tf Graph input
X = tf.placeholder(tf.float32, [None, num_input])
Y = tf.placeholder(tf.float32, [None, num_classes])
keep_prob = tf.placeholder(tf.float32)  # dropout (keep probability)


# Create some wrappers for simplicity
def conv2d(x, W, b, strides=1):
    # Conv2D wrapper, with bias and relu activation
    x = tf.nn.conv2d(x, W, strides=[1, strides, strides, 1], padding='SAME')
    x = tf.nn.bias_add(x, b)
    return tf.nn.relu(x)


def maxpool2d(x, k=2):
    # MaxPool2D wrapper
    return tf.nn.max_pool(x, ksize=[1, k, k, 1], strides=[1, k, k, 1], padding='SAME')


# Create model
def conv_net(x, weights, biases, dropout):
    # Reshape to match picture format [Height x Width x Channel]
    x = tf.reshape(x, shape=[-1, 8, 8, 1])

    # Convolution Layer
    conv1 = conv2d(x, weights['wc1'], biases['bc1'])
    # Max Pooling (down-sampling)
    conv1 = maxpool2d(conv1, k=2)

    # Convolution Layer
    conv2 = conv2d(conv1, weights['wc2'], biases['bc2'])
    # Max Pooling (down-sampling)
    conv2 = maxpool2d(conv2, k=2)

    # Fully connected layer
    # Reshape conv2 output to fit fully connected layer input
    fc1 = tf.reshape(conv2, [-1, weights['wd1'].get_shape().as_list()[0]])
    fc1 = tf.add(tf.matmul(fc1, weights['wd1']), biases['bd1'])
    fc1 = tf.nn.relu(fc1)
    # Apply Dropout
    fc1 = tf.nn.dropout(fc1, dropout)

    # Output, class prediction
    out = tf.add(tf.matmul(fc1, weights['out']), biases['out'])
    return out


# Store layers weight & bias
weights = {
    # 3x3 conv, 1 input, 8 outputs
    'wc1': tf.Variable(tf.random_normal([3, 3, 1, 8], stddev=0.1)),
    # 3x3 conv, 8 inputs, 16 outputs
    'wc2': tf.Variable(tf.random_normal([3, 3, 8, 16], stddev=0.1)),
    # fully connected, 2*2*16 inputs, 32 outputs
    'wd1': tf.Variable(tf.random_normal([2 * 2 * 16, 32], stddev=0.1)),
    # 32 inputs, 3 outputs (class prediction)
    'out': tf.Variable(tf.random_normal([32, num_classes], stddev=0.1))
}

biases = {
    'bc1': tf.Variable(tf.zeros([8])),
    'bc2': tf.Variable(tf.zeros([16])),
    'bd1': tf.Variable(tf.zeros([32])),
    'out': tf.Variable(tf.zeros([num_classes]))
}

# Construct model
logits = conv_net(X, weights, biases, keep_prob)
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
    # Loss of the untrained network on the held-out images
    initial_loss = sess.run(loss_op, feed_dict={X: test_x, Y: test_y, keep_prob: 1.0})
    print("Initial Testing Loss= " + "{:.4f}".format(initial_loss))
    print("RESULT initial_test_loss %r" % float(initial_loss))

    for step in range(1, num_steps + 1):
        start = ((step - 1) * batch_size) % len(train_x)
        batch_x, batch_y = train_x[start:start + batch_size], train_y[start:start + batch_size]
        # Run optimization op (backprop)
        sess.run(train_op, feed_dict={X: batch_x, Y: batch_y, keep_prob: dropout})
        if step % display_step == 0 or step == 1:
            # Calculate batch loss and accuracy
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y, keep_prob: 1.0})
            print("Step " + str(step) + ", Minibatch Loss= " + "{:.4f}".format(loss) +
                  ", Training Accuracy= " + "{:.3f}".format(acc))
            print("RESULT minibatch_loss_%d %r" % (step, float(loss)))

    print("Optimization Finished!")

    # Calculate accuracy for the held-out images
    test_accuracy = sess.run(accuracy, feed_dict={X: test_x, Y: test_y, keep_prob: 1.0})
    print("Testing Accuracy:", test_accuracy)
    print("RESULT test_accuracy %r" % float(test_accuracy))
    probabilities = sess.run(prediction, feed_dict={X: test_x[:2], keep_prob: 1.0})
    print("RESULT test_probabilities %s" % [float(p) for p in probabilities.ravel()])
