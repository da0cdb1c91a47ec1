"""A two-layer regression network trained with centered RMSProp, momentum and a decayed learning rate.

TF1's RMSProp starts its mean-square accumulator at 1.0 (Keras RMSprop starts it at 0.0), so the
migrated program must carry TF1's update: tf-migrate writes a Keras optimizer running TF1's kernel
into the file. Also: `tf.train.exponential_decay` on a `global_step` variable passed to
`minimize`, hidden units built with `tf.Variable` from seeded NumPy values, fed minibatches.
"""
import numpy as np
import tensorflow as tf

BATCH = 16
EPOCHS = 4
HIDDEN = 8

rng = np.random.RandomState(7)
inputs = rng.uniform(-1.0, 1.0, size=(128, 3)).astype(np.float32)
targets = (np.sin(inputs[:, :1] * 2.0) + inputs[:, 1:2] * inputs[:, 2:3]).astype(np.float32)

x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
y = tf.placeholder(tf.float32, shape=[None, 1], name="y")
w1 = tf.Variable(rng.normal(0.0, 0.5, size=(3, HIDDEN)).astype(np.float32), name="w1")
b1 = tf.Variable(np.zeros(HIDDEN, np.float32), name="b1")
w2 = tf.Variable(rng.normal(0.0, 0.5, size=(HIDDEN, 1)).astype(np.float32), name="w2")
b2 = tf.Variable(0.0, name="b2")
hidden = tf.nn.tanh(tf.matmul(x, w1) + b1)
prediction = tf.matmul(hidden, w2) + b2
loss = tf.reduce_mean(tf.square(prediction - y))

global_step = tf.Variable(0, trainable=False, name="global_step")
learning_rate = tf.train.exponential_decay(0.01, global_step, 8, 0.9, staircase=True)
optimizer = tf.train.RMSPropOptimizer(learning_rate, decay=0.9, momentum=0.5, centered=True)
train_op = optimizer.minimize(loss, global_step=global_step)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("RESULT initial_loss %r" % float(sess.run(loss, feed_dict={x: inputs, y: targets})))
    history = []
    for epoch in range(EPOCHS):
        for start in range(0, len(inputs), BATCH):
            sess.run(train_op, feed_dict={x: inputs[start:start + BATCH], y: targets[start:start + BATCH]})
        epoch_loss = sess.run(loss, feed_dict={x: inputs, y: targets})
        history.append(float(epoch_loss))
        print("epoch %d loss %.5f" % (epoch, epoch_loss))
    print("RESULT epoch_loss %s" % history)
    print("RESULT step %d" % sess.run(global_step))
    print("RESULT output_weights %s" % [float(v) for v in sess.run(w2).ravel()])
