"""Train, checkpoint with tf.train.Saver, train on, then roll back to the checkpoint and evaluate.

A regression network with variable scopes, Adam and a global step. After `--steps` steps the
weights are saved as `<checkpoint_dir>/model.ckpt-<global step>`; training goes on for
`--extra_steps` steps (not saved), then the latest checkpoint is restored and evaluated, so the
results show the weights of the checkpoint, not the last ones. `--resume` skips training and only
restores the latest checkpoint in `--checkpoint_dir` (one written by an earlier run) and
evaluates it. Checkpoints go to a fresh temporary directory unless `--checkpoint_dir` is given.
"""
import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--extra_steps", type=int, default=4)
    parser.add_argument("--checkpoint_dir", default=None)
    parser.add_argument("--resume", action="store_true", help="only restore the latest checkpoint and evaluate")
    return parser.parse_args()


def main():
    args = parse_args()
    checkpoint_dir = args.checkpoint_dir or tempfile.mkdtemp(prefix="core_saver_resume_")
    rng = np.random.RandomState(5)
    data = rng.normal(size=(64, 4)).astype(np.float32)
    labels = (data @ np.array([[0.05], [-0.1], [0.2], [0.03]], np.float32) + 0.01).astype(np.float32)

    inputs = tf.placeholder(tf.float32, [None, 4], name="inputs")
    targets = tf.placeholder(tf.float32, [None, 1], name="targets")
    with tf.variable_scope("hidden"):
        weights = tf.get_variable("weights", [4, 8],
                                  initializer=tf.constant_initializer(rng.normal(0, 0.2, size=(4, 8))))
        biases = tf.get_variable("biases", [8], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(inputs, weights) + biases)
    with tf.variable_scope("output"):
        weights = tf.get_variable("weights", [8, 1],
                                  initializer=tf.constant_initializer(rng.normal(0, 0.2, size=(8, 1))))
        biases = tf.get_variable("biases", [1], initializer=tf.zeros_initializer())
        predictions = tf.matmul(hidden, weights) + biases
    loss = tf.reduce_mean(tf.square(predictions - targets))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    saver = tf.train.Saver(max_to_keep=3)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if not args.resume:
            for step in range(args.steps):
                sess.run(train_op, feed_dict={inputs: data, targets: labels})
            saved = saver.save(sess, os.path.join(checkpoint_dir, "model.ckpt"), global_step=global_step)
            print("saved", os.path.basename(saved))
            for extra_step in range(args.extra_steps):
                sess.run(train_op, feed_dict={inputs: data, targets: labels})
            print("RESULT loss_before_restore %r" % float(sess.run(loss, feed_dict={inputs: data, targets: labels})))
        saver.restore(sess, tf.train.latest_checkpoint(checkpoint_dir))
        print("RESULT restored_step %r" % float(sess.run(global_step)))
        print("RESULT restored_loss %r" % float(sess.run(loss, feed_dict={inputs: data, targets: labels})))
        restored_predictions = sess.run(predictions, feed_dict={inputs: data[:3]})
        print("RESULT restored_predictions %s" % [round(float(v), 6) for v in restored_predictions.ravel()])


if __name__ == "__main__":
    main()
