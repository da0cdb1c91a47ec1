"""A script whose main block builds a dropout network, keeps its weights in a graph collection for
an L2 penalty, writes v1 summaries (merged, fetched with the train op, written by a FileWriter given
the session's graph) and evaluates with dropout off.

The collection is outside what TFM201 models, so the graph stays TF1 code, wrapped once by
`tf.compat.v1.wrap_function` (TFM203); the FileWriter becomes `TF1FileWriter`, which writes the
fetched summary protos with TF2's summary writer.
"""
import shutil
import tempfile

import numpy as np
import tensorflow as tf

STEPS = 60

if __name__ == "__main__":
    rng = np.random.RandomState(5)
    features = rng.normal(size=(240, 8)).astype(np.float32)
    labels = (features[:, :3].sum(axis=1) > 0).astype(np.int64)

    tf.set_random_seed(21)
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    keep_prob = tf.placeholder(tf.float32, name="keep_prob")
    w1 = tf.Variable(rng.normal(0, 0.3, size=(8, 16)).astype(np.float32), name="w1")
    w2 = tf.Variable(rng.normal(0, 0.3, size=(16, 2)).astype(np.float32), name="w2")
    for weights in (w1, w2):
        tf.add_to_collection("l2_weights", weights)
    hidden = tf.nn.dropout(tf.nn.relu(tf.matmul(x, w1)), keep_prob)
    logits = tf.matmul(hidden, w2)
    cross_entropy = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    loss = cross_entropy + 1e-3 * tf.add_n([tf.nn.l2_loss(w) for w in tf.get_collection("l2_weights")])
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    tf.summary.histogram("w1", w1)
    merged = tf.summary.merge_all()

    log_dir = tempfile.mkdtemp(prefix="wrapped_summaries_dropout_")
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(log_dir, sess.graph)
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            batch = slice(step % 6 * 40, step % 6 * 40 + 40)
            summary, _ = sess.run([merged, train_op], {x: features[batch], y: labels[batch], keep_prob: 0.7})
            writer.add_summary(summary, step)
        writer.close()
        print("RESULT loss %r" % float(sess.run(loss, {x: features, y: labels, keep_prob: 1.0})))
        print("RESULT accuracy %r" % float(sess.run(accuracy, {x: features, y: labels, keep_prob: 1.0})))
    shutil.rmtree(log_dir)
