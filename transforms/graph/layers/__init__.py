"""tf.layers / contrib.layers / slim layers -> Keras layers, model functions that build them,
regularizers and variable lists."""
