"""A character-level language model trained the way char-rnn-style scripts train theirs: the model is a
class whose learning rate is a non-trainable variable, set at every epoch by running a fresh assign op
(`sess.run(tf.assign(model.lr, args.learning_rate * args.decay_rate ** epoch))`), its batches fed
under a name, the trainable variables fetched to report their norms, and a checkpoint saved per epoch.

TFM201 does not convert assign ops built at the run, so the graph stays TF1 code, wrapped once by
`tf.compat.v1.wrap_function` (TFM203). Each assignment runs eagerly on the wrapped variable
(`model.lr.assign(...)`), and the listing of trainable variables is made at the end of the graph.
"""
import argparse
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

TEXT = "the quick brown fox jumps over the lazy dog; " * 12


class CharModel:
    def __init__(self, args, vocab_size):
        self.input_data = tf.placeholder(tf.int32, [None, args.seq_length], name="input_data")
        self.targets = tf.placeholder(tf.int32, [None, args.seq_length], name="targets")
        self.lr = tf.Variable(0.0, trainable=False, name="lr")
        init = tf.random_uniform_initializer(-0.1, 0.1, seed=4)
        with tf.variable_scope("charmodel"):
            embedding = tf.get_variable("embedding", [vocab_size, args.hidden], initializer=init)
            softmax_w = tf.get_variable("softmax_w", [args.hidden, vocab_size], initializer=init)
            softmax_b = tf.get_variable("softmax_b", [vocab_size], initializer=tf.zeros_initializer())
        inputs = tf.nn.embedding_lookup(embedding, self.input_data)
        context = tf.tanh(tf.cumsum(inputs, axis=1) / tf.cast(tf.range(1, args.seq_length + 1), tf.float32)[:, None])
        logits = tf.tensordot(context, softmax_w, axes=1) + softmax_b
        self.cost = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.targets, logits=logits))
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), args.grad_clip)
        self.train_op = tf.train.AdamOptimizer(self.lr).apply_gradients(zip(grads, tvars))


def batches(encoded, batch_size, seq_length):
    per_batch = batch_size * seq_length
    count = (len(encoded) - 1) // per_batch
    xs = encoded[:count * per_batch].reshape(count, batch_size, seq_length)
    ys = encoded[1:count * per_batch + 1].reshape(count, batch_size, seq_length)
    return list(zip(xs, ys))


def train(args):
    chars = sorted(set(TEXT))
    encoded = np.array([chars.index(c) for c in TEXT], dtype=np.int32)
    model = CharModel(args, len(chars))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver = tf.train.Saver(tf.global_variables())
        for epoch in range(args.num_epochs):
            sess.run(tf.assign(model.lr, args.learning_rate * (args.decay_rate ** epoch)))
            costs = []
            for x, y in batches(encoded, args.batch_size, args.seq_length):
                feed = {model.input_data: x, model.targets: y}
                train_loss, _ = sess.run([model.cost, model.train_op], feed)
                costs.append(train_loss)
            print(f"RESULT epoch_{epoch}_cost", float(np.mean(costs)))
            saver.save(sess, os.path.join(args.save_dir, "model.ckpt"), global_step=epoch)
        norms = [float(np.linalg.norm(value)) for value in sess.run(tf.trainable_variables())]
        print("RESULT variable_norms", norms)
        print("RESULT final_lr", float(sess.run(model.lr)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq_length", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--num_epochs", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=0.02)
    parser.add_argument("--decay_rate", type=float, default=0.9)
    parser.add_argument("--grad_clip", type=float, default=5.0)
    args = parser.parse_args()
    args.save_dir = tempfile.mkdtemp(prefix="wrapped_char_model_")
    train(args)
    shutil.rmtree(args.save_dir)
