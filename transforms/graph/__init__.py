"""TFM2xx: structural rewrites of TF1 graph programs. `sessions_to_functions` (TFM201) turns
Session / placeholder / feed_dict programs into tf.function steps, Keras layers and GradientTape; its
stages live in the subpackages: `analysis` (what the graph code is), `structure` (builders, classes,
modules the graph is spread over), `sessions` (run sites), `layers`, `rnn`, `training` (optimizers,
train ops, metrics), `inputs` (datasets, queues), `outputs` (checkpoints, summaries) and `writing`
(the TF2 code it emits)."""
