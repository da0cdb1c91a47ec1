"""Training from a tf.data pipeline the TF1 way: a one-shot iterator read inside the graph.

A linear regression on seeded synthetic data. The dataset is shuffled with a fixed seed, batched
and repeated; `iterator.get_next()` gives the batch tensors the model is built on, so each
`sess.run` of the train op pulls the next batch, with no feed_dict. Evaluation on the whole data
set goes through a placeholder.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 60
BATCH = 32

tf.set_random_seed(7)
rng = np.random.RandomState(7)
features = rng.randn(256, 8).astype(np.float32)
true_weights = rng.randn(8, 1).astype(np.float32)
targets = features.dot(true_weights) + 0.1 * rng.randn(256, 1).astype(np.float32)

dataset = tf.data.Dataset.from_tensor_slices((features, targets))
dataset = dataset.shuffle(256, seed=11).batch(BATCH).repeat()
iterator = dataset.make_one_shot_iterator()
batch_x, batch_y = iterator.get_next()

weights = tf.Variable(np.zeros((8, 1), np.float32), name="weights")
bias = tf.Variable(np.zeros((1,), np.float32), name="bias")
loss = tf.reduce_mean(tf.square(tf.matmul(batch_x, weights) + bias - batch_y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

# The whole data set, fed: how well the trained model fits.
all_x = tf.placeholder(tf.float32, [None, 8])
all_y = tf.placeholder(tf.float32, [None, 1])
full_mse = tf.reduce_mean(tf.square(tf.matmul(all_x, weights) + bias - all_y))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(STEPS):
        _, loss_value = sess.run([train_op, loss])
        losses.append(float(loss_value))
        if step % 20 == 0:
            print("step %d: batch loss %.4f" % (step, loss_value))
    mse = sess.run(full_mse, feed_dict={all_x: features, all_y: targets})

print("RESULT batch_losses %s" % json.dumps(losses[::10]))
print("RESULT final_batch_loss %r" % losses[-1])
print("RESULT full_mse %r" % float(mse))
