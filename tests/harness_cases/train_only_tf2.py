"""Harness case: the TF2 counterpart of train_only_legacy.py."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
features = rng.uniform(-1.0, 1.0, size=(32, 3)).astype(np.float32)
targets = (features @ np.array([[0.5], [-1.0], [2.0]], np.float32)).astype(np.float32)

w = tf.Variable(tf.zeros([3, 1]), name="w")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))


for step in range(20):
    train_step(features, targets)
