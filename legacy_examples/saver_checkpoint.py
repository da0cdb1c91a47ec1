"""Train a linear model, checkpoint it with tf.train.Saver, restore it into a fresh graph.

The restored model must reproduce the trained model's predictions exactly.
Usage: saver_checkpoint.py [--steps N] [--checkpoint_dir DIR]  (default: a temp dir)
"""
import argparse
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf


def build_graph():
    """Linear regression y = xW + b; returns the tensors the caller needs."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    weights = tf.get_variable("weights", [3, 1], initializer=tf.random_normal_initializer(seed=8))
    bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    prediction = tf.add(tf.matmul(x, weights), bias, name="prediction")
    loss = tf.reduce_mean(tf.square(prediction - y))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return x, y, prediction, loss, train_op


def train_and_save(args, features, targets):
    with tf.Graph().as_default():
        tf.set_random_seed(8)
        x, y, prediction, loss, train_op = build_graph()
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(args.steps):
                sess.run(train_op, {x: features, y: targets})
                if (step + 1) % 10 == 0:
                    path = saver.save(sess, os.path.join(args.checkpoint_dir, "model.ckpt"),
                                      global_step=step + 1)
                    print("saved %s" % os.path.basename(path))
            print("RESULT final_loss %r" % float(sess.run(loss, {x: features, y: targets})))
            return sess.run(prediction, {x: features})


def restore_and_predict(args, features):
    with tf.Graph().as_default():
        x, _, prediction, _, _ = build_graph()
        with tf.Session() as sess:
            checkpoint = tf.train.latest_checkpoint(args.checkpoint_dir)
            print("restoring %s" % os.path.basename(checkpoint))
            tf.train.Saver().restore(sess, checkpoint)
            return sess.run(prediction, {x: features})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--checkpoint_dir", default=None)
    args = parser.parse_args()
    scratch = args.checkpoint_dir is None
    if scratch:
        args.checkpoint_dir = tempfile.mkdtemp(prefix="saver_checkpoint_")

    rng = np.random.RandomState(8)
    features = rng.normal(size=(50, 3)).astype(np.float32)
    targets = features.dot([[1.5], [-2.0], [0.5]]).astype(np.float32) + 0.3
    try:
        trained = train_and_save(args, features, targets)
        restored = restore_and_predict(args, features)
    finally:
        if scratch:
            shutil.rmtree(args.checkpoint_dir)
    print("RESULT outputs_match %r" % float(np.array_equal(trained, restored)))
    print("RESULT restored_predictions %s" % json.dumps([float(v) for v in restored[:5, 0]]))


if __name__ == "__main__":
    main()
