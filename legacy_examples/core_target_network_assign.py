"""A DQN-style regressor with a target network refreshed by `tf.assign`.

The online weights learn to predict `reward + 0.5 * target(next_x)`, where the target network's
weights are non-trainable copies refreshed every few steps by their own `sess.run` of two
`tf.assign` ops. A manual counter (`tf.assign_add`) is fetched beside the train op and an
evaluation run reads the weights without running any assignment. Weights come from seeded NumPy
arrays, so runs are reproducible.
"""
import numpy as np
import tensorflow as tf

STEPS = 30
SYNC_EVERY = 10

rng = np.random.RandomState(5)
states = rng.normal(size=(64, 3)).astype(np.float32)
next_states = rng.normal(size=(64, 3)).astype(np.float32)
rewards = rng.normal(size=(64, 1)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 3])
next_x = tf.placeholder(tf.float32, [None, 3])
reward = tf.placeholder(tf.float32, [None, 1])

online_w = tf.Variable(rng.normal(0, 0.5, size=(3, 1)).astype(np.float32))
online_b = tf.Variable(np.zeros(1, np.float32))
target_w = tf.Variable(np.zeros((3, 1), np.float32), trainable=False)
target_b = tf.Variable(np.zeros(1, np.float32), trainable=False)
updates_done = tf.Variable(0, trainable=False)

prediction = tf.matmul(x, online_w) + online_b
target_value = reward + 0.5 * (tf.matmul(next_x, target_w) + target_b)
loss = tf.reduce_mean(tf.square(prediction - target_value))
optimizer = tf.train.GradientDescentOptimizer(0.05)
train_op = optimizer.minimize(loss)
count_update = tf.assign_add(updates_done, 1)

sync_w = tf.assign(target_w, online_w)
sync_b = tf.assign(target_b, online_b)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run([sync_w, sync_b])
    feed = {x: states, next_x: next_states, reward: rewards}
    for step in range(STEPS):
        _, step_loss, done = sess.run([train_op, loss, count_update], feed_dict=feed)
        if step % SYNC_EVERY == SYNC_EVERY - 1:
            synced_w, synced_b = sess.run([sync_w, sync_b])
            print("step %d: loss %.4f, target synced" % (done, step_loss))
            print("RESULT loss_%d %r" % (done, float(step_loss)))
            print("RESULT target_bias_%d %r" % (done, float(synced_b[0])))
    print("RESULT updates_done %r" % float(done))
    print("RESULT eval_loss %r" % float(sess.run(loss, feed_dict=feed)))
    print("RESULT target_weights %s" % [float(v) for v in sess.run(target_w).ravel()])
