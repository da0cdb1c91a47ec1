"""Sentence classification the way TF1 tutorials wrote it: padded word ids of varying length, an
embedding table initialised from a fed matrix (pre-trained vectors), GRU cells wrapped in
DropoutWrapper, and tf.nn.bidirectional_dynamic_rnn told each sentence's length.

A seeded synthetic corpus of "sentences" of 3 to 6 tokens, padded to 6 with id 0, is labelled 1
when it uses odd-numbered words. The embedding variable starts at zero and is assigned a fed matrix
of "pre-trained" vectors; the two directions' final states, concatenated as one pair, feed a linear
classifier trained by RMSProp. The dropout wrappers keep every unit by default and drop outputs
only with the keep probability fed while training; this program trains with it at 1.0, so both
sides compute the same values.
"""
import json

import numpy as np
import tensorflow as tf

STEPS = 40
BATCH = 32
TIME_STEPS = 6
VOCABULARY = 10
EMBEDDING = 8
UNITS = 6

tf.set_random_seed(7)
rng = np.random.RandomState(7)
lengths_np = rng.randint(3, TIME_STEPS + 1, size=320)
labels_np = rng.randint(0, 2, size=320)
words = np.zeros((320, TIME_STEPS), np.int32)
for row, (length, label) in enumerate(zip(lengths_np, labels_np)):
    words[row, :length] = rng.choice(np.arange(1 + label, VOCABULARY, 2), size=length)
one_hot = np.eye(2, dtype=np.float32)[labels_np]
pretrained = rng.randn(VOCABULARY, EMBEDDING).astype(np.float32) / 3

word_ids = tf.placeholder(tf.int32, shape=[None, TIME_STEPS])
labels = tf.placeholder(tf.float32, shape=[None, 2])
lengths = tf.placeholder(tf.int32, shape=[None])
embedding_matrix = tf.placeholder(tf.float32, [VOCABULARY, EMBEDDING])
keep_prob = tf.placeholder_with_default(1.0, [])

embeddings = tf.Variable(tf.constant(0.0, shape=[VOCABULARY, EMBEDDING]), trainable=True)
embedding_init = embeddings.assign(embedding_matrix)
embedded = tf.nn.embedding_lookup(embeddings, word_ids)

with tf.variable_scope("forward"):
    forward_cell = tf.contrib.rnn.GRUCell(UNITS)
    forward_cell = tf.contrib.rnn.DropoutWrapper(forward_cell, output_keep_prob=keep_prob)
with tf.variable_scope("backward"):
    backward_cell = tf.contrib.rnn.GRUCell(UNITS)
    backward_cell = tf.contrib.rnn.DropoutWrapper(backward_cell)
outputs, states = tf.nn.bidirectional_dynamic_rnn(cell_fw=forward_cell, cell_bw=backward_cell, inputs=embedded,
                                                  sequence_length=lengths, dtype=tf.float32, scope="biGRU")
states = tf.concat(values=states, axis=1)
first_forward_output = tf.reduce_mean(outputs[0][:, 0])

weights = tf.Variable(tf.truncated_normal([2 * UNITS, 2], mean=0, stddev=.1))
biases = tf.Variable(tf.zeros([2]))
logits = tf.matmul(states, weights) + biases
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=labels))
train_step = tf.train.RMSPropOptimizer(0.05, 0.9).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(labels, 1), tf.argmax(logits, 1)), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(embedding_init, feed_dict={embedding_matrix: pretrained})
    losses = []
    for step in range(STEPS):
        start = (step * BATCH) % 256
        batch = slice(start, start + BATCH)
        _, loss_value = sess.run([train_step, loss], feed_dict={word_ids: words[batch], labels: one_hot[batch],
                                                                lengths: lengths_np[batch], keep_prob: 1.0})
        losses.append(float(loss_value))
    held_out = {word_ids: words[256:], labels: one_hot[256:], lengths: lengths_np[256:]}
    final_accuracy, first_output = sess.run([accuracy, first_forward_output], feed_dict=held_out)

print("RESULT losses %s" % json.dumps(losses[::5]))
print("RESULT held_out_accuracy %r" % float(final_accuracy))
print("RESULT first_forward_output %r" % float(first_output))
