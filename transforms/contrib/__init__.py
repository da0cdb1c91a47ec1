"""TFM5xx: tf.contrib and slim: arg_scope blocks written out, contrib ops with an exact core
equivalent."""
