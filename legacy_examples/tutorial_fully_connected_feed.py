"""The shape of TensorFlow's own "TensorFlow Mechanics 101" tutorial (`fully_connected_feed.py` with
its `mnist.py`), as repositories copied it into one file: `inference` / `loss` / `training` /
`evaluation` building the graph in name scopes (`training` also makes the global step and a scalar
summary and returns the train op), `placeholder_inputs` returning the two placeholders,
`fill_feed_dict` returning the feed dict for the next batch, `do_eval(sess, eval_correct, ...)`
running the session over a data set; `run_training()` builds it all inside
`with tf.Graph().as_default():` and trains with a `tf.Session()` it never closes.

Smaller images and layers than the tutorial, a seeded synthetic data set with the loader's
`next_batch` (no shuffling), seeded initial weights, so the migrated program must print the same
numbers.
"""
import argparse
import json
import math
import os
import sys
import tempfile

import numpy
import tensorflow as tf

NUM_CLASSES = 4
IMAGE_PIXELS = 36
FLAGS = None


class DataSet(object):
    """The loader's data set: images, labels and `next_batch` running through them in order."""

    def __init__(self, images, labels):
        self._images = images
        self._labels = labels
        self._index_in_epoch = 0

    @property
    def num_examples(self):
        return self._images.shape[0]

    def next_batch(self, batch_size):
        if self._index_in_epoch + batch_size > self.num_examples:
            self._index_in_epoch = 0
        start = self._index_in_epoch
        self._index_in_epoch += batch_size
        return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]


def read_data_sets(seed=7):
    rng = numpy.random.RandomState(seed)
    images = rng.rand(96, IMAGE_PIXELS).astype(numpy.float32)
    labels = (images[:, :NUM_CLASSES].argmax(axis=1)).astype(numpy.int32)
    return DataSet(images[:64], labels[:64]), DataSet(images[64:], labels[64:])


def seeded(shape, seed, stddev):
    return numpy.random.RandomState(seed).normal(0.0, stddev, size=shape).astype(numpy.float32)


def inference(images, hidden1_units, hidden2_units):
    with tf.name_scope('hidden1'):
        weights = tf.Variable(seeded([IMAGE_PIXELS, hidden1_units], 1, 1.0 / math.sqrt(float(IMAGE_PIXELS))),
                              name='weights')
        biases = tf.Variable(tf.zeros([hidden1_units]), name='biases')
        hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
    with tf.name_scope('hidden2'):
        weights = tf.Variable(seeded([hidden1_units, hidden2_units], 2, 1.0 / math.sqrt(float(hidden1_units))),
                              name='weights')
        biases = tf.Variable(tf.zeros([hidden2_units]), name='biases')
        hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
    with tf.name_scope('softmax_linear'):
        weights = tf.Variable(seeded([hidden2_units, NUM_CLASSES], 3, 1.0 / math.sqrt(float(hidden2_units))),
                              name='weights')
        biases = tf.Variable(tf.zeros([NUM_CLASSES]), name='biases')
        logits = tf.matmul(hidden2, weights) + biases
    return logits


def loss(logits, labels):
    labels = tf.to_int64(labels)
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(loss, learning_rate):
    tf.summary.scalar('loss', loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    global_step = tf.Variable(0, name='global_step', trainable=False)
    train_op = optimizer.minimize(loss, global_step=global_step)
    return train_op


def evaluation(logits, labels):
    correct = tf.nn.in_top_k(logits, labels, 1)
    return tf.reduce_sum(tf.cast(correct, tf.int32))


def placeholder_inputs(batch_size):
    images_placeholder = tf.placeholder(tf.float32, shape=(batch_size, IMAGE_PIXELS))
    labels_placeholder = tf.placeholder(tf.int32, shape=(batch_size))
    return images_placeholder, labels_placeholder


def fill_feed_dict(data_set, images_pl, labels_pl):
    images_feed, labels_feed = data_set.next_batch(FLAGS.batch_size)
    feed_dict = {
        images_pl: images_feed,
        labels_pl: labels_feed,
    }
    return feed_dict


def do_eval(sess, eval_correct, images_placeholder, labels_placeholder, data_set):
    true_count = 0
    steps_per_epoch = data_set.num_examples // FLAGS.batch_size
    num_examples = steps_per_epoch * FLAGS.batch_size
    for step in range(steps_per_epoch):
        feed_dict = fill_feed_dict(data_set, images_placeholder, labels_placeholder)
        true_count += sess.run(eval_correct, feed_dict=feed_dict)
    precision = float(true_count) / num_examples
    print('Num examples: %d  Num correct: %d  Precision @ 1: %0.04f' % (num_examples, true_count, precision))
    return precision


def run_training():
    train_set, test_set = read_data_sets()
    with tf.Graph().as_default():
        images_placeholder, labels_placeholder = placeholder_inputs(FLAGS.batch_size)
        logits = inference(images_placeholder, FLAGS.hidden1, FLAGS.hidden2)
        loss_op = loss(logits, labels_placeholder)
        train_op = training(loss_op, FLAGS.learning_rate)
        eval_correct = evaluation(logits, labels_placeholder)
        summary = tf.summary.merge_all()
        init = tf.global_variables_initializer()
        sess = tf.Session()
        summary_writer = tf.summary.FileWriter(FLAGS.log_dir, sess.graph)
        sess.run(init)
        losses, precisions = [], []
        for step in range(FLAGS.max_steps):
            feed_dict = fill_feed_dict(train_set, images_placeholder, labels_placeholder)
            _, loss_value = sess.run([train_op, loss_op], feed_dict=feed_dict)
            losses.append(round(float(loss_value), 6))
            if step % 10 == 0:
                print('Step %d: loss = %.2f' % (step, loss_value))
                summary_str = sess.run(summary, feed_dict=feed_dict)
                summary_writer.add_summary(summary_str, step)
                summary_writer.flush()
            if (step + 1) % 20 == 0 or (step + 1) == FLAGS.max_steps:
                print('Test Data Eval:')
                precisions.append(round(do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                                test_set), 6))
        print("RESULT losses %s" % json.dumps(losses))
        print("RESULT precisions %s" % json.dumps(precisions))


def main(_):
    if tf.gfile.Exists(FLAGS.log_dir):
        tf.gfile.DeleteRecursively(FLAGS.log_dir)
    tf.gfile.MakeDirs(FLAGS.log_dir)
    run_training()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--learning_rate', type=float, default=0.1, help='Initial learning rate.')
    parser.add_argument('--max_steps', type=int, default=40, help='Number of steps to run trainer.')
    parser.add_argument('--hidden1', type=int, default=16, help='Number of units in hidden layer 1.')
    parser.add_argument('--hidden2', type=int, default=8, help='Number of units in hidden layer 2.')
    parser.add_argument('--batch_size', type=int, default=8, help='Batch size.')
    parser.add_argument('--log_dir', type=str, default=os.path.join(tempfile.gettempdir(), 'fully_connected_feed'),
                        help='Directory to put the log data.')
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
