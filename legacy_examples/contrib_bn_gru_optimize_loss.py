"""A sequence classifier in the style of 2017 research code: tf.contrib everywhere.

A convolutional feature extractor with contrib batch norm updated in place (the DCGAN `bn` helper),
a GRU over the sequence from `tf.contrib.rnn` with dropout, and `tf.contrib.layers.optimize_loss`
with a decayed learning rate and gradient clipping. The data arrays are built with `np.float`,
which NumPy 2 no longer has.
"""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import rnn

STEPS = 12
BATCH = 16
TIME, FEATURES, HIDDEN, CLASSES = 6, 5, 8, 3


def bn(x, is_training, scope):
    return tf.contrib.layers.batch_norm(x, decay=0.9, updates_collections=None, epsilon=1e-5,
                                        scale=True, is_training=is_training, scope=scope)


def build(is_training, keep_prob):
    inputs = tf.placeholder(tf.float32, [None, TIME, FEATURES], name="inputs")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    filters = tf.get_variable("filters", [3, FEATURES, HIDDEN],
                              initializer=tf.truncated_normal_initializer(stddev=0.2))
    convolved = tf.reshape(tf.nn.conv1d(inputs, filters, 1, "SAME"), [-1, HIDDEN])
    features = tf.reshape(tf.nn.relu(bn(convolved, is_training, "conv_bn")), [-1, TIME, HIDDEN])
    cell = rnn.DropoutWrapper(rnn.GRUCell(HIDDEN), output_keep_prob=keep_prob)
    outputs, _ = tf.nn.dynamic_rnn(cell, features, dtype=tf.float32)
    logits = tf.layers.dense(outputs[:, -1, :], CLASSES, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    return inputs, labels, loss, accuracy


def main():
    np.random.seed(0)
    tf.set_random_seed(0)
    data = np.random.randn(BATCH * 4, TIME, FEATURES).astype(np.float)
    targets = (data[:, :, 0].sum(axis=1) > 0).astype(np.int) + (data[:, -1, 1] > 1).astype(np.int)

    inputs, labels, loss, accuracy = build(is_training=True, keep_prob=1.0)
    global_step = tf.Variable(0, trainable=False, name="global_step")
    learning_rate = tf.train.exponential_decay(0.05, global_step, 4, 0.5, staircase=True)
    train_op = tf.contrib.layers.optimize_loss(loss, global_step=global_step, learning_rate=learning_rate,
                                               optimizer="Adam", clip_gradients=1.0)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            start = (step * BATCH) % len(data)
            batch = {inputs: data[start:start + BATCH], labels: targets[start:start + BATCH]}
            loss_value = sess.run(train_op, feed_dict=batch)
            print("RESULT loss_%d %r" % (step, float(loss_value)))
        print("RESULT accuracy %r" % float(sess.run(accuracy, feed_dict={inputs: data, labels: targets})))


if __name__ == "__main__":
    main()
