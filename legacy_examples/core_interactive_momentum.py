"""Linear regression in an InteractiveSession, notebook style, with Nesterov momentum.

Uses the `tensorflow.compat.v1` import spelling, `tensor.eval(feed_dict=...)`,
`op.run(feed_dict=...)`, minibatches sliced from NumPy arrays and `sess.close()`.
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

BATCH = 16
EPOCHS = 3

rng = np.random.RandomState(3)
inputs = rng.uniform(-1.0, 1.0, size=(96, 4))            # float64, fed into float32 placeholders
true_w = np.array([[1.5], [-2.0], [0.5], [3.0]])
targets = inputs.dot(true_w) + 0.1 * rng.normal(size=(96, 1))

sess = tf.InteractiveSession()

x = tf.placeholder(tf.float32, shape=[None, 4])
y_true = tf.placeholder(tf.float32, shape=[None, 1])
w = tf.Variable(rng.normal(0.0, 0.1, size=(4, 1)).astype(np.float32))
bias = tf.Variable(0.0)
y_pred = tf.matmul(x, w) + bias
mse = tf.reduce_mean(tf.square(y_pred - y_true))
train = tf.train.MomentumOptimizer(0.05, momentum=0.9, use_nesterov=True).minimize(mse)

tf.global_variables_initializer().run()
print("RESULT initial_mse %r" % float(mse.eval(feed_dict={x: inputs, y_true: targets})))

history = []
for epoch in range(EPOCHS):
    for start in range(0, len(inputs), BATCH):
        train.run(feed_dict={x: inputs[start:start + BATCH], y_true: targets[start:start + BATCH]})
    epoch_mse = mse.eval(feed_dict={x: inputs, y_true: targets})
    history.append(epoch_mse)
    print("epoch %d mse %.5f" % (epoch, epoch_mse))

print("RESULT epoch_mse %s" % [float(v) for v in history])
print("RESULT weights %s" % [float(v) for v in w.eval().ravel()])
print("RESULT bias %r" % float(bias.eval()))
sess.close()
