"""The data model of a TF1 graph program, as sessions_to_functions (TFM201) sees it.

The graph-building code of one block (the module body, or the body of a function such as `main()`) is
read as a straight-line sequence of statements (`Item`s), `with tf.variable_scope/name_scope/
Graph().as_default/Session()` blocks flattened. Every name bound by the block has a `Kind`; graph
statements are later sliced backwards from the fetches of each `sess.run` site.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import libcst as cst


class Kind(Enum):
    PLACEHOLDER = "placeholder"
    VARIABLE = "variable"          # a tf.Variable (kept, created once)
    VARIABLE_DICT = "variables"    # a dict literal of tf.Variables (kept)
    TENSOR = "tensor"              # a graph tensor (its statement moves into the step functions)
    OPTIMIZER = "optimizer"        # kept, converted to a Keras optimizer
    SCHEDULE = "schedule"          # kept, converted to a Keras learning-rate schedule
    INITIALIZER = "initializer"    # kept, converted to a Keras initializer
    TRAIN_OP = "train op"          # becomes a GradientTape step
    INIT_OP = "init op"            # disappears
    UPDATE_OPS = "update ops"      # the UPDATE_OPS collection: Keras layers update themselves
    SESSION = "session"            # disappears
    SAVER = "saver"                # becomes a tf.train.Checkpoint (transforms/graph/outputs/checkpoints.py)
    DATASET = "tf.data dataset"    # kept as it is (transforms/graph/inputs/datasets.py)
    ITERATOR = "iterator"          # a one-shot iterator: kept as iter(dataset), read in step functions
    SUMMARY = "summary op"         # a v1 summary op: its value joins the merge that collects it
    SUMMARY_WRITER = "summary writer"  # a FileWriter: becomes tf.summary.create_file_writer
    QUEUE = "input queue"          # queue-runner pipeline parts and threads: they vanish (transforms/graph/inputs/queues.py)
    EXAMPLE = "per-example input"  # values computed per record: they move into the dataset's map function
    RNN_CELL = "RNN cell"          # becomes a Keras RNN layer where dynamic_rnn runs it (transforms/graph/rnn/cells.py)
    GRADIENTS = "gradients"        # a train op's gradients: their statements move into its step (training/gradients.py)
    PYTHON = "python"              # plain Python: left where it is

    @property
    def is_state(self) -> bool:
        return self in (Kind.VARIABLE, Kind.VARIABLE_DICT, Kind.OPTIMIZER, Kind.SCHEDULE, Kind.INITIALIZER,
                        Kind.ITERATOR)

    @property
    def is_graph(self) -> bool:
        """Names that vanish from the block: only step functions and run sites may read them."""
        return self in (Kind.PLACEHOLDER, Kind.TENSOR, Kind.TRAIN_OP, Kind.INIT_OP, Kind.SESSION, Kind.UPDATE_OPS,
                        Kind.GRADIENTS)


@dataclass
class Scopes:
    """The TF1 scopes a statement sits in (they prefix variable and layer names)."""

    variable: tuple[str, ...] = ()
    name: tuple[str, ...] = ()
    initializer: cst.BaseExpression | None = None
    update_ops: bool = False  # inside `with tf.control_dependencies(<UPDATE_OPS collection>)`
    reuse: bool = False  # after `scope.reuse_variables()`: tf.get_variable hands back existing variables

    def prefix(self, for_variable_scope: bool) -> str:
        parts = self.variable if for_variable_scope else self.name
        return "".join(part + "/" for part in parts)


@dataclass
class Item:
    """One statement of the graph block, with what becomes of it."""

    node: cst.BaseStatement
    index: int
    scopes: Scopes
    leading: list[cst.EmptyLine] = field(default_factory=list)  # comments of flattened `with` lines
    kind: Kind = Kind.PYTHON
    defines: tuple[str, ...] = ()
    reads: frozenset[str] = frozenset()          # block names (graph and state) it reads
    python_reads: frozenset[str] = frozenset()   # other names it reads (captured when traced)
    emit: list[cst.BaseStatement] = field(default_factory=list)  # what stays in the block here
    body: cst.BaseStatement | None = None        # what goes into step functions (graph statements)
    layers: list[str] = field(default_factory=list)  # layer objects its body calls
    renames: dict[str, str] = field(default_factory=dict)  # state names it reads that were rebound later

    @property
    def keeps_original(self) -> bool:
        return self.kind is Kind.PYTHON


@dataclass
class Placeholder:
    name: str
    dtype: str
    shape: str
    default: cst.BaseExpression | None
    node: cst.CSTNode


@dataclass
class GradientCode:
    """How a train op built from compute_gradients / tf.gradients and apply_gradients gets its update:
    the statements between the two, run after `tape.gradient`, the gradients call in them standing
    for the tape's gradients (as (gradient, variable) pairs for compute_gradients)."""

    call: cst.Call
    pairs: bool
    statements: list[cst.BaseStatement]
    applied: cst.BaseExpression  # apply_gradients' argument


@dataclass
class TrainOp:
    name: str
    optimizer: str
    loss: cst.BaseExpression
    global_step: str | None
    var_list: cst.BaseExpression | None
    node: cst.CSTNode
    runs_update_ops: bool = False  # TF1 ran the batch-norm moving-average updates with each step
    learning_rate: cst.BaseExpression | None = None  # a rate fed through placeholders, set each step
    clip_norm: cst.BaseExpression | None = None  # each gradient clipped to this norm (slim's clip_gradient_norm)
    returns_loss: bool = False  # fetching it gives the loss, as slim's create_train_op
    check_numerics: bool = False  # that loss checked for inf / nan (slim's default)
    gradients: GradientCode | None = None  # compute_gradients / tf.gradients, then apply_gradients
    fed_gradients: cst.Call | None = None  # `zip(placeholders, variables)`: gradients fed, applied with no tape


@dataclass
class GraphBlock:
    """The analysed block: its items and what each bound name is."""

    statements: list[cst.BaseStatement]   # the block's own statements, as in the file
    scope_owner: cst.CSTNode              # the Module or FunctionDef the block belongs to
    items: list[Item]
    kinds: dict[str, Kind]
    definitions: dict[str, list[int]]    # graph name -> indices of the items that bind it
    placeholders: dict[str, Placeholder]
    train_ops: dict[str, TrainOp]
    variable_dicts: set[str] = field(default_factory=set)
    layer_objects: set[str] = field(default_factory=set)
    trainable_state: dict[str, bool] = field(default_factory=dict)  # variable name -> trainable
    global_steps: set[str] = field(default_factory=set)
    schedules: dict[str, str] = field(default_factory=dict)  # schedule name -> the global step it reads
    helpers: dict[str, cst.FunctionDef] = field(default_factory=dict)  # pure graph helper functions
    aliases: dict[str, str] = field(default_factory=dict)  # state name rebound -> the name it now has
    summaries: set[str] = field(default_factory=set)  # graph names holding {tag: value} dicts (summary ops)
    member_aliases: dict[int, str] = field(default_factory=dict)  # id of `state.h` / `outputs[-1]` -> its code
    graph_code_replacements: dict[int, Callable] = field(default_factory=dict)  # id -> f(updated node), in graph code
    assigns: dict[int, tuple[str, ...]] = field(default_factory=dict)  # item index of an assignment -> its variables

    def kind(self, name: str) -> Kind:
        return self.kinds.get(name, Kind.PYTHON)

    def last_definition(self, name: str) -> int:
        return self.definitions[name][-1]
