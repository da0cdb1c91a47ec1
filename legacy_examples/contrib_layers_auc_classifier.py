"""A binary classifier in the style of the TF 1.x template applications: weights made with
`tf.get_variable` under a `variable_scope`, initialised by `tf.contrib.layers.variance_scaling_initializer`
and regularised by `tf.contrib.layers.l2_regularizer` (collected through
`tf.losses.get_regularization_loss`), inputs flattened by `tf.contrib.layers.flatten`, a
`tf.contrib.layers.bias_add` and a `tf.contrib.layers.layer_norm`, and the AUC tracked by
`tf.contrib.metrics.streaming_auc` over the evaluation batches.

Seeded data and initializers; a few Adam steps; the losses, the AUC and the weights' sums are printed.
"""
import json

import numpy as np
import tensorflow as tf

tf.set_random_seed(7)
rng = np.random.RandomState(7)
images = rng.randn(64, 4, 4, 2).astype(np.float32)
labels = (images.mean(axis=(1, 2, 3)) > 0).astype(np.float32).reshape(-1, 1)

x = tf.placeholder(tf.float32, [None, 4, 4, 2])
y = tf.placeholder(tf.float32, [None, 1])

with tf.variable_scope("classifier"):
    flat = tf.contrib.layers.flatten(x)
    w1 = tf.get_variable("w1", [32, 16], initializer=tf.contrib.layers.variance_scaling_initializer(seed=1),
                         regularizer=tf.contrib.layers.l2_regularizer(0.01))
    hidden = tf.nn.relu(tf.contrib.layers.layer_norm(tf.contrib.layers.bias_add(tf.matmul(flat, w1))))
    w2 = tf.get_variable("w2", [16, 1], initializer=tf.contrib.layers.variance_scaling_initializer(seed=2),
                         regularizer=tf.contrib.layers.l2_regularizer(0.01))
    logits = tf.matmul(hidden, w2)

loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
total_loss = loss + tf.losses.get_regularization_loss()
train_op = tf.train.AdamOptimizer(0.01).minimize(total_loss)
auc, auc_update = tf.contrib.metrics.streaming_auc(tf.nn.sigmoid(logits), tf.cast(y, tf.bool), num_thresholds=50)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(tf.local_variables_initializer())
    losses = []
    for step in range(8):
        batch = slice(8 * step, 8 * step + 8)
        _, value = sess.run([train_op, total_loss], feed_dict={x: images[batch], y: labels[batch]})
        losses.append(float(value))
    for start in range(0, 64, 16):
        sess.run(auc_update, feed_dict={x: images[start:start + 16], y: labels[start:start + 16]})
    final_auc = sess.run(auc)
    sums = [float(v.sum()) for v in sess.run(tf.trainable_variables())]

print("RESULT losses %s" % json.dumps(losses))
print("RESULT auc %s" % json.dumps(float(final_auc)))
print("RESULT weight_sums %s" % json.dumps(sums))
