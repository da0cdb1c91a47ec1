"""Softmax regression trained in minibatches from an InteractiveSession.

The notebook style of early TF1 tutorials: an InteractiveSession installs itself as the
default session, so tensors are evaluated with loss.eval(...) and ops run with
train_op.run(...); the data is sliced into batches by a plain Python loop.
"""
import numpy as np
import tensorflow as tf

BATCH_SIZE = 20
EPOCHS = 4

rng = np.random.RandomState(2018)
num_examples, num_features, num_classes = 120, 8, 3
data = rng.normal(size=(num_examples, num_features)).astype(np.float32)
true_weights = rng.normal(size=(num_features, num_classes))
labels = np.eye(num_classes)[np.argmax(data.dot(true_weights), axis=1)].astype(np.float32)

tf.set_random_seed(2018)
sess = tf.InteractiveSession()

x = tf.placeholder(tf.float32, shape=[None, num_features])
y_ = tf.placeholder(tf.float32, shape=[None, num_classes])
W = tf.Variable(tf.random_normal([num_features, num_classes], stddev=0.01, seed=2018))
b = tf.Variable(tf.zeros([num_classes]))
y = tf.matmul(x, W) + b

cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

tf.global_variables_initializer().run()
print("RESULT initial_loss %r" % float(cross_entropy.eval(feed_dict={x: data, y_: labels})))

epoch_losses = []
for epoch in range(EPOCHS):
    for start in range(0, num_examples, BATCH_SIZE):
        batch_x = data[start:start + BATCH_SIZE]
        batch_y = labels[start:start + BATCH_SIZE]
        train_step.run(feed_dict={x: batch_x, y_: batch_y})
    epoch_loss = cross_entropy.eval(feed_dict={x: data, y_: labels})
    epoch_losses.append(float(epoch_loss))
    print("epoch %d, loss %g" % (epoch, epoch_loss))

print("RESULT epoch_losses %s" % epoch_losses)
print("RESULT final_accuracy %r" % float(accuracy.eval(feed_dict={x: data, y_: labels})))
print("RESULT bias %s" % [float(v) for v in b.eval()])
sess.close()
