"""Softmax classifier with variable scopes, Adam, a global step and a decaying learning rate.

Everything lives in main(), configured from the command line. Weights come from
tf.get_variable with constant initializers (seeded NumPy), so names keep their
scope paths (`layer1/weights`) and runs are reproducible.
"""
import argparse

import numpy as np
import tensorflow as tf


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--learning_rate", type=float, default=0.05)
    return parser.parse_args()


def main():
    args = parse_args()
    rng = np.random.RandomState(11)
    data = rng.normal(size=(128, 5)).astype(np.float32)
    classes = (data[:, 0] + data[:, 1] > 0).astype(np.int32) + (data[:, 2] > 1).astype(np.int32)

    inputs = tf.placeholder(tf.float32, [None, 5], name="inputs")
    targets = tf.placeholder(tf.int32, [None], name="targets")

    with tf.variable_scope("layer1"):
        weights = tf.get_variable("weights", [5, 12],
                                  initializer=tf.constant_initializer(rng.normal(0, 0.4, size=(5, 12))))
        biases = tf.get_variable("biases", [12], initializer=tf.zeros_initializer())
        hidden = tf.nn.tanh(tf.matmul(inputs, weights) + biases)
    with tf.variable_scope("output"):
        weights = tf.get_variable("weights", [12, 3],
                                  initializer=tf.constant_initializer(rng.normal(0, 0.4, size=(12, 3))))
        biases = tf.get_variable("biases", [3], initializer=tf.zeros_initializer())
        logits = tf.matmul(hidden, weights) + biases

    one_hot = tf.one_hot(targets, depth=3)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=one_hot, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(args.learning_rate, global_step, decay_steps=5, decay_rate=0.5,
                                               staircase=True)
    optimizer = tf.train.AdamOptimizer(learning_rate)
    train_op = optimizer.minimize(loss, global_step=global_step)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(args.steps):
            results = sess.run({"train": train_op, "loss": loss, "step": global_step},
                               feed_dict={inputs: data, targets: classes})
            print("RESULT loss_step_%d %r" % (results["step"], float(results["loss"])))
        final_logits = sess.run(logits, feed_dict={inputs: data[:2]})
        print("RESULT final_logits %s" % [round(float(v), 6) for v in final_logits.ravel()])


if __name__ == "__main__":
    main()
