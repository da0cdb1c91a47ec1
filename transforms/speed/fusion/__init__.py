"""Step-loop and epoch-loop fusion (TFM301, TFM310): what a loop reads and binds, whether it
can run in one graph, and the multi-step functions it becomes."""
