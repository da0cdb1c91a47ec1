"""Harness case: the TF2 / Keras 3 counterpart of classifier_legacy.py.

The layers keep their TF1 names inside a Sequential model (variables `sequential/hidden/kernel`),
so the harness pairs them with the legacy `hidden/kernel` by name suffix.
"""
import keras
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
centres = rng.randn(3, 6)
labels = rng.randint(0, 3, size=300).astype(np.int64)
features = (centres[labels] + rng.randn(300, 6)).astype(np.float32)

model = keras.Sequential([
    keras.Input((6,)),
    keras.layers.Dense(16, activation="tanh", name="hidden"),
    keras.layers.Dense(3, name="logits"),
])
optimizer = keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-8)


def metrics_of(logits, y):
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return {"loss": loss, "accuracy": accuracy}


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        metrics = metrics_of(model(x), y)
    grads = tape.gradient(metrics["loss"], model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return metrics, None


@tf.function
def evaluate(x, y):
    return metrics_of(model(x), y)


@tf.function
def predict(x):
    return model(x)


for step in range(60):
    batch = slice((step * 50) % 300, (step * 50) % 300 + 50)
    metrics, _ = train_step(features[batch], labels[batch])
final = evaluate(features, labels)
sample = predict(features[:2]).numpy()

print("RESULT final_loss", float(final["loss"]))
print("RESULT final_accuracy", float(final["accuracy"]))
print("RESULT logits_sample", [round(float(v), 6) for v in sample.ravel()])
