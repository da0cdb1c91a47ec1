"""An InteractiveSession script in the style of the TF1 tutorials: ops run with `op.run()`, tensors
read with `tensor.eval()`, no `with` block. The weights are averaged by
`tf.train.ExponentialMovingAverage`, and the evaluation reads the averages through a helper that
assigns them to a copy of the model (`tf.assign` inside a function).

TFM201 does not convert an assignment built inside a helper function, so the graph stays TF1 code,
wrapped once by `tf.compat.v1.wrap_function`; every `.run()` / `.eval()` becomes a TF2 function pruned
from it (TFM203).
"""
import numpy as np
import tensorflow as tf

STEPS = 80

rng = np.random.RandomState(11)
true_w = rng.normal(size=(5, 1)).astype(np.float32)
inputs = rng.normal(size=(200, 5)).astype(np.float32)
targets = inputs @ true_w + 0.1 * rng.normal(size=(200, 1)).astype(np.float32)


def copy_weights(sources, targets):
    return tf.group(*[tf.assign(target, source) for source, target in zip(sources, targets)])


x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(np.zeros((5, 1), np.float32), name="w")
b = tf.Variable(0.0, name="b")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
step = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
ema = tf.train.ExponentialMovingAverage(decay=0.9)
with tf.control_dependencies([step]):
    train = ema.apply([w, b])

eval_w = tf.Variable(np.zeros((5, 1), np.float32), trainable=False, name="eval_w")
eval_b = tf.Variable(0.0, trainable=False, name="eval_b")
load_averages = copy_weights([ema.average(w), ema.average(b)], [eval_w, eval_b])
eval_loss = tf.reduce_mean(tf.square(tf.matmul(x, eval_w) + eval_b - y))

sess = tf.InteractiveSession()
tf.global_variables_initializer().run()
for i in range(STEPS):
    batch = slice(i % 10 * 20, i % 10 * 20 + 20)
    train.run(feed_dict={x: inputs[batch], y: targets[batch]})
    if i % 20 == 0:
        print("step %d loss %.4f" % (i, loss.eval(feed_dict={x: inputs, y: targets})))
print("RESULT loss %r" % float(loss.eval(feed_dict={x: inputs, y: targets})))
load_averages.run()
print("RESULT averaged_loss %r" % float(eval_loss.eval(feed_dict={x: inputs, y: targets})))
print("RESULT averaged_bias %r" % float(eval_b.eval()))
sess.close()
