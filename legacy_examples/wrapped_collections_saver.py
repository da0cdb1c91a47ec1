"""A main() that keeps its model's outputs in graph collections, trains with Adagrad on a decayed
learning rate, saves, restores in a new session and compares with a freshly initialised one.

Graph collections (`tf.add_to_collection` / `tf.get_collection`) are outside what tf-migrate's full
conversion models, so the graph stays TF1 code, wrapped once by `tf.compat.v1.wrap_function`, and
every run becomes a TF2 function pruned from it (TFM203).
"""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

STEPS = 60


def dense(inputs, size, name):
    with tf.variable_scope(name):
        rng = np.random.RandomState(len(name))
        weights = tf.get_variable("weights", initializer=rng.normal(0, 0.3, size=(int(inputs.shape[1]), size))
                                  .astype(np.float32))
        biases = tf.get_variable("biases", [size], initializer=tf.zeros_initializer())
        tf.add_to_collection("weights", weights)
        return tf.matmul(inputs, weights) + biases


def main():
    rng = np.random.RandomState(7)
    plane = np.array([[1.0], [-1.0], [0.5], [0.0]], np.float32)
    train_x = rng.normal(size=(256, 4)).astype(np.float32)
    train_y = (train_x @ plane > 0).astype(np.int64).ravel()
    test_x = rng.normal(size=(64, 4)).astype(np.float32)
    test_y = (test_x @ plane > 0).astype(np.int64).ravel()

    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    hidden = tf.nn.tanh(dense(x, 8, "hidden"))
    logits = dense(hidden, 2, "logits")
    tf.add_to_collection("outputs", logits)
    cross_entropy = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    penalty = 1e-3 * tf.add_n([tf.nn.l2_loss(w) for w in tf.get_collection("weights")])
    loss = cross_entropy + penalty
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(0.5, global_step, 20, 0.5, staircase=True)
    train_op = tf.train.AdagradOptimizer(learning_rate).minimize(loss, global_step=global_step)
    predictions = tf.argmax(tf.get_collection("outputs")[0], 1)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, y), tf.float32))
    saver = tf.train.Saver()

    checkpoint_dir = tempfile.mkdtemp(prefix="wrapped_collections_saver_")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            batch = slice(step % 8 * 32, step % 8 * 32 + 32)
            _, batch_loss = sess.run([train_op, loss], feed_dict={x: train_x[batch], y: train_y[batch]})
            if step % 20 == 0:
                print("step %d loss %.4f rate %.3f" % (step, batch_loss, sess.run(learning_rate)))
        print("RESULT train_loss %r" % float(batch_loss))
        print("RESULT global_step %d" % sess.run(global_step))
        saver.save(sess, os.path.join(checkpoint_dir, "model.ckpt"))

    with tf.Session() as sess:
        saver.restore(sess, os.path.join(checkpoint_dir, "model.ckpt"))
        print("RESULT test_accuracy %r" % float(accuracy.eval(feed_dict={x: test_x, y: test_y})))
        print("RESULT predicted %s" % [int(label) for label in sess.run(predictions, {x: test_x[:6]})])

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("RESULT untrained_accuracy %r" % float(sess.run(accuracy, {x: test_x, y: test_y})))
    shutil.rmtree(checkpoint_dir)


if __name__ == "__main__":
    main()
