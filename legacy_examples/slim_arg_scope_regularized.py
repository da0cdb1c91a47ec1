"""A small convnet in the tf.contrib.slim style: one arg_scope sets the activation, initializer and
L2 weight decay of every conv and fully connected layer; the cross entropy goes to the LOSSES
collection and tf.losses.get_total_loss() adds the weight decay; Momentum with a global step trains
on minibatches fed from NumPy, and the held-out accuracy is measured at the end.
"""
import numpy as np
import tensorflow as tf
import tensorflow.contrib.slim as slim

NUM_CLASSES = 3
BATCH = 16
EPOCHS = 4


def small_convnet(images, num_classes, weight_decay=0.001):
    with tf.variable_scope("SmallConvNet"):
        with slim.arg_scope([slim.conv2d, slim.fully_connected],
                            activation_fn=tf.nn.relu,
                            weights_initializer=tf.truncated_normal_initializer(stddev=0.1),
                            weights_regularizer=slim.l2_regularizer(weight_decay)):
            with slim.arg_scope([slim.conv2d], padding="SAME"):
                net = slim.conv2d(images, 6, [3, 3], scope="conv1")
                net = slim.max_pool2d(net, [2, 2], scope="pool1")
                net = slim.conv2d(net, 12, [3, 3], scope="conv2")
            net = slim.max_pool2d(net, [2, 2], scope="pool2")
            net = slim.flatten(net)
            net = slim.fully_connected(net, 24, scope="fc3")
            return slim.fully_connected(net, num_classes, activation_fn=None, scope="logits")


def stripes(rng, n):
    """Class 0: horizontal stripes, 1: vertical stripes, 2: noise only."""
    labels = rng.randint(0, NUM_CLASSES, size=n)
    images = rng.normal(0.0, 0.4, size=(n, 12, 12, 1)).astype(np.float32)
    images[labels == 0, ::3, :, 0] += 1.0
    images[labels == 1, :, ::3, 0] += 1.0
    return images, labels.astype(np.int64)


tf.set_random_seed(5)
rng = np.random.RandomState(11)
train_x, train_y = stripes(rng, 96)
test_x, test_y = stripes(rng, 48)

images = tf.placeholder(tf.float32, [None, 12, 12, 1], name="images")
labels = tf.placeholder(tf.int64, [None], name="labels")
logits = small_convnet(images, NUM_CLASSES)
tf.losses.sparse_softmax_cross_entropy(labels, logits)
total_loss = tf.losses.get_total_loss()  # cross entropy + L2 weight decay of every layer
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.MomentumOptimizer(0.02, 0.9).minimize(total_loss, global_step=global_step)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for epoch in range(EPOCHS):
        for start in range(0, len(train_x), BATCH):
            _, loss_value = sess.run([train_op, total_loss],
                                     feed_dict={images: train_x[start:start + BATCH],
                                                labels: train_y[start:start + BATCH]})
            losses.append(float(loss_value))
    print("RESULT first_total_loss %r" % losses[0])
    print("RESULT final_total_loss %r" % losses[-1])
    print("RESULT test_accuracy %r" % float(sess.run(accuracy, feed_dict={images: test_x, labels: test_y})))
