"""Helpers every family shares: libcst syntax and values, import editing, TensorFlow qualified names,
the data tables (transforms/data/) and where tf.contrib went."""
