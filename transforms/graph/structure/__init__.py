"""Where real programs put their graph: builder functions, classes that hold it, functions
that create variables (tf.Module), helpers the session is passed to."""
