"""Input pipelines in the graph: tf.data one-shot iterators and queue runners -> tf.data."""
