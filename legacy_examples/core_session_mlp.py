"""Two-layer MLP on seeded blobs: the canonical TF1 script shape.

Module-level graph, NumPy-seeded weights, `with tf.Session() as sess:` and
`sess.run([train_op, loss], feed_dict=...)` in a training loop with a learning rate
fed each step, then separate evaluation and prediction runs (prediction feeds only
the inputs).
"""
import json

import numpy as np
import tensorflow as tf

N_FEATURES, N_HIDDEN, N_CLASSES = 6, 16, 3
STEPS = 25

rng = np.random.RandomState(7)
centres = rng.normal(0.0, 1.5, size=(N_CLASSES, N_FEATURES))
train_labels = rng.randint(0, N_CLASSES, size=200)
train_features = (centres[train_labels] + rng.normal(size=(200, N_FEATURES))).astype(np.float32)

# Inputs: a batch of feature vectors and their integer labels.
features = tf.placeholder(tf.float32, [None, N_FEATURES], name="features")
labels = tf.placeholder(tf.int64, [None], name="labels")
learning_rate = tf.placeholder(tf.float32, [], name="learning_rate")

# Parameters start from seeded NumPy arrays so that runs are reproducible.
W1 = tf.Variable(rng.normal(0.0, 0.3, size=(N_FEATURES, N_HIDDEN)).astype(np.float32), name="W1")
b1 = tf.Variable(np.zeros(N_HIDDEN, dtype=np.float32), name="b1")
W2 = tf.Variable(rng.normal(0.0, 0.3, size=(N_HIDDEN, N_CLASSES)).astype(np.float32), name="W2")
b2 = tf.Variable(np.zeros(N_CLASSES, dtype=np.float32), name="b2")

hidden = tf.nn.relu(tf.matmul(features, W1) + b1)
logits = tf.matmul(hidden, W2) + b2
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
train_op = tf.train.GradientDescentOptimizer(learning_rate=learning_rate).minimize(loss)

predictions = tf.argmax(logits, axis=1)
accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        rate = 0.3 * 0.95 ** step  # decayed by hand, fed like the data
        _, loss_value = sess.run([train_op, loss],
                                 feed_dict={features: train_features, labels: train_labels, learning_rate: rate})
        if step < 5:
            print("RESULT loss_step_%d %r" % (step, float(loss_value)))
        if step % 10 == 0:
            print("step", step, "loss", loss_value)

    train_accuracy = sess.run(accuracy, feed_dict={features: train_features, labels: train_labels})
    print("RESULT train_accuracy %r" % float(train_accuracy))
    # Prediction needs no labels: only the features are fed.
    probabilities = sess.run(tf.nn.softmax(logits), feed_dict={features: train_features[:3]})
    print("probabilities shape", probabilities.shape)
    print("RESULT probabilities %s" % json.dumps([round(float(p), 6) for p in probabilities.ravel()]))
