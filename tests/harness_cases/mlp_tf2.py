"""Harness case: the TF2 counterpart of mlp_legacy.py (variables keep their TF1 scope names)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
features = rng.randn(256, 4).astype(np.float32)
targets = (features @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.1 * rng.randn(256, 1)).astype(np.float32)


class Dense(tf.Module):
    def __init__(self, scope, fan_in, units, activation=None):
        super().__init__(name=scope)
        with tf.name_scope(scope):
            self.W = tf.Variable(tf.keras.initializers.GlorotUniform()([fan_in, units]), name="W")
            self.b = tf.Variable(tf.zeros([units]), name="b")
        self.activation = activation

    def __call__(self, inputs):
        out = tf.matmul(inputs, self.W) + self.b
        return self.activation(out) if self.activation else out


layers = [Dense("hidden1", 4, 8, tf.nn.relu), Dense("hidden2", 8, 8, tf.nn.relu), Dense("out", 8, 1)]
variables = [v for layer in layers for v in (layer.W, layer.b)]
optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)


def compute_loss(x, y):
    out = x
    for layer in layers:
        out = layer(out)
    return tf.reduce_mean(tf.square(out - y))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = compute_loss(x, y)
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return None, loss


@tf.function
def evaluate(x, y):
    return compute_loss(x, y)


for step in range(40):
    batch = slice((step * 32) % 256, (step * 32) % 256 + 32)
    _, batch_loss = train_step(features[batch], targets[batch])
final_loss = evaluate(features, targets)

print("RESULT final_loss", float(final_loss))
