"""Harness case: the TF2 counterpart of dropout_legacy.py; keep_prob stays a function argument."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
features = rng.uniform(-1.0, 1.0, size=(128, 5)).astype(np.float32)
targets = np.sin(features.sum(axis=1, keepdims=True)).astype(np.float32)

glorot = tf.keras.initializers.GlorotUniform()
with tf.name_scope("layer1"):
    w1 = tf.Variable(glorot([5, 32]), name="W")
    b1 = tf.Variable(tf.zeros([32]), name="b")
with tf.name_scope("layer2"):
    w2 = tf.Variable(glorot([32, 1]), name="W")
    b2 = tf.Variable(tf.zeros([1]), name="b")
variables = [w1, b1, w2, b2]
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)


def compute_loss(x, y, keep_prob):
    hidden = tf.nn.dropout(tf.nn.relu(tf.matmul(x, w1) + b1), rate=1.0 - keep_prob)
    return tf.reduce_mean(tf.square(tf.matmul(hidden, w2) + b2 - y))


@tf.function
def evaluate(x, y, keep_prob):
    return compute_loss(x, y, keep_prob)


@tf.function
def train_step(x, y, keep_prob):
    with tf.GradientTape() as tape:
        loss = compute_loss(x, y, keep_prob)
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return None, loss


before = evaluate(features, targets, 1.0)
print("RESULT loss_before_training", float(before))
for step in range(20):
    _, train_loss = train_step(features, targets, 0.5)
after = evaluate(features, targets, 1.0)
print("RESULT loss_after_training", float(after))
