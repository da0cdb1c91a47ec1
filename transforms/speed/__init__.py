"""TFM3xx: rewrites that make migrated programs fast: step loops fused into one graph loop, epochs
fused, input pipelines through tf.data, XLA and mixed precision."""
