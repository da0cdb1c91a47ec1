"""Two-layer regression network whose graph is held by a class.

`MLPRegressor.__init__` builds the placeholders, the variables (seeded NumPy arrays), the loss and
the Adam train op into `self.<attribute>`s; `train_epoch(sess, ...)` and `evaluate(sess, ...)` methods
only run the session they are given; the code that owns the session also reads `model.prediction`
and feeds `model.inputs` itself. Every runtime starts from the same weights.
"""
import numpy as np
import tensorflow as tf

FEATURES = 5
HIDDEN = 10
EPOCHS = 5
BATCH = 20


def make_data(rng, count):
    coefficients = np.array([[0.5], [-1.0], [0.25], [2.0], [-0.75]], np.float32)
    points = rng.normal(size=(count, FEATURES)).astype(np.float32)
    targets = np.sin(points @ coefficients) + 0.1 * rng.normal(size=(count, 1))
    return points, targets.astype(np.float32)


class MLPRegressor(object):
    """Holds the graph: inputs, a tanh hidden layer, a linear output, MSE and its train op."""

    def __init__(self, features, hidden, learning_rate=0.02):
        weights_rng = np.random.RandomState(11)
        self.inputs = tf.placeholder(tf.float32, [None, features], name="inputs")
        self.targets = tf.placeholder(tf.float32, [None, 1], name="targets")
        w_hidden = tf.Variable(weights_rng.normal(0, 0.5, (features, hidden)).astype(np.float32), name="w_hidden")
        b_hidden = tf.Variable(np.zeros(hidden, np.float32), name="b_hidden")
        w_out = tf.Variable(weights_rng.normal(0, 0.5, (hidden, 1)).astype(np.float32), name="w_out")
        hidden_layer = tf.nn.tanh(tf.matmul(self.inputs, w_hidden) + b_hidden)
        self.prediction = tf.matmul(hidden_layer, w_out)
        self.loss = tf.reduce_mean(tf.square(self.prediction - self.targets))
        self.mean_error = tf.reduce_mean(tf.abs(self.prediction - self.targets))
        self.train_op = tf.train.AdamOptimizer(learning_rate).minimize(self.loss)

    def train_epoch(self, sess, points, targets):
        """One pass over the data in minibatches; the mean of the batch losses."""
        losses = []
        for start in range(0, len(points), BATCH):
            feed = {self.inputs: points[start:start + BATCH], self.targets: targets[start:start + BATCH]}
            _, batch_loss = sess.run([self.train_op, self.loss], feed_dict=feed)
            losses.append(batch_loss)
        return float(np.mean(losses))

    def evaluate(self, sess, points, targets):
        return sess.run([self.loss, self.mean_error], {self.inputs: points, self.targets: targets})


def main():
    rng = np.random.RandomState(4)
    train_points, train_targets = make_data(rng, 120)
    test_points, test_targets = make_data(rng, 40)

    model = MLPRegressor(FEATURES, HIDDEN)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(EPOCHS):
            print("RESULT epoch_%d_loss %r" % (epoch, model.train_epoch(sess, train_points, train_targets)))
        test_loss, test_error = model.evaluate(sess, test_points, test_targets)
        print("RESULT test_loss %r" % float(test_loss))
        print("RESULT test_mean_error %r" % float(test_error))
        first = sess.run(model.prediction, feed_dict={model.inputs: test_points[:3]})
        print("RESULT first_predictions %s" % [float(p) for p in first.ravel()])


if __name__ == "__main__":
    main()
