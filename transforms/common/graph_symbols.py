"""What the TF1 graph-building symbols are, for sessions_to_functions (TFM201).

The facts live in data tables (transforms/data/graph_api.json, layers.json, optimizers.json,
initializers.json) keyed by canonical `tf.` names (see transforms/common/qualnames.py). Any `tf.` call not
named there is taken to be a pure op: it computes tensors from tensors and can move into a
`tf.function` unchanged (the rename transforms later give it its TF2 spelling).
"""
from __future__ import annotations

import json
from enum import Enum
from functools import lru_cache

from transforms.common.qualnames import canonical_tf_name
from transforms.common.syntax import calls_under
from transforms.common.tables import DATA_DIR, symbol_table


class Category(Enum):
    PLACEHOLDER = "placeholder"
    VARIABLE = "variable"
    ASSIGN = "variable assignment op"
    GLOBAL_STEP = "global step"
    SESSION = "session"
    INIT_OP = "initializer op"
    SCOPE = "scope"
    GRAPH_CONTEXT = "graph"
    SEED = "seed"
    DROPPED = "dropped call"
    SAVER = "saver"
    DATASET = "tf.data pipeline"
    ITERATOR = "one-shot iterator"
    SUMMARY = "summary op"
    SUMMARY_MERGE = "summary merge"
    SUMMARY_WRITER = "summary writer"
    QUEUE_PRODUCER = "filename queue"
    QUEUE_READER = "record reader"
    QUEUE_BATCH = "batching queue"
    QUEUE_RUNNERS = "queue runners"
    QUEUE_COORDINATOR = "queue-runner coordinator"
    RNN_CELL = "RNN cell"
    RNN_RUN = "RNN over a sequence"
    REGULARIZATION = "regularization losses"
    LAYER = "layer"
    OPTIMIZER = "optimizer"
    REFUSED_OPTIMIZER = "refused optimizer"
    SCHEDULE = "learning-rate schedule"
    INITIALIZER = "initializer"
    PYTHON = "python utility"
    UNSUPPORTED = "unsupported"
    OP = "op"


@lru_cache(maxsize=None)
def table(name: str) -> dict:
    """One of the JSON tables in transforms/data, without its `about` note."""
    data = json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))
    data.pop("about", None)
    return data


@lru_cache(maxsize=1)
def layer_table() -> dict:
    """Layers and losses: both become Keras objects built once and called in the step functions."""
    return {**table("layers"), **table("losses")}


def _in(name: str, entries) -> bool:
    """Whether `name` is one of `entries` or lies under one of its namespaces (entries ending in '.')."""
    return any(name == entry or (entry.endswith(".") and name.startswith(entry)) for entry in entries)


_NAMED_CATEGORIES = (
    ("placeholders", Category.PLACEHOLDER),
    ("variables", Category.VARIABLE),
    ("assign_ops", Category.ASSIGN),
    ("global_step", Category.GLOBAL_STEP),
    ("sessions", Category.SESSION),
    ("init_ops", Category.INIT_OP),
    ("scopes", Category.SCOPE),
    ("graph_contexts", Category.GRAPH_CONTEXT),
    ("seeds", Category.SEED),
    ("dropped_calls", Category.DROPPED),
    ("savers", Category.SAVER),
    ("iterators", Category.ITERATOR),
    ("summary_ops", Category.SUMMARY),
    ("summary_merges", Category.SUMMARY_MERGE),
    ("summary_writers", Category.SUMMARY_WRITER),
    ("queue_producers", Category.QUEUE_PRODUCER),
    ("queue_readers", Category.QUEUE_READER),
    ("queue_batches", Category.QUEUE_BATCH),
    ("queue_runners", Category.QUEUE_RUNNERS),
    ("queue_coordinators", Category.QUEUE_COORDINATOR),
    ("rnn_cells", Category.RNN_CELL),
    ("rnn_runs", Category.RNN_RUN),
    ("regularization_losses", Category.REGULARIZATION),
)


@lru_cache(maxsize=4096)
def categorize(name: str) -> tuple[Category, str]:
    """The category of a canonical TF name, and for UNSUPPORTED / REFUSED_OPTIMIZER the reason.

    The tables name each symbol once; its other spelling (`tf.FIFOQueue` / `tf.queue.FIFOQueue`,
    one renamed to the other by TFM101) is the same object and gets the same category, or a run
    on renamed code would model what the run before it refused."""
    category = _categorize_spelling(name)
    for other in _other_spellings().get(name, ()):
        if category[0] is not Category.OP:
            break
        category = _categorize_spelling(other)
    return category


@lru_cache(maxsize=1)
def _other_spellings() -> dict[str, list[str]]:
    """The other names of each symbol that the rename table moves: its TF2 name and every TF1
    name renamed to that (`tf.io.RandomShuffleQueue`, `tf.RandomShuffleQueue`)."""
    names_of: dict[str, list[str]] = {}
    for old, new in symbol_table().renames.items():
        old_name, new_name = (canonical_tf_name("tensorflow" + name[len("tf"):]) for name in (old, new))
        if old_name and new_name and old_name != new_name:
            names_of.setdefault(new_name, [new_name]).append(old_name)
    return {name: [other for other in names if other != name]
            for names in names_of.values() for name in names}


def _categorize_spelling(name: str) -> tuple[Category, str]:
    api = table("graph_api")
    for key, category in _NAMED_CATEGORIES:
        if name in api[key]:
            return category, ""
    optimizers = table("optimizers")
    specific = (
        (layer_table(), Category.LAYER),
        (optimizers["optimizers"], Category.OPTIMIZER),
        (optimizers["schedules"], Category.SCHEDULE),
        (table("initializers"), Category.INITIALIZER),
    )
    for entries, category in specific:
        if name in entries:
            return category, ""
    if name in optimizers["refused"]:
        return Category.REFUSED_OPTIMIZER, optimizers["refused"][name]
    if _in(name, api["datasets"]):
        return Category.DATASET, ""
    if _in(name, api["python_utilities"]):
        return Category.PYTHON, ""
    unsupported = api["unsupported"]
    for entry in sorted(unsupported, key=len, reverse=True):
        if _in(name, [entry]):
            return Category.UNSUPPORTED, unsupported[entry]
    return Category.OP, ""


def summary_kind(name: str) -> str:
    """'scalar', 'histogram', 'image' or 'text' for a v1 summary op (its tf.summary v2 counterpart)."""
    return table("graph_api")["summary_ops"][name]


def assign_method(name: str) -> str:
    """The variable method a TF1 assignment op becomes: 'assign', 'assign_add' or 'assign_sub'."""
    return table("graph_api")["assign_ops"][name]


def rnn_cell_kind(name: str | None) -> str | None:
    """'lstm', 'gru' or 'simple' for a TF1 RNN cell class (its Keras layer: LSTM, GRU, SimpleRNN),
    'dropout' for DropoutWrapper, 'stack' for MultiRNNCell; None for anything else."""
    return table("graph_api")["rnn_cells"].get(name)


def scope_kind(name: str) -> str:
    """'variable' for tf.variable_scope, 'name' for tf.name_scope."""
    return table("graph_api")["scopes"][name]


def calls_category(tf_name, node, category: Category) -> bool:
    """Whether `node` contains a call of a TF symbol of `category` (`tf_name` resolves a callee)."""
    for call in calls_under(node):
        name = tf_name(call.func)
        if name and categorize(name)[0] is category:
            return True
    return False
