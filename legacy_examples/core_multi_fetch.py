"""Regression MLP with a weights dict, dropout and separate train / eval / predict runs.

The aymericdamien-tutorial style: weights and biases in dicts, a `multilayer_perceptron`
helper, keep_prob as a placeholder with a default, and several sess.run sites that fetch
different things and feed different subsets of the placeholders.
"""
import numpy as np
import tensorflow as tf

EPOCHS = 15
KEEP_PROB = 1.0  # no dropout while training this small model
rng = np.random.RandomState(5)
train_x = rng.uniform(-2, 2, size=(150, 3)).astype(np.float32)
train_y = np.sin(train_x.sum(axis=1, keepdims=True)).astype(np.float32)
test_x = rng.uniform(-2, 2, size=(40, 3)).astype(np.float32)
test_y = np.sin(test_x.sum(axis=1, keepdims=True)).astype(np.float32)

X = tf.placeholder("float", [None, 3])
Y = tf.placeholder("float", [None, 1])
keep_prob = tf.placeholder_with_default(1.0, shape=[])

weights = {
    'h1': tf.Variable(rng.normal(0, 0.5, size=(3, 20)).astype(np.float32)),
    'out': tf.Variable(rng.normal(0, 0.5, size=(20, 1)).astype(np.float32)),
}
biases = {
    'b1': tf.Variable(np.zeros(20, np.float32)),
    'out': tf.Variable(np.zeros(1, np.float32)),
}


def multilayer_perceptron(x, keep_prob):
    # Hidden layer with tanh activation, then dropout
    layer_1 = tf.nn.tanh(tf.add(tf.matmul(x, weights['h1']), biases['b1']))
    layer_1 = tf.nn.dropout(layer_1, keep_prob)
    return tf.matmul(layer_1, weights['out']) + biases['out']


def mean_squared_error(prediction, target):
    return tf.reduce_mean(tf.square(prediction - target))


pred = multilayer_perceptron(X, keep_prob)
cost = mean_squared_error(pred, Y)
optimizer = tf.train.AdagradOptimizer(learning_rate=0.3).minimize(cost)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(EPOCHS):
        _, c = sess.run([optimizer, cost], feed_dict={X: train_x, Y: train_y, keep_prob: KEEP_PROB})
        if epoch < 4:
            print("RESULT train_cost_%d %r" % (epoch, float(c)))
    # Evaluation: dropout off (keep_prob keeps its default of 1.0)
    test_cost = sess.run(cost, feed_dict={X: test_x, Y: test_y})
    print("RESULT test_cost %r" % float(test_cost))
    print("Testing cost: %.6f" % test_cost)
    predicted = sess.run(pred, feed_dict={X: test_x[:4], keep_prob: 1.0})
    print("RESULT test_predictions %s" % [round(float(p), 6) for p in predicted[:, 0]])
    worst = np.max(np.abs(predicted - test_y[:4]))
    print("RESULT worst_error %r" % float(worst))
