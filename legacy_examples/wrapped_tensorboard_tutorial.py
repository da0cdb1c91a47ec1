"""TensorFlow's TensorBoard tutorial (`mnist_with_summaries.py`) as repositories copied it: an
`InteractiveSession` opened first; `variable_summaries(var)` and `nn_layer(...)` helpers nested in
`train()`, each layer attaching mean / stddev / max / min / histogram summaries to its weights and
biases; an image summary of the input; dropout with a `keep_prob` placeholder; `merge_all()` into two
FileWriters (train, test); a nested `feed_dict(train)` making each run's feed dict; a loop recording
test summaries every 10 steps and training ones otherwise, every 100th step traced with `RunOptions`
/ `RunMetadata` and `add_run_metadata`. A tiny synthetic MNIST (a bright bar whose place is the digit,
over seeded noise) is written to a temporary folder first; smaller layers, seeded NumPy initial weights
(the tutorial draws them with `tf.truncated_normal`), batches taken in order (`shuffle=False`) and no
dropout in training, so that the run is deterministic.

TFM201 does not convert layer helpers that attach summaries, so the graph stays TF1 code, wrapped once
by `tf.compat.v1.wrap_function` (TFM203): the runs fed by `feed_dict(...)` call `run_graph` with the
dict it makes (keyed by `.ref()`s), the traced run is run untraced, and `add_run_metadata` goes.
"""
import argparse
import gzip
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

FLAGS = None


def write_synthetic_mnist(folder, seed=0):
    """MNIST's file format (gzipped idx, big-endian counts) with learnable images."""
    rng = np.random.RandomState(seed)
    for prefix, count in (("train", 300), ("t10k", 100)):
        labels = rng.randint(0, 10, size=count).astype(np.uint8)
        images = rng.randint(0, 170, size=(count, 28, 28)).astype(np.uint8)
        for image, label in zip(images, labels):
            image[3 + 2 * label, 4:24] = 230
        with gzip.open(os.path.join(folder, prefix + "-images-idx3-ubyte.gz"), "wb") as stream:
            stream.write(np.array([2051, count, 28, 28], dtype=">u4").tobytes() + images.tobytes())
        with gzip.open(os.path.join(folder, prefix + "-labels-idx1-ubyte.gz"), "wb") as stream:
            stream.write(np.array([2049, count], dtype=">u4").tobytes() + labels.tobytes())


def train():
    mnist = input_data.read_data_sets(FLAGS.data_dir, fake_data=FLAGS.fake_data, validation_size=0)
    sess = tf.InteractiveSession()
    with tf.name_scope('input'):
        x = tf.placeholder(tf.float32, [None, 784], name='x-input')
        y_ = tf.placeholder(tf.int64, [None], name='y-input')
    with tf.name_scope('input_reshape'):
        image_shaped_input = tf.reshape(x, [-1, 28, 28, 1])
        tf.summary.image('input', image_shaped_input, 2)

    def weight_variable(shape, seed):
        initial = np.random.RandomState(seed).normal(0.0, 0.1, size=shape).astype(np.float32)
        return tf.Variable(initial)

    def bias_variable(shape):
        initial = tf.constant(0.1, shape=shape)
        return tf.Variable(initial)

    def variable_summaries(var):
        with tf.name_scope('summaries'):
            mean = tf.reduce_mean(var)
            tf.summary.scalar('mean', mean)
            with tf.name_scope('stddev'):
                stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
            tf.summary.scalar('stddev', stddev)
            tf.summary.scalar('max', tf.reduce_max(var))
            tf.summary.scalar('min', tf.reduce_min(var))
            tf.summary.histogram('histogram', var)

    def nn_layer(input_tensor, input_dim, output_dim, layer_name, seed, act=tf.nn.relu):
        with tf.name_scope(layer_name):
            with tf.name_scope('weights'):
                weights = weight_variable([input_dim, output_dim], seed)
                variable_summaries(weights)
            with tf.name_scope('biases'):
                biases = bias_variable([output_dim])
                variable_summaries(biases)
            with tf.name_scope('Wx_plus_b'):
                preactivate = tf.matmul(input_tensor, weights) + biases
                tf.summary.histogram('pre_activations', preactivate)
            activations = act(preactivate, name='activation')
            tf.summary.histogram('activations', activations)
            return activations

    hidden1 = nn_layer(x, 784, 32, 'layer1', seed=1)

    with tf.name_scope('dropout'):
        keep_prob = tf.placeholder(tf.float32)
        tf.summary.scalar('dropout_keep_probability', keep_prob)
        dropped = tf.nn.dropout(hidden1, keep_prob)

    y = nn_layer(dropped, 32, 10, 'layer2', seed=2, act=tf.identity)

    with tf.name_scope('cross_entropy'):
        with tf.name_scope('total'):
            cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
    tf.summary.scalar('cross_entropy', cross_entropy)

    with tf.name_scope('train'):
        train_step = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(cross_entropy)

    with tf.name_scope('accuracy'):
        with tf.name_scope('correct_prediction'):
            correct_prediction = tf.equal(tf.argmax(y, 1), y_)
        with tf.name_scope('accuracy'):
            accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    tf.summary.scalar('accuracy', accuracy)

    merged = tf.summary.merge_all()
    train_writer = tf.summary.FileWriter(FLAGS.log_dir + '/train', sess.graph)
    test_writer = tf.summary.FileWriter(FLAGS.log_dir + '/test')
    tf.global_variables_initializer().run()

    def feed_dict(train):
        """Make a TensorFlow feed_dict: maps data onto Tensor placeholders."""
        if train or FLAGS.fake_data:
            xs, ys = mnist.train.next_batch(50, fake_data=FLAGS.fake_data, shuffle=False)
            k = FLAGS.dropout
        else:
            xs, ys = mnist.test.images, mnist.test.labels
            k = 1.0
        return {x: xs, y_: ys, keep_prob: k}

    accuracies = []
    for i in range(FLAGS.max_steps):
        if i % 10 == 0:
            summary, acc = sess.run([merged, accuracy], feed_dict=feed_dict(False))
            test_writer.add_summary(summary, i)
            accuracies.append(round(float(acc), 5))
        else:
            if i % 100 == 99:
                run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                run_metadata = tf.RunMetadata()
                summary, _ = sess.run([merged, train_step], feed_dict=feed_dict(True), options=run_options,
                                      run_metadata=run_metadata)
                train_writer.add_run_metadata(run_metadata, 'step%03d' % i)
                train_writer.add_summary(summary, i)
            else:
                summary, _ = sess.run([merged, train_step], feed_dict=feed_dict(True))
                train_writer.add_summary(summary, i)
    train_writer.close()
    test_writer.close()
    print("RESULT accuracies %s" % json.dumps(accuracies))
    print("RESULT final_loss %s" % json.dumps(round(float(sess.run(cross_entropy, feed_dict=feed_dict(False))), 5)))


def main(_):
    if tf.gfile.Exists(FLAGS.log_dir):
        tf.gfile.DeleteRecursively(FLAGS.log_dir)
    tf.gfile.MakeDirs(FLAGS.log_dir)
    write_synthetic_mnist(FLAGS.data_dir)
    train()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--fake_data', nargs='?', const=True, type=bool, default=False)
    parser.add_argument('--max_steps', type=int, default=120)
    parser.add_argument('--learning_rate', type=float, default=0.001)
    parser.add_argument('--dropout', type=float, default=1.0)
    parser.add_argument('--data_dir', type=str, default=tempfile.mkdtemp(prefix='mnist_data_'))
    parser.add_argument('--log_dir', type=str, default=os.path.join(tempfile.mkdtemp(), 'mnist_with_summaries'))
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
