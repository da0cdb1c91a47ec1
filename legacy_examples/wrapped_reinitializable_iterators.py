"""Logistic regression fed by tf.data iterators the way TensorFlow 1.4-1.13 taught it (the "Importing
Data" guide, Stanford's CS 20): one reinitializable iterator made from the training set's structure,
`tf.data.Iterator.from_structure(train_data.output_types, train_data.output_shapes)`, switched between
the training and the test set by the initializers `make_initializer` makes, each epoch read to its end
in a `try: while True: ... except tf.errors.OutOfRangeError:` loop; then an initializable iterator over
a dataset built from placeholders, initialised with the data to predict fed to its initializer.

TFM201 does not model these iterators, so the graph stays TF1 code, wrapped once by
`tf.compat.v1.wrap_function` (TFM203): each iterator is given a shared name, so that the functions
pruned for the initializers and for the reads reach the same iterator.
"""
import json

import numpy as np
import tensorflow as tf

FEATURES = 5
CLASSES = 3
BATCH = 16
EPOCHS = 4

rng = np.random.RandomState(0)
centers = rng.normal(0.0, 2.0, size=(CLASSES, FEATURES)).astype(np.float32)


def make_set(count):
    labels = rng.randint(0, CLASSES, size=count)
    images = (centers[labels] + rng.normal(0.0, 1.0, size=(count, FEATURES))).astype(np.float32)
    return images, np.eye(CLASSES, dtype=np.float32)[labels]


train = make_set(96)
test = make_set(40)
unseen = make_set(8)[0]

train_data = tf.data.Dataset.from_tensor_slices(train).shuffle(96, seed=3).batch(BATCH)
test_data = tf.data.Dataset.from_tensor_slices(test).batch(BATCH)
iterator = tf.data.Iterator.from_structure(train_data.output_types, train_data.output_shapes)
images, labels = iterator.get_next()
train_init = iterator.make_initializer(train_data)
test_init = iterator.make_initializer(test_data)

w = tf.Variable(tf.zeros([FEATURES, CLASSES]), name="weights")
b = tf.Variable(tf.zeros([CLASSES]), name="bias")
logits = tf.matmul(images, w) + b
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
optimizer = tf.train.AdamOptimizer(0.05).minimize(loss)
correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(labels, 1)), tf.int32))

to_predict = tf.placeholder(tf.float32, [None, FEATURES], name="to_predict")
predict_iterator = tf.data.Dataset.from_tensor_slices(to_predict).batch(4).make_initializable_iterator()
predicted = tf.argmax(tf.matmul(predict_iterator.get_next(), w) + b, 1)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    epoch_losses = []
    for epoch in range(EPOCHS):
        sess.run(train_init)
        total, batches = 0.0, 0
        try:
            while True:
                _, batch_loss = sess.run([optimizer, loss])
                total += batch_loss
                batches += 1
        except tf.errors.OutOfRangeError:
            pass
        epoch_losses.append(round(float(total) / batches, 5))
    print("RESULT epoch_losses %s" % json.dumps(epoch_losses))

    sess.run(test_init)
    right = 0
    try:
        while True:
            right += sess.run(correct)
    except tf.errors.OutOfRangeError:
        pass
    print("RESULT test_accuracy %s" % json.dumps(round(float(right) / len(test[0]), 5)))

    sess.run(predict_iterator.initializer, feed_dict={to_predict: unseen})
    predictions = []
    while True:
        try:
            predictions += sess.run(predicted).tolist()
        except tf.errors.OutOfRangeError:
            break
    print("RESULT predictions %s" % json.dumps(predictions))
