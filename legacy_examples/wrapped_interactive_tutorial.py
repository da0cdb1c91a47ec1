"""The TF1 tutorials' shape: an InteractiveSession opened first, then the graph, built with the
tutorials' `weight_variable` / `bias_variable` helpers, its losses gathered in a graph collection, run
with `train_step.run(feed_dict=...)` and `accuracy.eval(feed_dict=...)`, and a test accuracy built only
after training.

The collection is outside what TFM201 models, so the graph stays TF1 code, wrapped once by
`tf.compat.v1.wrap_function` (TFM203): the graph built after the session line, and the accuracy built
after training, join the wrapped graph; every `.run()` / `.eval()` becomes a pruned function.
"""
import numpy as np
import tensorflow as tf

sess = tf.InteractiveSession()

rng = np.random.RandomState(6)
images = rng.rand(300, 20).astype(np.float32)
labels = np.eye(4, dtype=np.float32)[(images[:, :4] * [1, 2, 3, 4]).argmax(axis=1)]


def weight_variable(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1, seed=sum(shape)))


def bias_variable(shape):
    return tf.Variable(tf.constant(0.1, shape=shape))


x = tf.placeholder(tf.float32, [None, 20])
y_ = tf.placeholder(tf.float32, [None, 4])
W_fc1, b_fc1 = weight_variable([20, 32]), bias_variable([32])
h_fc1 = tf.nn.relu(tf.matmul(x, W_fc1) + b_fc1)
W_fc2, b_fc2 = weight_variable([32, 4]), bias_variable([4])
y_conv = tf.matmul(h_fc1, W_fc2) + b_fc2
for weights in (W_fc1, W_fc2):
    tf.add_to_collection("penalties", 1e-4 * tf.nn.l2_loss(weights))
cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv))
total_loss = cross_entropy + tf.add_n(tf.get_collection("penalties"))
train_step = tf.train.AdamOptimizer(1e-2).minimize(total_loss)
tf.global_variables_initializer().run()

for i in range(150):
    batch = rng.randint(0, 250, 25)
    if i % 50 == 0:
        print("step %d, training loss %g" % (i, total_loss.eval(feed_dict={x: images[batch], y_: labels[batch]})))
    train_step.run(feed_dict={x: images[batch], y_: labels[batch]})

correct_prediction = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
print("RESULT test_accuracy", accuracy.eval(feed_dict={x: images[250:], y_: labels[250:]}))
print("RESULT final_loss", total_loss.eval(feed_dict={x: images[250:], y_: labels[250:]}))
sess.close()
