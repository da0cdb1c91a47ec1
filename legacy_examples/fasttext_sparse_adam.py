"""A bag-of-words classifier in the shape of facebook's fastText as TF1 repositories wrote it
(brightmart's `fastTextB`, the many "fasttext in tensorflow" tutorials).

An embedding matrix `tf.get_variable("Embedding", ..., initializer=tf.random_normal_initializer(...))`
looked up with `tf.nn.embedding_lookup` (its gradient is sparse: tf.IndexedSlices), averaged over
the sentence with `tf.reduce_mean(axis=1)`, a linear layer from `tf.get_variable` weights and biases,
`tf.nn.sparse_softmax_cross_entropy_with_logits` plus an L2 penalty on the dense weights only
(`tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables() if 'bias' not in v.name ...])`), and
`tf.train.AdamOptimizer` with TF1's defaults but for the rate: TF1 updates the embedding with its
sparse Adam, which decays every row's moments each step. Training feeds shuffled minibatches by
slicing NumPy arrays; the evaluation runs accuracy and loss over the held-out set in one run.
The "sentences" are seeded synthetic token ids: each class has its own marker words among filler.
"""
import numpy as np
import tensorflow as tf

vocab_size = 60
embed_size = 12
num_classes = 3
sentence_len = 10
batch_size = 16
num_epochs = 4
learning_rate = 0.02
l2_lambda = 0.0005


def make_sentences(rng, count):
    """Token ids: class k sentences carry two of the words 1 + 4k .. 4 + 4k, the rest is filler."""
    x = rng.randint(13, vocab_size, size=(count, sentence_len))
    labels = rng.randint(0, num_classes, size=count)
    for sentence, label in zip(x, labels):
        positions = rng.choice(sentence_len, size=2, replace=False)
        sentence[positions] = rng.randint(1, 5, size=2) + 4 * label
    return x.astype(np.int32), labels.astype(np.int32)


def report(key, value):
    print("RESULT %s %r" % (key, float(value)))


tf.set_random_seed(7)
rng = np.random.RandomState(3)
train_x, train_y = make_sentences(rng, 192)
test_x, test_y = make_sentences(rng, 64)

sentence = tf.placeholder(tf.int32, [None, sentence_len], name="sentence")
labels = tf.placeholder(tf.int32, [None], name="labels")

Embedding = tf.get_variable("Embedding", [vocab_size, embed_size],
                            initializer=tf.random_normal_initializer(stddev=0.1, seed=11))
W = tf.get_variable("W", [embed_size, num_classes], initializer=tf.random_normal_initializer(stddev=0.1, seed=12))
b = tf.get_variable("bias", [num_classes], initializer=tf.zeros_initializer())

sentence_embeddings = tf.nn.embedding_lookup(Embedding, sentence)
sentence_embedding = tf.reduce_mean(sentence_embeddings, axis=1)
logits = tf.matmul(sentence_embedding, W) + b

losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
l2_losses = tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables() if 'bias' not in v.name
                      and 'Embedding' not in v.name]) * l2_lambda
loss = tf.reduce_mean(losses) + l2_losses

predictions = tf.argmax(logits, 1, output_type=tf.int32)
accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32))

train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    step = 0
    for epoch in range(num_epochs):
        order = rng.permutation(len(train_x))
        for start in range(0, len(train_x), batch_size):
            batch = order[start:start + batch_size]
            feed_dict = {sentence: train_x[batch], labels: train_y[batch]}
            curr_loss, curr_acc, _ = sess.run([loss, accuracy, train_op], feed_dict=feed_dict)
            if step == 0:
                report("loss_step_0", curr_loss)
            step += 1
        print("epoch %d: loss %.4f, accuracy %.3f" % (epoch, curr_loss, curr_acc))
    test_loss, test_acc = sess.run([loss, accuracy], feed_dict={sentence: test_x, labels: test_y})
    report("test_loss", test_loss)
    report("test_accuracy", test_acc)
    report("embedding_checksum", np.abs(sess.run(Embedding)).sum())
