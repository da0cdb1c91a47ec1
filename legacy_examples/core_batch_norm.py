"""Batch-normalised MLP: tf.layers.batch_normalization with an is_training switch and the
UPDATE_OPS control dependency that keeps the moving averages up to date.

Kernels come from seeded NumPy arrays, so TF1 and TF2 runs agree number for number,
including the evaluation-mode outputs that read the moving averages.
"""
import numpy as np
import tensorflow as tf

STEPS = 6

rng = np.random.RandomState(17)
x_data = rng.normal(1.0, 2.0, size=(64, 5)).astype(np.float32)
y_data = (x_data[:, :2].sum(axis=1, keepdims=True) > 2.0).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.float32, [None, 1])
is_training = tf.placeholder(tf.bool, [], name="is_training")

h = tf.layers.dense(x, 8, use_bias=False, kernel_initializer=tf.constant_initializer(rng.normal(0, 0.5, (5, 8))))
h = tf.layers.batch_normalization(h, momentum=0.9, training=is_training)
h = tf.nn.relu(h)
logits = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(rng.normal(0, 0.5, (8, 1))))
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))

update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
with tf.control_dependencies(update_ops):
    train_op = tf.train.GradientDescentOptimizer(0.2).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        _, step_loss = sess.run([train_op, loss], {x: x_data, y: y_data, is_training: True})
        print("RESULT train_loss_%d %r" % (step, float(step_loss)))
    eval_loss = sess.run(loss, {x: x_data, y: y_data, is_training: False})
    print("RESULT eval_loss %r" % float(eval_loss))
