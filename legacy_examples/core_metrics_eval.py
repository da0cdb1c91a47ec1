"""Softmax classifier trained on minibatches and evaluated with streaming metrics.

tf.metrics.accuracy and tf.metrics.mean keep running totals in local variables: each
evaluation resets them by running tf.local_variables_initializer(), feeds the evaluation data
batch by batch through the update ops, then reads the values once. Weights start from
seeded NumPy arrays, so runs are reproducible.
"""
import numpy as np
import tensorflow as tf

EPOCHS = 3
BATCH = 20
rng = np.random.RandomState(3)
features = rng.normal(size=(200, 6)).astype(np.float32)
classes = (features[:, 0] - features[:, 1] > 0).astype(np.int64) + (features[:, 2] > 0.8).astype(np.int64)
train_x, train_y = features[:140], classes[:140]
eval_x, eval_y = features[140:], classes[140:]

x = tf.placeholder(tf.float32, [None, 6], name="x")
y = tf.placeholder(tf.int64, [None], name="y")

w1 = tf.Variable(rng.normal(0, 0.3, size=(6, 16)).astype(np.float32), name="w1")
b1 = tf.Variable(np.zeros(16, np.float32), name="b1")
w2 = tf.Variable(rng.normal(0, 0.3, size=(16, 3)).astype(np.float32), name="w2")
b2 = tf.Variable(np.zeros(3, np.float32), name="b2")
hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
logits = tf.matmul(hidden, w2) + b2
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
predictions = tf.argmax(logits, axis=1)
train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)

# Streaming metrics: (value, update_op) pairs over local variables.
accuracy, accuracy_update = tf.metrics.accuracy(labels=y, predictions=predictions)
mean_loss, mean_loss_update = tf.metrics.mean(loss)
reset_metrics = tf.local_variables_initializer()

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(EPOCHS):
        order = rng.permutation(len(train_x))
        for start in range(0, len(train_x), BATCH):
            batch = order[start:start + BATCH]
            sess.run(train_op, feed_dict={x: train_x[batch], y: train_y[batch]})
        sess.run(reset_metrics)
        for start in range(0, len(eval_x), BATCH):
            sess.run([accuracy_update, mean_loss_update],
                     feed_dict={x: eval_x[start:start + BATCH], y: eval_y[start:start + BATCH]})
        epoch_accuracy, epoch_loss = sess.run([accuracy, mean_loss])
        print("epoch %d: eval accuracy %.3f, eval loss %.4f" % (epoch, epoch_accuracy, epoch_loss))
        print("RESULT eval_accuracy_%d %r" % (epoch, float(epoch_accuracy)))
        print("RESULT eval_loss_%d %r" % (epoch, float(epoch_loss)))
    # The update op returns the running value after its batch.
    sess.run(reset_metrics)
    running = [float(sess.run(accuracy_update, {x: eval_x[i:i + 30], y: eval_y[i:i + 30]})) for i in (0, 30)]
    print("RESULT running_accuracy %s" % running)
