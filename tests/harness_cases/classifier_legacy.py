"""Harness case: a tf.layers classifier trained with Adam, fetching a dict of metrics (TF1 style)."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

rng = np.random.RandomState(1)
centres = rng.randn(3, 6)
labels = rng.randint(0, 3, size=300).astype(np.int64)
features = (centres[labels] + rng.randn(300, 6)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 6], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
hidden = tf.layers.dense(x, 16, activation=tf.nn.tanh, name="hidden")
logits = tf.layers.dense(hidden, 3, name="logits")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(60):
        batch = slice((step * 50) % 300, (step * 50) % 300 + 50)
        metrics, _ = sess.run([{"loss": loss, "accuracy": accuracy}, train_op],
                              feed_dict={x: features[batch], y: labels[batch]})
    final = sess.run({"loss": loss, "accuracy": accuracy}, feed_dict={x: features, y: labels})
    sample = sess.run(logits, feed_dict={x: features[:2]})

print("RESULT final_loss", float(final["loss"]))
print("RESULT final_accuracy", float(final["accuracy"]))
print("RESULT logits_sample", [round(float(v), 6) for v in sample.ravel()])
