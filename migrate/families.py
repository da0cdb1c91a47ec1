"""Which TF1 API families a file uses, and how many of their sites reached TF2.

A site is one reference to a family's symbol, resolved by qualified name (any import spelling). The
input's sites are counted; the output's references that still need TF1 are the ones left behind:
`compat` when reached through `tf.compat.v1` (or tf-slim), `tf1` when current TensorFlow lacks them
(tf.contrib). The rest of the input's sites reached TF2.

The tables live here and import no libcst (the report and the CLI need only the names); the counting
visitor (family_counts) is in migrate/family_sites.py, which the runner imports.
"""
from __future__ import annotations

# Ordered: a symbol belongs to the first family that lists it. Entries ending in "." cover a namespace.
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sessions", ("tf.Session", "tf.InteractiveSession", "tf.placeholder", "tf.placeholder_with_default",
                  "tf.get_default_session", "tf.global_variables_initializer",
                  "tf.local_variables_initializer", "tf.initialize_all_variables")),
    ("rnn", ("tf.nn.rnn_cell.", "tf.contrib.rnn.", "tf.nn.dynamic_rnn", "tf.nn.static_rnn",
             "tf.nn.bidirectional_dynamic_rnn", "tf.nn.static_bidirectional_rnn")),
    ("contrib/slim", ("tf.contrib.",)),
    ("layers", ("tf.layers.",)),
    ("optimizers", ("tf.train.GradientDescentOptimizer", "tf.train.AdamOptimizer", "tf.train.MomentumOptimizer",
                    "tf.train.RMSPropOptimizer", "tf.train.AdagradOptimizer", "tf.train.AdadeltaOptimizer",
                    "tf.train.FtrlOptimizer", "tf.train.AdagradDAOptimizer",
                    "tf.train.ProximalGradientDescentOptimizer", "tf.train.ProximalAdagradOptimizer",
                    "tf.train.exponential_decay", "tf.train.piecewise_constant", "tf.train.polynomial_decay",
                    "tf.train.get_or_create_global_step", "tf.train.get_global_step")),
    ("losses/metrics", ("tf.losses.", "tf.metrics.")),
    ("checkpoints", ("tf.train.Saver", "tf.train.import_meta_graph", "tf.train.export_meta_graph",
                     "tf.train.get_checkpoint_state", "tf.train.checkpoint_exists")),
    ("summaries", ("tf.summary.",)),
    ("flags/logging", ("tf.app.", "tf.flags.", "tf.logging.")),
    ("variable scopes", ("tf.variable_scope", "tf.get_variable", "tf.get_variable_scope", "tf.AUTO_REUSE")),
    ("input queues/iterators", ("tf.train.string_input_producer", "tf.train.slice_input_producer",
                                "tf.train.batch", "tf.train.shuffle_batch", "tf.train.start_queue_runners",
                                "tf.train.Coordinator", "tf.train.QueueRunner", "tf.TFRecordReader",
                                "tf.FIFOQueue", "tf.RandomShuffleQueue", "tf.data.make_one_shot_iterator",
                                "tf.data.make_initializable_iterator")),
    ("estimators", ("tf.estimator.",)),
)
FAMILY_NAMES = tuple(name for name, _ in FAMILIES)


def family_of(canonical: str) -> str | None:
    for family, members in FAMILIES:
        if any(canonical == m or (m.endswith(".") and canonical.startswith(m)) for m in members):
            return family
    return None
