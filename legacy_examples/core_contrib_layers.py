"""Regression MLP built from tf.contrib.layers, configured from the command line.

tf.contrib.layers.fully_connected applies ReLU unless told otherwise (activation_fn=None for
the output layer). Weights come from seeded NumPy arrays through tf.constant_initializer, so
runs are reproducible; biases keep contrib's default zero initializer.
"""
import argparse

import numpy as np
import tensorflow as tf
from tensorflow.contrib import layers


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=10)
    parser.add_argument("--learning_rate", type=float, default=0.05)
    return parser.parse_args()


def main():
    args = parse_args()
    rng = np.random.RandomState(5)
    data = rng.uniform(-1, 1, size=(96, 4)).astype(np.float32)
    target = (np.sin(2 * data[:, :1]) + data[:, 1:2] * data[:, 2:3]).astype(np.float32)

    inputs = tf.placeholder(tf.float32, [None, 4], name="inputs")
    targets = tf.placeholder(tf.float32, [None, 1], name="targets")

    hidden = tf.contrib.layers.fully_connected(
        inputs, args.hidden, weights_initializer=tf.constant_initializer(rng.normal(0, 0.5, size=(4, args.hidden))))
    hidden = layers.fully_connected(
        hidden, args.hidden, activation_fn=tf.nn.tanh,
        weights_initializer=tf.constant_initializer(rng.normal(0, 0.5, size=(args.hidden, args.hidden))))
    prediction = layers.fully_connected(
        hidden, 1, activation_fn=None, scope="prediction",
        weights_initializer=tf.constant_initializer(rng.normal(0, 0.5, size=(args.hidden, 1))))
    loss = tf.losses.mean_squared_error(targets, prediction)
    train_op = tf.train.AdamOptimizer(args.learning_rate).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("RESULT initial_loss %r" % float(sess.run(loss, {inputs: data, targets: target})))
        for step in range(args.steps):
            _, loss_value = sess.run([train_op, loss], {inputs: data, targets: target})
            if step % 10 == 9:
                print("step %d: loss %.5f" % (step + 1, loss_value))
        print("RESULT final_loss %r" % float(loss_value))
        sample = sess.run(prediction, {inputs: data[:3]})
        print("RESULT predictions %s" % [float(v) for v in sample.ravel()])


if __name__ == "__main__":
    main()
