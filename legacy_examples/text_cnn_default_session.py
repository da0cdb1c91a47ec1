"""A text CNN trained the way the cnn-text-classification family of 2016-2017 trains it: a graph of its
own entered by `with graph.as_default():`, a session with a ConfigProto made default by `with
sess.as_default():`, the model class built inside that block, `train_step` / `dev_step` closures over
the session each feeding a dict bound at the run, the step read by `tf.train.global_step(sess, ...)`,
and a Saver checkpointing the best dev accuracy. (The originals train with dropout at 0.5 and fetch the
step beside the update; here dropout keeps 1.0 and the step is read after it, so that verify compares
every value strictly.)

TFM201 converts it: the graph contexts and the default-session block flatten, the ConfigProto goes
with the session, the closures call step functions, `tf.train.global_step(sess, global_step)` reads
the step variable, and the Saver becomes a CheckpointManager.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

VOCABULARY = 30
SENTENCE = 8
CLASSES = 2
EMBED = 6
FILTERS = 4
BATCH = 16
EPOCHS = 4
EVALUATE_EVERY = 4
KEEP = 1.0  # the originals train at 0.5; 1.0 keeps the dropout's draws out of what verify compares
CHECKPOINTS = os.path.join(tempfile.mkdtemp(prefix="wrapped_text_cnn_"), "model")


class TextCNN:
    def __init__(self, sequence_length, num_classes, vocab_size, embedding_size, num_filters):
        self.input_x = tf.placeholder(tf.int32, [None, sequence_length], name="input_x")
        self.input_y = tf.placeholder(tf.float32, [None, num_classes], name="input_y")
        self.dropout_keep_prob = tf.placeholder(tf.float32, name="dropout_keep_prob")
        with tf.name_scope("embedding"):
            self.W = tf.Variable(tf.random_uniform([vocab_size, embedding_size], -1.0, 1.0, seed=1), name="W")
            embedded = tf.expand_dims(tf.nn.embedding_lookup(self.W, self.input_x), -1)
        with tf.name_scope("conv-maxpool"):
            filters = tf.Variable(tf.truncated_normal([3, embedding_size, 1, num_filters], stddev=0.1, seed=2))
            conv = tf.nn.relu(tf.nn.conv2d(embedded, filters, strides=[1, 1, 1, 1], padding="VALID"))
            pooled = tf.nn.max_pool(conv, ksize=[1, sequence_length - 2, 1, 1], strides=[1, 1, 1, 1],
                                    padding="VALID")
            features = tf.nn.dropout(tf.reshape(pooled, [-1, num_filters]), self.dropout_keep_prob)
        with tf.name_scope("output"):
            weights = tf.Variable(tf.truncated_normal([num_filters, num_classes], stddev=0.1, seed=4))
            self.scores = tf.matmul(features, weights)
            self.predictions = tf.argmax(self.scores, 1, name="predictions")
        self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=self.scores, labels=self.input_y))
        correct = tf.equal(self.predictions, tf.argmax(self.input_y, 1))
        self.accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")


def batch_iter(data, batch_size, num_epochs):
    data = np.array(data, dtype=object)
    for _ in range(num_epochs):
        for start in range(0, len(data), batch_size):
            yield data[start:start + batch_size]


def load_data():
    rng = np.random.RandomState(0)
    sentences = rng.randint(0, VOCABULARY, size=(96, SENTENCE))
    labels = np.eye(CLASSES)[(sentences < 3).any(axis=1).astype(int)]  # a word anywhere: what max-pooling finds
    return sentences[:80], labels[:80], sentences[80:], labels[80:]


def train():
    x_train, y_train, x_dev, y_dev = load_data()
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(5)
        session_conf = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
        sess = tf.Session(config=session_conf)
        with sess.as_default():
            cnn = TextCNN(SENTENCE, CLASSES, VOCABULARY, EMBED, FILTERS)
            global_step = tf.Variable(0, name="global_step", trainable=False)
            optimizer = tf.train.AdamOptimizer(5e-2)
            grads_and_vars = optimizer.compute_gradients(cnn.loss)
            train_op = optimizer.apply_gradients(grads_and_vars, global_step=global_step)
            saver = tf.train.Saver(tf.global_variables(), max_to_keep=2)
            sess.run(tf.global_variables_initializer())

            def train_step(x_batch, y_batch):
                feed_dict = {cnn.input_x: x_batch, cnn.input_y: y_batch, cnn.dropout_keep_prob: KEEP}
                _, loss, accuracy = sess.run([train_op, cnn.loss, cnn.accuracy], feed_dict)
                return loss

            def dev_step(x_batch, y_batch):
                feed_dict = {cnn.input_x: x_batch, cnn.input_y: y_batch, cnn.dropout_keep_prob: 1.0}
                step, loss, accuracy = sess.run([global_step, cnn.loss, cnn.accuracy], feed_dict)
                return loss, accuracy

            best_accuracy = 0.0
            losses = []
            for batch in batch_iter(list(zip(x_train, y_train)), BATCH, EPOCHS):
                x_batch, y_batch = zip(*batch)
                losses.append(float(train_step(x_batch, y_batch)))
                current_step = tf.train.global_step(sess, global_step)
                if current_step % EVALUATE_EVERY == 0:
                    dev_loss, dev_accuracy = dev_step(x_dev, y_dev)
                    print("RESULT dev_loss_%d %s" % (current_step, round(float(dev_loss), 5)))
                    if dev_accuracy >= best_accuracy:
                        best_accuracy = float(dev_accuracy)
                        saver.save(sess, CHECKPOINTS, global_step=current_step)
            print("RESULT train_losses", [round(loss, 5) for loss in losses])
            print("RESULT best_accuracy", round(best_accuracy, 5))
            print("RESULT predictions", sess.run(cnn.predictions, {cnn.input_x: x_dev,
                                                                   cnn.dropout_keep_prob: 1.0}).tolist())


if __name__ == "__main__":
    train()
