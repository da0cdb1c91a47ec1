"""Siamese network: one tower, built twice, sharing weights through variable_scope reuse.

The second call reopens the scope with reuse=True, so tf.get_variable hands back the
first tower's variables instead of creating new ones. Trained with a contrastive loss.
"""
import json

import numpy as np
import tensorflow.compat.v1 as tf

STEPS = 30

tf.disable_v2_behavior()

EMBEDDING_DIM = 4


def tower(x, reuse):
    """Two fully connected layers; every variable comes from tf.get_variable."""
    init = tf.glorot_uniform_initializer(seed=11)
    with tf.variable_scope("tower", reuse=reuse):
        with tf.variable_scope("layer1"):
            w1 = tf.get_variable("w", [6, 16], initializer=init)
            b1 = tf.get_variable("b", [16], initializer=tf.zeros_initializer())
            h = tf.nn.tanh(tf.matmul(x, w1) + b1)
        with tf.variable_scope("layer2"):
            w2 = tf.get_variable("w", [16, EMBEDDING_DIM], initializer=init)
            return tf.matmul(h, w2)


class SiameseModel(object):
    """Holds the graph: two inputs, a shared tower, the contrastive loss and its train op."""

    def __init__(self, margin=3.0, learning_rate=0.02):
        self.left = tf.placeholder(tf.float32, [None, 6], name="left")
        self.right = tf.placeholder(tf.float32, [None, 6], name="right")
        self.same = tf.placeholder(tf.float32, [None], name="same")
        left_embedding = tower(self.left, reuse=False)
        right_embedding = tower(self.right, reuse=True)
        squared = tf.reduce_sum(tf.square(left_embedding - right_embedding), 1)
        self.distance = tf.sqrt(squared + 1e-6)
        apart = tf.square(tf.maximum(margin - self.distance, 0.0))
        self.loss = tf.reduce_mean(self.same * tf.square(self.distance) + (1.0 - self.same) * apart)
        self.train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(self.loss)

    def feed(self, pairs):
        left, right, same = pairs
        return {self.left: left, self.right: right, self.same: same}


def make_pairs(rng, n):
    """Half the pairs are noisy copies of one point, half are unrelated points."""
    left = rng.normal(size=(n, 6))
    same = (np.arange(n) % 2 == 0).astype(np.float32)
    noisy_copy = left + 0.5 * rng.normal(size=(n, 6))
    right = np.where(same[:, None] == 1.0, noisy_copy, rng.normal(size=(n, 6)))
    return left.astype(np.float32), right.astype(np.float32), same


tf.set_random_seed(5)
pairs = make_pairs(np.random.RandomState(5), 64)
model = SiameseModel()
print("RESULT num_trainable_variables %r" % float(len(tf.trainable_variables())))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("RESULT loss_step_0 %r" % float(sess.run(model.loss, model.feed(pairs))))
    for _ in range(STEPS):
        sess.run(model.train_op, model.feed(pairs))
    print("RESULT final_loss %r" % float(sess.run(model.loss, model.feed(pairs))))
    distances = sess.run(model.distance, model.feed(pairs))[:6]
    print("RESULT distances %s" % json.dumps([float(d) for d in distances]))
