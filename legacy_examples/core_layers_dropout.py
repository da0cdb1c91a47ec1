"""Dense network with tf.layers.dropout switched by an `is_training` placeholder.

is_training defaults to False, so evaluation runs leave it out and training runs feed True.
Weights use the layers' default (Glorot) initializers and dropout is random, so this
example's numbers are only comparable after the harness aligns weights and randomness.
"""
import numpy as np
import tensorflow as tf

STEPS = 40

tf.set_random_seed(42)
rng = np.random.RandomState(42)
x_train = rng.normal(size=(120, 8)).astype(np.float32)
y_train = (x_train[:, 0] * x_train[:, 1] > 0).astype(np.int32)

inputs = tf.placeholder(tf.float32, shape=(None, 8), name="inputs")
labels = tf.placeholder(tf.int32, shape=(None,), name="labels")
is_training = tf.placeholder_with_default(False, shape=[], name="is_training")

net = tf.layers.dense(inputs, 32, activation=tf.nn.relu)
net = tf.layers.dropout(net, rate=0.25, training=is_training)
net = tf.layers.dense(net, 32, activation=tf.nn.relu)
logits = tf.layers.dense(net, 2)

loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), labels), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    start_accuracy = sess.run(accuracy, {inputs: x_train, labels: y_train})
    for step in range(STEPS):
        sess.run(train_op, {inputs: x_train, labels: y_train, is_training: True})
    end_accuracy = sess.run(accuracy, {inputs: x_train, labels: y_train})
    print("accuracy %.3f -> %.3f" % (start_accuracy, end_accuracy))
    print("RESULT final_accuracy %r" % float(end_accuracy))
    print("RESULT learned %r" % float(end_accuracy > start_accuracy))
