"""A GRU sequence regressor fed by a tf.data one-shot iterator, with v1 summaries.

Seeded sequences (10 steps of 2 features) are batched by a repeated, seeded-shuffle dataset; a
GRUCell run by tf.nn.dynamic_rnn reads them and the last output step (`outputs[:, -1]`) feeds a
linear head predicting the running mean of the first feature. Momentum SGD trains it; the loss is
logged every 4 steps through merge_all / FileWriter into a temporary folder.
"""
import json
import shutil
import tempfile

import numpy as np
import tensorflow as tf

STEPS = 24

tf.set_random_seed(31)
rng = np.random.RandomState(31)
sequences = rng.randn(160, 10, 2).astype(np.float32)
targets = sequences[:, :, :1].mean(axis=1)
head_init = (rng.randn(8, 1) * 0.5).astype(np.float32)

dataset = tf.data.Dataset.from_tensor_slices((sequences, targets)).shuffle(160, seed=9).batch(20).repeat()
batch_sequences, batch_targets = dataset.make_one_shot_iterator().get_next()

cell = tf.nn.rnn_cell.GRUCell(8)
outputs, state = tf.nn.dynamic_rnn(cell, batch_sequences, dtype=tf.float32)
head = tf.Variable(head_init, name="head")
prediction = tf.matmul(outputs[:, -1], head)
loss = tf.reduce_mean(tf.square(prediction - batch_targets))
train_op = tf.train.MomentumOptimizer(0.1, momentum=0.9).minimize(loss)

tf.summary.scalar("loss", loss)
merged = tf.summary.merge_all()

log_dir = tempfile.mkdtemp(prefix="gru_logs_")
losses = []
with tf.Session() as sess:
    writer = tf.summary.FileWriter(log_dir)
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        _, loss_value = sess.run([train_op, loss])
        losses.append(float(loss_value))
        if step % 4 == 0:
            writer.add_summary(sess.run(merged), step)
    writer.close()
shutil.rmtree(log_dir)

print("RESULT losses %s" % json.dumps(losses[::4]))
print("RESULT last_loss %r" % losses[-1])
