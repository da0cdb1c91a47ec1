"""A sentence classifier in the shape of dennybritz's cnn-text-classification-tf / brightmart's TextCNN.

A `TextCNN` class: an embedding matrix `tf.Variable(tf.random_uniform(...))` read by
`tf.nn.embedding_lookup` and `tf.expand_dims`, one `tf.nn.conv2d` + ReLU + `tf.nn.max_pool` over the
whole sentence per filter size (filters from `tf.truncated_normal`, biases `tf.constant(0.1)`) in
`tf.name_scope("conv-maxpool-%s")`, `tf.concat` / `tf.reshape` of the pooled features,
`tf.nn.dropout` with a `dropout_keep_prob` placeholder, an output layer from `tf.get_variable` with
`tf.contrib.layers.xavier_initializer()` and `tf.nn.xw_plus_b`, `tf.nn.l2_loss` regularisation,
`tf.nn.softmax_cross_entropy_with_logits`, `predictions` / `accuracy`. Training code in the train.py
style: `with tf.Graph().as_default()`, a `tf.ConfigProto` session used through `sess.as_default()`,
`global_step = tf.Variable(0, name="global_step", trainable=False)`, `tf.train.exponential_decay`,
Adam through `compute_gradients` / `apply_gradients(global_step=...)`, nested `train_step` /
`dev_step` functions, a `batch_iter` generator shuffling every epoch and
`tf.train.global_step(sess, global_step)` deciding when to evaluate. The "sentences" are seeded
synthetic token ids: each class has its own marker words among random filler.
"""
from __future__ import print_function

import numpy as np
import tensorflow as tf

# Model Hyperparameters
embedding_dim = 16
filter_sizes = [2, 3, 4]
num_filters = 8
dropout_keep_prob = 0.5
l2_reg_lambda = 0.01

# Training parameters
batch_size = 32
num_epochs = 3
evaluate_every = 8
starter_learning_rate = 0.005

sequence_length = 12
vocab_size = 40
num_classes = 2


def make_sentences(rng, count):
    """Token ids: class 0 sentences carry words 1-4, class 1 sentences words 5-8, the rest is filler."""
    x = rng.randint(9, vocab_size, size=(count, sequence_length))
    labels = rng.randint(0, num_classes, size=count)
    for sentence, label in zip(x, labels):
        positions = rng.choice(sequence_length, size=2, replace=False)
        sentence[positions] = rng.randint(1, 5, size=2) + 4 * label
    return x.astype(np.int32), np.eye(num_classes, dtype=np.float32)[labels]


def batch_iter(data, batch_size, num_epochs, shuffle=True):
    """Generates a batch iterator for a dataset."""
    data_size = len(data)
    num_batches_per_epoch = int((len(data) - 1) / batch_size) + 1
    for epoch in range(num_epochs):
        # Shuffle the data at each epoch
        if shuffle:
            shuffle_indices = np.random.permutation(np.arange(data_size))
            shuffled_data = [data[i] for i in shuffle_indices]
        else:
            shuffled_data = data
        for batch_num in range(num_batches_per_epoch):
            start_index = batch_num * batch_size
            end_index = min((batch_num + 1) * batch_size, data_size)
            yield shuffled_data[start_index:end_index]


class TextCNN(object):
    """
    A CNN for text classification.
    Uses an embedding layer, followed by a convolutional, max-pooling and softmax layer.
    """

    def __init__(self, sequence_length, num_classes, vocab_size, embedding_size, filter_sizes, num_filters,
                 l2_reg_lambda=0.0):

        # Placeholders for input, output and dropout
        self.input_x = tf.placeholder(tf.int32, [None, sequence_length], name="input_x")
        self.input_y = tf.placeholder(tf.float32, [None, num_classes], name="input_y")
        self.dropout_keep_prob = tf.placeholder(tf.float32, name="dropout_keep_prob")

        # Keeping track of l2 regularization loss (optional)
        l2_loss = tf.constant(0.0)

        # Embedding layer
        with tf.name_scope("embedding"):
            self.W = tf.Variable(tf.random_uniform([vocab_size, embedding_size], -1.0, 1.0), name="W")
            self.embedded_chars = tf.nn.embedding_lookup(self.W, self.input_x)
            self.embedded_chars_expanded = tf.expand_dims(self.embedded_chars, -1)

        # Create a convolution + maxpool layer for each filter size
        pooled_outputs = []
        for i, filter_size in enumerate(filter_sizes):
            with tf.name_scope("conv-maxpool-%s" % filter_size):
                # Convolution Layer
                filter_shape = [filter_size, embedding_size, 1, num_filters]
                W = tf.Variable(tf.truncated_normal(filter_shape, stddev=0.1), name="W")
                b = tf.Variable(tf.constant(0.1, shape=[num_filters]), name="b")
                conv = tf.nn.conv2d(self.embedded_chars_expanded, W, strides=[1, 1, 1, 1], padding="VALID",
                                    name="conv")
                # Apply nonlinearity
                h = tf.nn.relu(tf.nn.bias_add(conv, b), name="relu")
                # Maxpooling over the outputs
                pooled = tf.nn.max_pool(h, ksize=[1, sequence_length - filter_size + 1, 1, 1],
                                        strides=[1, 1, 1, 1], padding='VALID', name="pool")
                pooled_outputs.append(pooled)

        # Combine all the pooled features
        num_filters_total = num_filters * len(filter_sizes)
        self.h_pool = tf.concat(pooled_outputs, 3)
        self.h_pool_flat = tf.reshape(self.h_pool, [-1, num_filters_total])

        # Add dropout
        with tf.name_scope("dropout"):
            self.h_drop = tf.nn.dropout(self.h_pool_flat, self.dropout_keep_prob)

        # Final (unnormalized) scores and predictions
        with tf.name_scope("output"):
            W = tf.get_variable("W", shape=[num_filters_total, num_classes],
                                initializer=tf.contrib.layers.xavier_initializer())
            b = tf.Variable(tf.constant(0.1, shape=[num_classes]), name="b")
            l2_loss += tf.nn.l2_loss(W)
            l2_loss += tf.nn.l2_loss(b)
            self.scores = tf.nn.xw_plus_b(self.h_drop, W, b, name="scores")
            self.predictions = tf.argmax(self.scores, 1, name="predictions")

        # Calculate mean cross-entropy loss
        with tf.name_scope("loss"):
            losses = tf.nn.softmax_cross_entropy_with_logits(logits=self.scores, labels=self.input_y)
            self.loss = tf.reduce_mean(losses) + l2_reg_lambda * l2_loss

        # Accuracy
        with tf.name_scope("accuracy"):
            correct_predictions = tf.equal(self.predictions, tf.argmax(self.input_y, 1))
            self.accuracy = tf.reduce_mean(tf.cast(correct_predictions, "float"), name="accuracy")


# Data Preparation
np.random.seed(10)
rng = np.random.RandomState(10)
x_train, y_train = make_sentences(rng, 192)
x_dev, y_dev = make_sentences(rng, 64)
print("Train/Dev split: {:d}/{:d}".format(len(y_train), len(y_dev)))

# Training
with tf.Graph().as_default():
    tf.set_random_seed(10)
    session_conf = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
    sess = tf.Session(config=session_conf)
    with sess.as_default():
        cnn = TextCNN(
            sequence_length=x_train.shape[1],
            num_classes=y_train.shape[1],
            vocab_size=vocab_size,
            embedding_size=embedding_dim,
            filter_sizes=filter_sizes,
            num_filters=num_filters,
            l2_reg_lambda=l2_reg_lambda)

        # Define Training procedure
        global_step = tf.Variable(0, name="global_step", trainable=False)
        learning_rate = tf.train.exponential_decay(starter_learning_rate, global_step, 6, 0.8, staircase=True)
        optimizer = tf.train.AdamOptimizer(learning_rate)
        grads_and_vars = optimizer.compute_gradients(cnn.loss)
        train_op = optimizer.apply_gradients(grads_and_vars, global_step=global_step)

        # Initialize all variables
        sess.run(tf.global_variables_initializer())

        def train_step(x_batch, y_batch):
            """
            A single training step
            """
            feed_dict = {
                cnn.input_x: x_batch,
                cnn.input_y: y_batch,
                cnn.dropout_keep_prob: dropout_keep_prob
            }
            _, step, loss, accuracy = sess.run(
                [train_op, global_step, cnn.loss, cnn.accuracy],
                feed_dict)
            if step % 4 == 0:
                print("step {}, loss {:g}, acc {:g}".format(step, loss, accuracy))

        def dev_step(x_batch, y_batch):
            """
            Evaluates model on a dev set
            """
            feed_dict = {
                cnn.input_x: x_batch,
                cnn.input_y: y_batch,
                cnn.dropout_keep_prob: 1.0
            }
            step, loss, accuracy = sess.run(
                [global_step, cnn.loss, cnn.accuracy],
                feed_dict)
            print("step {}, loss {:g}, acc {:g}".format(step, loss, accuracy))
            print("RESULT dev_loss_%d %r" % (step, float(loss)))
            print("RESULT dev_accuracy_%d %r" % (step, float(accuracy)))

        print("\nEvaluation before training:")
        dev_step(x_dev, y_dev)

        # Generate batches
        batches = batch_iter(list(zip(x_train, y_train)), batch_size, num_epochs)
        # Training loop. For each batch...
        for batch in batches:
            x_batch, y_batch = zip(*batch)
            train_step(x_batch, y_batch)
            current_step = tf.train.global_step(sess, global_step)
            if current_step % evaluate_every == 0:
                print("\nEvaluation:")
                dev_step(x_dev, y_dev)
        print("RESULT final_learning_rate %r" % float(sess.run(learning_rate)))
