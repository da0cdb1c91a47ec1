"""tf-migrate: legacy TensorFlow 1.x to idiomatic, fast TensorFlow 2, with evidence."""

__version__ = "0.1.0"
