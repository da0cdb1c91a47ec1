"""Two-layer MLP on a synthetic 3-class problem, trained with plain SGD through feed_dict.

The classic TF1 tutorial shape: placeholders for the data, variables built by hand,
a Session used as a context manager and sess.run([train_op, loss]) in a loop.
"""
import json

import numpy as np
import tensorflow as tf

NUM_FEATURES = 10
NUM_CLASSES = 3
HIDDEN = 32
STEPS = 40


def make_data(rng, n):
    """Gaussian blobs, one centre per class."""
    centres = rng.normal(0.0, 0.6, size=(NUM_CLASSES, NUM_FEATURES))
    labels = rng.randint(0, NUM_CLASSES, size=n)
    features = centres[labels] + rng.normal(0.0, 1.0, size=(n, NUM_FEATURES))
    return features.astype(np.float32), labels.astype(np.int64)


def dense(x, n_in, n_out, name):
    with tf.name_scope(name):
        w = tf.Variable(tf.truncated_normal([n_in, n_out], stddev=0.1, seed=1), name="weights")
        b = tf.Variable(tf.zeros([n_out]), name="biases")
        return tf.matmul(x, w) + b


def report(key, value):
    print("RESULT %s %r" % (key, float(value)))


tf.set_random_seed(1234)
rng = np.random.RandomState(0)
train_x, train_y = make_data(rng, 256)

x = tf.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
hidden = tf.nn.relu(dense(x, NUM_FEATURES, HIDDEN, "hidden1"))
logits = dense(hidden, HIDDEN, NUM_CLASSES, "softmax_linear")

loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
correct = tf.equal(tf.argmax(logits, 1), y)
accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    feed = {x: train_x, y: train_y}
    for step in range(STEPS):
        _, loss_value = sess.run([train_op, loss], feed_dict=feed)
        if step % 10 == 0:
            print("step %d: loss = %.4f" % (step, loss_value))
        if step == 0:
            report("loss_step_0", loss_value)
    final_loss, final_accuracy = sess.run([loss, accuracy], feed_dict=feed)
    report("final_loss", final_loss)
    report("final_accuracy", final_accuracy)
    # Class probabilities of the first few examples, to compare models beyond one number.
    probabilities = sess.run(tf.nn.softmax(logits), feed_dict={x: train_x[:4]})
    print("RESULT probabilities %s" % json.dumps([float(p) for p in probabilities.ravel()]))
