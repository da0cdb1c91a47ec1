"""Harness case: the TF2 counterpart of noise_legacy.py (one training function, traced once)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
features = rng.uniform(-1.0, 1.0, size=(64, 4)).astype(np.float32)
targets = np.cos(features.sum(axis=1, keepdims=True)).astype(np.float32)

glorot = tf.keras.initializers.GlorotUniform()
w1 = tf.Variable(glorot([4, 16]), name="w1")
w2 = tf.Variable(glorot([16, 1]), name="w2")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)


@tf.function
def train_step(x, y, keep_prob):
    with tf.GradientTape() as tape:
        noisy = x + tf.random.normal(tf.shape(x), stddev=0.1)
        hidden = tf.nn.dropout(tf.nn.relu(tf.matmul(noisy, w1)), rate=1 - keep_prob)
        loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, [w1, w2]), [w1, w2]))
    return None, loss


for step in range(15):
    _, train_loss = train_step(features, targets, 0.5)
weights = w2.numpy()
print("RESULT trained_weight_sum", float(weights.sum()))
