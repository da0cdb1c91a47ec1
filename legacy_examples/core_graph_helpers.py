"""Deep-MNIST-tutorial style: weight_variable / bias_variable factories and small op helpers,
built inside `with tf.Graph().as_default():` with name scopes, evaluated with `.eval()`.

Initial weights are random (truncated normal), so this example's numbers are compared by
the equivalence harness, which aligns the weights; the example checks it runs.
"""
import numpy as np
import tensorflow as tf

STEPS = 30


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    initial = tf.constant(0.1, shape=shape)
    return tf.Variable(initial)


def leaky_relu(features, alpha=0.2):
    return tf.maximum(alpha * features, features)


rng = np.random.RandomState(0)
batch = rng.normal(size=(32, 10)).astype(np.float32)
target = (batch[:, :1] * 2.0 - batch[:, 1:2]).astype(np.float32)

with tf.Graph().as_default():
    tf.set_random_seed(0)
    with tf.name_scope("inputs"):
        x = tf.placeholder(tf.float32, [None, 10])
        y_ = tf.placeholder(tf.float32, [None, 1])
    with tf.name_scope("hidden"):
        W_fc1 = weight_variable([10, 24])
        b_fc1 = bias_variable([24])
        h_fc1 = leaky_relu(tf.matmul(x, W_fc1) + b_fc1)
    with tf.name_scope("output"):
        W_fc2 = weight_variable([24, 1])
        b_fc2 = bias_variable([1])
        y = tf.matmul(h_fc1, W_fc2) + b_fc2
    loss = tf.reduce_mean(tf.square(y - y_))
    train_step = tf.train.GradientDescentOptimizer(0.05).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(STEPS):
            train_step.run(feed_dict={x: batch, y_: target})
            if i % 10 == 0:
                print("step %d, loss %g" % (i, loss.eval(feed_dict={x: batch, y_: target})))
        final = loss.eval(feed_dict={x: batch, y_: target})
        print("RESULT final_loss %r" % float(final))
        print("RESULT improved %r" % float(final < 1.0))
