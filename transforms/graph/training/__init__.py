"""Training pieces: tf.train optimizers -> Keras optimizers, train ops -> GradientTape steps,
streaming metrics -> Keras metrics."""
