"""A model class built inside the session block, in the style of research code: the class keeps its
placeholders and ops as attributes, trains a generator and a discriminator with two Adam optimizers
on variable lists read from scoped graph collections, and the script restores a checkpoint when one
exists or initialises the variables otherwise.

Reading the variable lists from `tf.get_collection(..., scope=...)` is outside what TFM201 models,
so the graph stays TF1 code: TFM203 moves the model's construction out of the session block into
`build_graph()`, wrapped once by `tf.compat.v1.wrap_function`, and makes each run a function pruned
from it.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

STEPS = 40


class TinyGAN(object):
    def __init__(self, noise_size, data_size):
        self.noise = tf.placeholder(tf.float32, [None, noise_size], name="noise")
        self.real = tf.placeholder(tf.float32, [None, data_size], name="real")
        rng = np.random.RandomState(17)
        with tf.variable_scope("generator"):
            g_w = tf.get_variable("w", initializer=rng.normal(0, 0.2, (noise_size, data_size)).astype(np.float32))
            self.fake = tf.nn.tanh(tf.matmul(self.noise, g_w))
        with tf.variable_scope("discriminator"):
            d_w = tf.get_variable("w", initializer=rng.normal(0, 0.2, (data_size, 1)).astype(np.float32))
            real_logits, fake_logits = tf.matmul(self.real, d_w), tf.matmul(self.fake, d_w)
        real_ones, fake_ones = tf.ones_like(real_logits), tf.ones_like(fake_logits)
        self.d_loss = tf.reduce_mean(
            tf.nn.sigmoid_cross_entropy_with_logits(labels=real_ones, logits=real_logits)
            + tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros_like(fake_logits), logits=fake_logits))
        self.g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=fake_ones, logits=fake_logits))
        d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
        g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
        self.d_train = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(self.d_loss, var_list=d_vars)
        self.g_train = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(self.g_loss, var_list=g_vars)


def main():
    rng = np.random.RandomState(4)
    data = np.tanh(rng.normal(0.5, 0.3, size=(64, 3))).astype(np.float32)
    checkpoint_dir = tempfile.mkdtemp(prefix="wrapped_model_class_")
    with tf.Session() as sess:
        gan = TinyGAN(noise_size=2, data_size=3)
        saver = tf.train.Saver()
        if os.path.exists(os.path.join(checkpoint_dir, "checkpoint")):
            saver.restore(sess, tf.train.latest_checkpoint(checkpoint_dir))
        else:
            sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            noise = rng.uniform(-1, 1, size=(16, 2)).astype(np.float32)
            batch = data[step % 4 * 16:step % 4 * 16 + 16]
            d_loss, _ = sess.run([gan.d_loss, gan.d_train], feed_dict={gan.noise: noise, gan.real: batch})
            g_loss, _ = sess.run([gan.g_loss, gan.g_train], feed_dict={gan.noise: noise})
        print("RESULT d_loss %r" % float(d_loss))
        print("RESULT g_loss %r" % float(g_loss))
        saver.save(sess, os.path.join(checkpoint_dir, "model.ckpt"))
    for name in os.listdir(checkpoint_dir):
        os.remove(os.path.join(checkpoint_dir, name))
    os.rmdir(checkpoint_dir)


if __name__ == "__main__":
    main()
