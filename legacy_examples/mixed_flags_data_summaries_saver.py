"""A training script the way many TF1 repos wrote them: tf.app.flags, tf.logging, a tf.data
pipeline read through a one-shot iterator, v1 summaries written by a FileWriter, and a Saver
checkpointing at the end, all in a main() run by tf.app.run().

A two-layer regression on seeded data; the summaries (loss, and the output bias) are written
every 5 steps to --logdir; the checkpoint goes to --checkpoint_dir (both temporary by default).
"""
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 40, "training steps")
flags.DEFINE_float("learning_rate", 0.05, "Adam learning rate")
flags.DEFINE_string("logdir", "", "event file folder (default: a temporary one)")
flags.DEFINE_string("checkpoint_dir", "", "checkpoint folder (default: a temporary one)")
FLAGS = flags.FLAGS


def main(_):
    tf.set_random_seed(23)
    rng = np.random.RandomState(23)
    features = rng.randn(200, 6).astype(np.float32)
    targets = np.sin(features[:, :1]) + 0.1 * features[:, 1:2]
    hidden_init = (rng.randn(6, 12) * 0.4).astype(np.float32)
    output_init = (rng.randn(12, 1) * 0.4).astype(np.float32)

    dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(200, seed=5).batch(25).repeat()
    batch_x, batch_y = dataset.make_one_shot_iterator().get_next()

    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("weights", initializer=hidden_init)
        b1 = tf.get_variable("biases", [12], initializer=tf.zeros_initializer())
    with tf.variable_scope("output"):
        w2 = tf.get_variable("weights", initializer=output_init)
        b2 = tf.get_variable("biases", [1], initializer=tf.zeros_initializer())
    prediction = tf.matmul(tf.nn.tanh(tf.matmul(batch_x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.square(prediction - batch_y))
    train_op = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(loss)

    tf.summary.scalar("loss", loss)
    tf.summary.scalar("output_bias", tf.reshape(b2, []))
    merged = tf.summary.merge_all()
    saver = tf.train.Saver()

    logdir = FLAGS.logdir or tempfile.mkdtemp(prefix="mixed_logs_")
    checkpoint_dir = FLAGS.checkpoint_dir or tempfile.mkdtemp(prefix="mixed_ckpt_")
    losses = []
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(logdir)
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            if step % 5 == 0:
                writer.add_summary(sess.run(merged), step)
            _, loss_value = sess.run([train_op, loss])
            losses.append(float(loss_value))
            if step % 10 == 0:
                tf.logging.info("step %d: loss %.4f", step, loss_value)
        writer.close()
        saved = saver.save(sess, os.path.join(checkpoint_dir, "model.ckpt"))
        tf.logging.info("saved %s", saved)
    for folder, given in ((logdir, FLAGS.logdir), (checkpoint_dir, FLAGS.checkpoint_dir)):
        if not given:
            shutil.rmtree(folder)

    print("RESULT losses %s" % json.dumps(losses[::8]))
    print("RESULT last_loss %r" % losses[-1])


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run()
