"""Where tf.contrib went. TensorFlow 2 has no tf.contrib at all, so references are reported, never
rewritten: the replacements differ in API and behaviour. Symbol-level replacements come from TF's own
converter (symbols.json "contrib"); this hand-kept table covers whole modules."""
from __future__ import annotations

from transforms.common.tables import symbol_table

MODULE_REPLACEMENTS: dict[str, str] = {
    "tf.contrib.bayesflow": "TensorFlow Probability (tfp)",
    "tf.contrib.checkpoint": "tf.train.Checkpoint",
    "tf.contrib.crf": "TensorFlow Addons tfa.text (end of life)",
    "tf.contrib.cudnn_rnn": "tf.keras.layers.LSTM / GRU (they use cuDNN kernels automatically)",
    "tf.contrib.data": "tf.data / tf.data.experimental",
    "tf.contrib.distribute": "tf.distribute",
    "tf.contrib.distributions": "TensorFlow Probability tfp.distributions",
    "tf.contrib.eager": "TF2 eager execution (the default) and tf.function",
    "tf.contrib.estimator": "tf.keras (tf.estimator was removed in TensorFlow 2.16)",
    "tf.contrib.framework": "tf.nest, tf.sort/tf.argsort, tf.compat.v1.train checkpoint utilities",
    "tf.contrib.gan": "TF-GAN (tensorflow_gan)",
    "tf.contrib.image": "tf.image or TensorFlow Addons tfa.image (end of life)",
    "tf.contrib.keras": "tf.keras",
    "tf.contrib.layers": "tf.keras.layers, or tf_slim.layers for the same functions",
    "tf.contrib.learn": "tf.keras (tf.estimator was removed in TensorFlow 2.16)",
    "tf.contrib.lite": "tf.lite",
    "tf.contrib.lookup": "tf.lookup",
    "tf.contrib.losses": "tf.keras.losses (or tf.compat.v1.losses)",
    "tf.contrib.metrics": "tf.keras.metrics (or tf.compat.v1.metrics)",
    "tf.contrib.opt": "tf.keras.optimizers",
    "tf.contrib.predictor": "tf.saved_model.load",
    "tf.contrib.quantize": "TensorFlow Model Optimization (tfmot.quantization)",
    "tf.contrib.rnn": "tf.keras.layers (LSTMCell, GRUCell, RNN) or tf.compat.v1.nn.rnn_cell "
                      "(legacy Keras)",
    "tf.contrib.seq2seq": "TensorFlow Addons tfa.seq2seq (end of life) or Keras layers",
    "tf.contrib.signal": "tf.signal",
    "tf.contrib.slim": "tf.keras layers, or tf_slim (pip install tf-slim; import tf_slim as slim) on "
                       "tf.compat.v1 (tf-slim 1.1's batch_norm no longer loads on TensorFlow 2.21)",
    "tf.contrib.stateless": "tf.random.stateless_* functions",
    "tf.contrib.summary": "tf.summary (the TF2 summary API)",
    "tf.contrib.tensor_forest": "TensorFlow Decision Forests",
    "tf.contrib.tpu": "tf.distribute.TPUStrategy",
    "tf.contrib.training": "tf.data input pipelines and Keras training loops",
    "tf.contrib.util": "tf.make_ndarray, tf.make_tensor_proto, tf.get_static_value",
}


# Modules outside tf.contrib that TensorFlow 2 dropped as well (reported the same way).
REMOVED_MODULES: dict[str, str] = {
    "tf.examples.tutorials": "tf.keras.datasets (e.g. tf.keras.datasets.mnist.load_data()) or tensorflow_datasets",
}


def removed_module(canonical: str) -> str | None:
    """The removed non-contrib module `canonical` lies in, if any."""
    return next((m for m in REMOVED_MODULES if canonical == m or canonical.startswith(m + ".")), None)


def is_gone(canonical: str) -> bool:
    """tf.contrib, or another module TensorFlow 2 no longer has: references cannot be rewritten."""
    return is_contrib(canonical) or removed_module(canonical) is not None


def is_contrib(canonical: str) -> bool:
    return canonical == "tf.contrib" or canonical.startswith("tf.contrib.")


def contrib_message(canonical: str) -> str:
    """A finding's text for a reference to or an import of `canonical` (a tf.contrib name, or one in
    another removed module)."""
    removed = removed_module(canonical)
    if removed is not None:
        return f"{canonical}: {removed} is not part of TensorFlow 2; use {REMOVED_MODULES[removed]}"
    replacement = symbol_table().contrib.get(canonical)
    if replacement:
        advice = f"use {replacement}"
    else:
        module = max((m for m in MODULE_REPLACEMENTS if canonical == m or canonical.startswith(m + ".")),
                     key=len, default=None)
        advice = f"replace with {MODULE_REPLACEMENTS[module]}" if module else "no direct replacement"
    return f"{canonical}: tf.contrib is not part of TensorFlow 2; {advice}; left unchanged"
