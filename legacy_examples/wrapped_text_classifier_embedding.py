"""A text classifier trained the way the text-classification collections of 2017-2018 train theirs:
data loaded by a plain Python function before the graph, the model class built inside the session
block, restore-or-initialise with a pretrained word embedding assigned by a helper given the session
(`tf.assign(model.Embedding, tf.constant(vectors))`, run at once), a feed dict that gains its labels'
key in one branch of an `if` (single or multi-label), and an evaluation helper feeding a named dict.

TFM201 does not convert a helper building an assign op, so the graph stays TF1 code, wrapped once by
`tf.compat.v1.wrap_function` (TFM203). The data loading stays outside the graph; the assignment runs
eagerly on the wrapped variable; the feed dict completed in the `if` becomes the training run written
in each branch (TFM204), each pruned on its first run by `run_graph`: the multi-label branch never
runs, and its labels' placeholder is one the single-label loss does not use.
"""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

VOCABULARY = 40
SENTENCE = 6
CLASSES = 3
EMBED = 8
EPOCHS = 4
BATCH = 16
MULTI_LABEL = False
CHECKPOINTS = os.path.join(tempfile.mkdtemp(prefix="wrapped_text_classifier_"), "")


class TextClassifier:
    def __init__(self, vocab_size, embed_size, num_classes, learning_rate):
        self.input_x = tf.placeholder(tf.int32, [None, SENTENCE], name="input_x")
        self.input_y = tf.placeholder(tf.int32, [None], name="input_y")
        self.input_y_multilabel = tf.placeholder(tf.float32, [None, num_classes], name="input_y_multilabel")
        self.dropout_keep_prob = tf.placeholder(tf.float32, name="dropout_keep_prob")
        self.epoch_step = tf.Variable(0, trainable=False, name="epoch_step")
        self.epoch_increment = tf.assign(self.epoch_step, self.epoch_step + 1)
        self.Embedding = tf.get_variable("Embedding", [vocab_size, embed_size],
                                         initializer=tf.random_normal_initializer(stddev=0.1, seed=1))
        words = tf.nn.embedding_lookup(self.Embedding, self.input_x)
        sentence = tf.nn.dropout(tf.reduce_mean(words, axis=1), self.dropout_keep_prob)
        self.logits = tf.layers.dense(sentence, num_classes,
                                      kernel_initializer=tf.glorot_uniform_initializer(seed=2))
        if MULTI_LABEL:
            losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=self.input_y_multilabel, logits=self.logits)
        else:
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.input_y, logits=self.logits)
        self.loss_val = tf.reduce_mean(losses)
        self.train_op = tf.train.AdamOptimizer(learning_rate).minimize(self.loss_val)


def load_data(seed):
    rng = np.random.RandomState(seed)
    sentences = rng.randint(1, VOCABULARY, size=(160, SENTENCE))
    labels = sentences[:, 0] % CLASSES
    return sentences[:128], labels[:128], sentences[128:], labels[128:]


def assign_pretrained_word_embedding(sess, vocab_size, model):
    rng = np.random.RandomState(7)
    word_embedding_2dlist = [np.zeros(EMBED)]  # the padding word
    for word in range(1, vocab_size):
        word_embedding_2dlist.append(rng.uniform(-0.5, 0.5, EMBED) + word % CLASSES)
    word_embedding_final = np.array(word_embedding_2dlist)
    word_embedding = tf.constant(word_embedding_final, dtype=tf.float32)  # convert to tensor
    t_assign_embedding = tf.assign(model.Embedding, word_embedding)  # assign it to the model's embedding
    sess.run(t_assign_embedding)
    print("RESULT embedding_words", len(word_embedding_2dlist))


def do_eval(sess, model, eval_x, eval_y):
    losses = []
    for start in range(0, len(eval_x), BATCH):
        feed_dict = {model.input_x: eval_x[start:start + BATCH], model.dropout_keep_prob: 1.0,
                     model.input_y: eval_y[start:start + BATCH]}
        losses.append(sess.run(model.loss_val, feed_dict))
    return float(np.mean(losses))


def main():
    train_x, train_y, test_x, test_y = load_data(seed=3)
    print("training examples:", len(train_x))
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as sess:
        tf.set_random_seed(11)
        model = TextClassifier(VOCABULARY, EMBED, CLASSES, 0.01)
        saver = tf.train.Saver()
        if os.path.exists(CHECKPOINTS + "checkpoint"):
            saver.restore(sess, tf.train.latest_checkpoint(CHECKPOINTS))
        else:
            sess.run(tf.global_variables_initializer())
            assign_pretrained_word_embedding(sess, VOCABULARY, model)
        current_epoch = sess.run(model.epoch_step)
        for epoch in range(current_epoch, EPOCHS):
            total, batches = 0.0, 0
            for start in range(0, len(train_x), BATCH):
                feed_dict = {model.input_x: train_x[start:start + BATCH], model.dropout_keep_prob: 0.8}
                if not MULTI_LABEL:
                    feed_dict[model.input_y] = train_y[start:start + BATCH]
                else:
                    feed_dict[model.input_y_multilabel] = np.eye(CLASSES)[train_y[start:start + BATCH]]
                loss, _ = sess.run([model.loss_val, model.train_op], feed_dict)
                total, batches = total + loss, batches + 1
            sess.run(model.epoch_increment)
            print(f"RESULT epoch_{epoch}_loss", total / batches)
            saver.save(sess, CHECKPOINTS + "model.ckpt", global_step=epoch)
        print("RESULT test_loss", do_eval(sess, model, test_x, test_y))
    shutil.rmtree(CHECKPOINTS)


if __name__ == "__main__":
    main()
