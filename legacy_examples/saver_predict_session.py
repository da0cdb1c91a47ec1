"""Train a classifier, save it, then restore it in a new session and predict: the tutorial shape.

One graph; a training session that ends with `saver.save(sess, path)`; a second session that
restores the checkpoint and evaluates and predicts on held-out data; a third that initialises the
variables again to compare with the untrained model. Each new TF1 session starts with the variables
uninitialised, so what the later sessions compute depends on the restore and the initializer run.
"""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

LEARNING_RATE = 0.5
TRAINING_STEPS = 40
DISPLAY_STEP = 10

# Synthetic two-class data: the label says on which side of a plane a point lies.
rng = np.random.RandomState(3)
plane = np.array([[1.0], [-1.0], [0.5], [0.0]], np.float32)
train_x = rng.normal(size=(200, 4)).astype(np.float32)
train_y = (train_x @ plane > 0).astype(np.int64).ravel()
test_x = rng.normal(size=(100, 4)).astype(np.float32)
test_y = (test_x @ plane > 0).astype(np.int64).ravel()

# Network parameters
x = tf.placeholder(tf.float32, [None, 4], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
W1 = tf.Variable(rng.normal(0, 0.3, size=(4, 16)).astype(np.float32), name="W1")
b1 = tf.Variable(tf.zeros([16]), name="b1")
W2 = tf.Variable(rng.normal(0, 0.3, size=(16, 2)).astype(np.float32), name="W2")
b2 = tf.Variable(tf.zeros([2]), name="b2")

# Model, loss and optimizer
hidden = tf.nn.relu(tf.matmul(x, W1) + b1)
logits = tf.matmul(hidden, W2) + b2
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
prediction = tf.argmax(logits, 1)
accuracy = tf.reduce_mean(tf.cast(tf.equal(prediction, y), tf.float32))

saver = tf.train.Saver()
checkpoint_dir = tempfile.mkdtemp(prefix="saver_predict_session_")
model_path = os.path.join(checkpoint_dir, "model.ckpt")

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(TRAINING_STEPS):
        _, train_loss = sess.run([train_op, loss], feed_dict={x: train_x, y: train_y})
        if step % DISPLAY_STEP == 0:
            print("Step %d, loss %.4f" % (step, train_loss))
    print("RESULT train_loss %r" % float(train_loss))
    save_path = saver.save(sess, model_path)
    print("Model saved in file: %s" % os.path.basename(save_path))

# A new session: restore the trained weights from the checkpoint and predict.
with tf.Session() as sess:
    saver.restore(sess, model_path)
    print("Model restored.")
    test_accuracy = sess.run(accuracy, feed_dict={x: test_x, y: test_y})
    print("RESULT test_accuracy %r" % float(test_accuracy))
    predicted = sess.run(prediction, feed_dict={x: test_x[:8]})
    print("RESULT predicted %s" % [int(label) for label in predicted])
    restored_loss = sess.run(loss, feed_dict={x: test_x, y: test_y})
    print("RESULT restored_loss %r" % float(restored_loss))

# Another new session: the untrained network, for comparison.
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    untrained_accuracy = sess.run(accuracy, feed_dict={x: test_x, y: test_y})
    print("RESULT untrained_accuracy %r" % float(untrained_accuracy))

shutil.rmtree(checkpoint_dir)
