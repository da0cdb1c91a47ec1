"""Epoch-bounded tf.data input in a TF1 graph, read until it runs out.

A small classifier built with `tf.layers.dense` on the batches of a pipeline (`map` normalising
the features with TF ops, a seeded `shuffle`, `batch`, `repeat(EPOCHS)`), its iterator created
inline: `features, labels = dataset.make_one_shot_iterator().get_next()`. Training runs
`sess.run` until `tf.errors.OutOfRangeError`, counting steps with a global step.
"""
import json

import numpy as np
import tensorflow as tf

EPOCHS = 3
BATCH = 25

tf.set_random_seed(5)
rng = np.random.RandomState(5)
centers = rng.randn(3, 6).astype(np.float32) * 2.0
raw_labels = rng.randint(0, 3, size=300)
raw_features = (centers[raw_labels] + rng.randn(300, 6).astype(np.float32)) * 10.0 + 5.0
hidden_init = (rng.randn(6, 16) * 0.3).astype(np.float32)
output_init = (rng.randn(16, 3) * 0.3).astype(np.float32)


def normalise(x, y):
    return (x - 5.0) / 10.0, tf.cast(y, tf.int32)


dataset = tf.data.Dataset.from_tensor_slices((raw_features, raw_labels))
dataset = dataset.map(normalise).shuffle(300, seed=21).batch(BATCH).repeat(EPOCHS)
features, labels = dataset.make_one_shot_iterator().get_next()

global_step = tf.train.get_or_create_global_step()
hidden = tf.layers.dense(features, 16, activation=tf.nn.relu,
                         kernel_initializer=tf.constant_initializer(hidden_init))
logits = tf.layers.dense(hidden, 3, kernel_initializer=tf.constant_initializer(output_init))
loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    while True:
        try:
            _, loss_value, step = sess.run([train_op, loss, global_step])
        except tf.errors.OutOfRangeError:
            break
        losses.append(float(loss_value))
    print("trained %d steps" % step)

print("RESULT steps %r" % float(step))
print("RESULT losses %s" % json.dumps(losses[::6]))
print("RESULT last_loss %r" % losses[-1])
