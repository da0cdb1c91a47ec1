"""TFM4xx: tf.app.flags / tf.logging / tf.app.run -> absl."""
