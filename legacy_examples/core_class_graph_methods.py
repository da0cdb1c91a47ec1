"""A text classifier whose class builds the graph through methods, as many research repositories do.

`__init__` creates the placeholders, then calls `instantiate_weights()` (seeded NumPy variables),
`self.logits = self.inference()` (which calls `self.projection(...)` in turn), one of two loss methods
picked by a constructor flag, and `self.train_op = self.train()`; an `evaluate(sess, ...)` method only
runs the session it is given. The code owning the session uses `loss` and `rng` as names of its own,
as the methods do.
"""
import numpy as np
import tensorflow as tf

VOCABULARY = 40
SEQUENCE = 6
CLASSES = 3
EMBEDDING = 8
STEPS = 25


class BagOfWordsClassifier(object):
    """Embeddings averaged over the sentence, a linear projection, softmax cross-entropy and Adam."""

    def __init__(self, vocab_size, embed_size, num_classes, learning_rate, label_smoothing=False):
        self.vocab_size = vocab_size
        self.embed_size = embed_size
        self.num_classes = num_classes
        self.learning_rate = learning_rate
        self.input_x = tf.placeholder(tf.int32, [None, SEQUENCE], name="input_x")
        self.input_y = tf.placeholder(tf.int32, [None], name="input_y")
        self.instantiate_weights()
        self.logits = self.inference()
        if label_smoothing:
            self.loss_val = self.smoothed_loss(0.1)
        else:
            self.loss_val = self.loss()
        self.train_op = self.train()
        self.predictions = tf.argmax(self.logits, axis=1, name="predictions")
        correct = tf.equal(tf.cast(self.predictions, tf.int32), self.input_y)
        self.accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")

    def instantiate_weights(self):
        """The embedding table and the projection, from seeded NumPy arrays."""
        rng = np.random.RandomState(3)
        self.Embedding = tf.Variable(rng.normal(0, 0.1, (self.vocab_size, self.embed_size)).astype(np.float32))
        self.W_projection = tf.Variable(rng.normal(0, 0.1, (self.embed_size, self.num_classes)).astype(np.float32))
        self.b_projection = tf.Variable(np.zeros(self.num_classes, np.float32))

    def inference(self):
        embedded = tf.nn.embedding_lookup(self.Embedding, self.input_x)
        sentence = tf.reduce_mean(embedded, axis=1)
        logits = self.projection(sentence)
        return logits

    def projection(self, features):
        return tf.matmul(features, self.W_projection) + self.b_projection

    def loss(self, l2_lambda=0.001):
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.input_y, logits=self.logits)
        loss = tf.reduce_mean(losses)
        l2_losses = tf.add_n([tf.nn.l2_loss(v) for v in [self.W_projection, self.b_projection]]) * l2_lambda
        return loss + l2_losses

    def smoothed_loss(self, smoothing):
        labels = tf.one_hot(self.input_y, self.num_classes) * (1 - smoothing) + smoothing / self.num_classes
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=self.logits))

    def train(self):
        optimizer = tf.train.AdamOptimizer(self.learning_rate)
        return optimizer.minimize(self.loss_val)

    def evaluate(self, sess, x, y):
        return sess.run([self.loss_val, self.accuracy], feed_dict={self.input_x: x, self.input_y: y})


def make_data(rng, count):
    x = rng.randint(0, VOCABULARY, (count, SEQUENCE))
    y = (x.sum(axis=1) % CLASSES).astype(np.int32)
    return x, y


def main():
    rng = np.random.RandomState(0)
    train_x, train_y = make_data(rng, 96)
    test_x, test_y = make_data(rng, 32)
    model = BagOfWordsClassifier(VOCABULARY, EMBEDDING, CLASSES, 0.05)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            loss, _ = sess.run([model.loss_val, model.train_op],
                               feed_dict={model.input_x: train_x, model.input_y: train_y})
            if step % 5 == 0:
                print("RESULT step_%d_loss %r" % (step, float(loss)))
        test_loss, test_accuracy = model.evaluate(sess, test_x, test_y)
        print("RESULT test_loss %r" % float(test_loss))
        print("RESULT test_accuracy %r" % float(test_accuracy))
        predictions = sess.run(model.predictions, feed_dict={model.input_x: test_x[:5]})
        print("RESULT first_predictions %s" % [int(p) for p in predictions])


if __name__ == "__main__":
    main()
