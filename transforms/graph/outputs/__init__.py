"""What a program writes: Saver -> tf.train.Checkpoint, v1 summaries -> tf.summary v2."""
