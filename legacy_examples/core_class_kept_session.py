"""A model class that keeps the session it is given (the DeepLearningZeroToAll "class Model" shape):
`Model(sess, "m1")` builds its graph in a variable scope named by the model, and its `predict`,
`get_accuracy` and `train` methods run `self.sess`; the script trains it on seeded blobs by minibatches.

Weights start from seeded NumPy arrays, so the migrated program must print the same numbers.
"""
import json

import numpy as np
import tensorflow as tf

N_FEATURES, N_HIDDEN, N_CLASSES = 5, 12, 3
EPOCHS, BATCH = 4, 25

rng = np.random.RandomState(3)
centres = rng.normal(0.0, 2.0, size=(N_CLASSES, N_FEATURES))
labels = rng.randint(0, N_CLASSES, size=200)
features = (centres[labels] + rng.normal(size=(200, N_FEATURES))).astype(np.float32)
one_hot = np.eye(N_CLASSES, dtype=np.float32)[labels]


class Model:

    def __init__(self, sess, name):
        self.sess = sess
        self.name = name
        self._build_net()

    def _build_net(self):
        with tf.variable_scope(self.name):
            self.X = tf.placeholder(tf.float32, [None, N_FEATURES])
            self.Y = tf.placeholder(tf.float32, [None, N_CLASSES])
            W1 = tf.Variable(rng.normal(0.0, 0.4, size=(N_FEATURES, N_HIDDEN)).astype(np.float32), name="W1")
            b1 = tf.Variable(np.zeros(N_HIDDEN, np.float32), name="b1")
            W2 = tf.Variable(rng.normal(0.0, 0.4, size=(N_HIDDEN, N_CLASSES)).astype(np.float32), name="W2")
            hidden = tf.nn.relu(tf.matmul(self.X, W1) + b1)
            self.logits = tf.matmul(hidden, W2)
        self.cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=self.logits, labels=self.Y))
        self.optimizer = tf.train.AdamOptimizer(learning_rate=0.05).minimize(self.cost)
        correct_prediction = tf.equal(tf.argmax(self.logits, 1), tf.argmax(self.Y, 1))
        self.accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

    def predict(self, x_test):
        return self.sess.run(self.logits, feed_dict={self.X: x_test})

    def get_accuracy(self, x_test, y_test):
        return self.sess.run(self.accuracy, feed_dict={self.X: x_test, self.Y: y_test})

    def train(self, x_data, y_data):
        cost, _ = self.sess.run([self.cost, self.optimizer], feed_dict={self.X: x_data, self.Y: y_data})
        return cost


sess = tf.Session()
m1 = Model(sess, "m1")
sess.run(tf.global_variables_initializer())

costs = []
for epoch in range(EPOCHS):
    avg_cost = 0.0
    for start in range(0, len(features), BATCH):
        avg_cost += m1.train(features[start:start + BATCH], one_hot[start:start + BATCH]) / (len(features) // BATCH)
    costs.append(float(avg_cost))
    print("Epoch:", epoch + 1, "cost =", avg_cost)
print("RESULT costs %s" % json.dumps(costs))
print("RESULT accuracy %r" % float(m1.get_accuracy(features, one_hot)))
print("RESULT logits %s" % json.dumps([round(float(v), 5) for v in m1.predict(features[:2]).ravel()]))
