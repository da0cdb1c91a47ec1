"""Two-layer classifier written against `import tensorflow` (no alias) and `from tensorflow import nn`.

Momentum SGD with a constant learning rate and a global step variable passed to minimize()
(a decaying rate under TF1 Momentum has no exact Keras form, see optimizers.json), run through
an explicit `tensorflow.Session()` closed at the end. Weights come from seeded NumPy arrays,
so runs are reproducible.
"""
import numpy as np
import tensorflow
from tensorflow import nn

STEPS = 60

rng = np.random.RandomState(9)
points = rng.normal(size=(150, 2)).astype(np.float32)
labels_np = (points[:, 0] ** 2 + points[:, 1] ** 2 > 1.2).astype(np.int32)

points_in = tensorflow.placeholder(tensorflow.float32, shape=[None, 2])
labels_in = tensorflow.placeholder(tensorflow.int32, shape=[None])

weights_1 = tensorflow.Variable(rng.normal(0, 0.8, size=(2, 12)).astype(np.float32))
biases_1 = tensorflow.Variable(tensorflow.zeros([12]))
weights_2 = tensorflow.Variable(rng.normal(0, 0.8, size=(12, 2)).astype(np.float32))
biases_2 = tensorflow.Variable(tensorflow.zeros([2]))
hidden = nn.relu(tensorflow.matmul(points_in, weights_1) + biases_1)
logits = tensorflow.matmul(hidden, weights_2) + biases_2
loss = tensorflow.reduce_mean(nn.sparse_softmax_cross_entropy_with_logits(labels=labels_in, logits=logits))
correct = tensorflow.equal(tensorflow.argmax(logits, 1, output_type=tensorflow.int32), labels_in)
accuracy = tensorflow.reduce_mean(tensorflow.cast(correct, tensorflow.float32))

global_step = tensorflow.Variable(0, trainable=False, name="global_step")
optimizer = tensorflow.train.MomentumOptimizer(0.1, momentum=0.9)
train_op = optimizer.minimize(loss, global_step=global_step)

session = tensorflow.Session()
session.run(tensorflow.global_variables_initializer())
for step in range(STEPS):
    _, step_loss = session.run([train_op, loss], feed_dict={points_in: points, labels_in: labels_np})
    if step % 20 == 19:
        print("step %d: loss %.4f" % (step + 1, step_loss))
        print("RESULT loss_%d %r" % (step + 1, float(step_loss)))
print("RESULT final_step %r" % float(session.run(global_step)))
print("RESULT accuracy %r" % float(session.run(accuracy, feed_dict={points_in: points, labels_in: labels_np})))
session.close()
