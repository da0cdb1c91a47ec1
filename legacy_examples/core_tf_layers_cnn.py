"""A small CNN built with tf.layers on 8x8 synthetic images, trained with Adam.

Kernels start from seeded NumPy arrays (tf.constant_initializer), so TF1 and TF2 runs
can be compared number for number.
"""
import numpy as np
import tensorflow as tf

STEPS = 8

rng = np.random.RandomState(21)
images = rng.uniform(0, 1, size=(48, 8, 8, 1)).astype(np.float32)
labels = (images[:, :4].mean(axis=(1, 2, 3)) > images[:, 4:].mean(axis=(1, 2, 3))).astype(np.int64)


def seeded(*shape):
    return tf.constant_initializer(rng.normal(0.0, 0.2, size=shape))


x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
y = tf.placeholder(tf.int64, [None], name="labels")

conv1 = tf.layers.conv2d(x, filters=4, kernel_size=3, padding="same", activation=tf.nn.relu,
                         kernel_initializer=seeded(3, 3, 1, 4), name="conv1")
pool1 = tf.layers.max_pooling2d(conv1, pool_size=2, strides=2)
conv2 = tf.layers.conv2d(pool1, 8, 3, padding="valid", activation=tf.nn.relu,
                         kernel_initializer=seeded(3, 3, 4, 8), name="conv2")
flat = tf.layers.flatten(conv2)
logits = tf.layers.dense(flat, 2, kernel_initializer=seeded(32, 2), name="logits")

loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

sess = tf.Session()
sess.run(tf.global_variables_initializer())
for step in range(STEPS):
    loss_value, _ = sess.run((loss, train_op), feed_dict={x: images, y: labels})
    print("RESULT loss_step_%d %r" % (step, float(loss_value)))
acc = sess.run(accuracy, {x: images, y: labels})
print("RESULT accuracy %r" % float(acc))
print("RESULT logits_first %s" % sess.run(logits, {x: images[:1]}).ravel().tolist())
sess.close()
