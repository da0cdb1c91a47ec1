"""Logistic-regression-style classifier fed by a Python generator of shuffled minibatches.

The usual hand-rolled input code of TF1 repositories: `iterate_minibatches(x, y, size, rng)` draws a
fresh permutation with a seeded `np.random.RandomState` every epoch and yields slices of it; the
training loop feeds each minibatch through `feed_dict`. A `BatchFeeder` object with a
`next_batch(size)` method (the `mnist.train.next_batch` shape) feeds a short fine-tuning phase.
"""
import numpy as np
import tensorflow as tf

FEATURES = 8
CLASSES = 4
EPOCHS = 4
BATCH = 16
FINE_TUNE_STEPS = 10


def make_data(rng, count):
    centres = rng.normal(0.0, 1.0, size=(CLASSES, FEATURES))
    labels = rng.randint(0, CLASSES, size=count)
    features = centres[labels] + rng.normal(0.0, 0.8, size=(count, FEATURES))
    return features, labels


def iterate_minibatches(features, labels, size, rng):
    """Yield (features, labels) minibatches in a fresh random order."""
    order = rng.permutation(len(features))
    for start in range(0, len(features), size):
        rows = order[start:start + size]
        yield features[rows], labels[rows]


class BatchFeeder:
    """Random minibatches with replacement, one call at a time."""

    def __init__(self, features, labels, seed):
        self.features, self.labels = features, labels
        self.rng = np.random.RandomState(seed)

    def next_batch(self, size):
        rows = self.rng.randint(0, len(self.features), size)
        return self.features[rows], self.labels[rows]


def main():
    rng = np.random.RandomState(12)
    train_x, train_y = make_data(rng, 400)
    weights_rng = np.random.RandomState(5)

    inputs = tf.placeholder(tf.float32, [None, FEATURES], name="inputs")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden_w = tf.Variable(weights_rng.normal(0, 0.3, (FEATURES, 24)).astype(np.float32), name="hidden_w")
    hidden_b = tf.Variable(np.zeros(24, np.float32), name="hidden_b")
    out_w = tf.Variable(weights_rng.normal(0, 0.3, (24, CLASSES)).astype(np.float32), name="out_w")
    hidden = tf.nn.relu(tf.matmul(inputs, hidden_w) + hidden_b)
    logits = tf.matmul(hidden, out_w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(EPOCHS):
            losses = []
            for batch_x, batch_y in iterate_minibatches(train_x, train_y, BATCH, rng):
                _, batch_loss = sess.run([train_op, loss], feed_dict={inputs: batch_x, labels: batch_y})
                losses.append(batch_loss)
            print("RESULT epoch_%d_loss %r" % (epoch, float(np.mean(losses))))

        feeder = BatchFeeder(train_x, train_y, 3)
        for step in range(FINE_TUNE_STEPS):
            batch_x, batch_y = feeder.next_batch(BATCH)
            _, batch_loss = sess.run([train_op, loss], feed_dict={inputs: batch_x, labels: batch_y})
        print("RESULT fine_tune_loss %r" % float(batch_loss))
        print("RESULT full_loss %r" % float(sess.run(loss, {inputs: train_x, labels: train_y})))


if __name__ == "__main__":
    main()
