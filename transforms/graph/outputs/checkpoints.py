"""tf.train.Saver -> tf.train.Checkpoint, for sessions_to_functions (TFM201).

`saver = tf.train.Saver(var_list, max_to_keep)` saved what existed when it was created: the
variables (all global ones, or `var_list`), the global step and the slots of optimizers whose
minimize() came before. It becomes, in the same place, a `tf.train.Checkpoint` of those objects
(the Keras optimizer for TF1's slots), a `tf.train.CheckpointManager` when the program saves with
a global step, and the map from TF1 variable names to variables when it restores.

- `saver.save(sess, os.path.join(dir, "model.ckpt"), global_step=step)` ->
  `checkpoint_manager.save(checkpoint_number=step)`: the same `dir/model.ckpt-<step>` files, the
  same `checkpoint` state file (so `tf.train.latest_checkpoint(dir)` works unchanged), the same
  return value, `max_to_keep` kept. The directory must be known where the Saver was created.
- `saver.save(sess, path)` -> `checkpoint.write(path)` (refused when the program looks for the latest
  checkpoint: `write` does not record it).
- `saver.restore(sess, path)` -> `restore_checkpoint(checkpoint, path, tf1_names, ...)`, a function
  written into the migrated file (transforms/graph/outputs/checkpoint_code.py) that reads both the checkpoints this
  program writes and those its TF1 version wrote, so trained weights stay usable.

TF1 optimizer slots (Adam's `w/Adam`, `beta1_power`, ...) in TF1 checkpoints are recognised by name
(transforms/data/checkpoints.json) and not restored: the Keras optimizer keeps its own state. Every
other name missing on either side is an error. Savers other than this shape are refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import table
from transforms.graph.analysis.model import Item, Kind
from transforms.common.syntax import Refusal, bind_arguments, code, string_value, walk

_SAVER_SIGNATURE = ["var_list", "reshape", "sharded", "max_to_keep", "keep_checkpoint_every_n_hours", "name",
                    "restore_sequentially", "saver_def", "builder", "defer_build", "allow_empty", "write_version",
                    "pad_step_number", "save_relative_paths", "filename"]
_SAVE_SIGNATURE = ["sess", "save_path", "global_step", "latest_filename", "meta_graph_suffix", "write_meta_graph",
                   "write_state", "strip_default_attrs", "save_debug_info"]
_RESTORE_SIGNATURE = ["sess", "save_path"]
_LATEST = ("tf.train.latest_checkpoint", "tf.train.get_checkpoint_state")


@dataclass
class Saver:
    name: str
    call: cst.Call
    item: Item
    max_to_keep: cst.BaseExpression | None
    objects: dict[str, str] = field(default_factory=dict)    # checkpoint attribute -> Python expression
    tf1_names: dict[str, str] = field(default_factory=dict)  # TF1 variable name -> Python expression
    slots: list[str] = field(default_factory=list)           # TF1 optimizer slot suffixes
    optimizer_variables: list[str] = field(default_factory=list)


@dataclass
class CheckpointCall:
    call: cst.Call
    method: str                              # "save" / "restore"
    path: cst.BaseExpression
    step: cst.BaseExpression | None = None


class Checkpoints:
    """The program's Saver and its save / restore calls, as the scan meets them."""

    def __init__(self, scanner) -> None:
        self.scanner = scanner
        self.saver: Saver | None = None
        self.calls: list[CheckpointCall] = []

    # -- the Saver ---------------------------------------------------------------------------------

    def read_saver(self, item: Item, name: str, call: cst.Call) -> None:
        if self.saver is not None:
            raise Refusal(call, "more than one tf.train.Saver")
        bound = bind_arguments(call, _SAVER_SIGNATURE, "tf.train.Saver")
        for parameter, value in bound.items():
            if parameter not in ("var_list", "max_to_keep"):
                raise Refusal(value, f"tf.train.Saver({parameter}=...) is not modelled")
        max_to_keep = bound.get("max_to_keep")
        if isinstance(max_to_keep, cst.Integer) and max_to_keep.evaluated_value == 0:
            raise Refusal(max_to_keep, "tf.train.Saver(max_to_keep=0) is not modelled")
        item.kind = Kind.SAVER
        self.saver = Saver(name, call, item, max_to_keep)
        earlier = self.scanner.flattener.items[:item.index]
        var_list = bound.get("var_list")
        if var_list is None or self._lists_all_variables(var_list):
            self._all_state(earlier)
        else:
            self._listed(var_list, earlier)

    def _lists_all_variables(self, var_list: cst.BaseExpression) -> bool:
        """`tf.global_variables()` (or its old name tf.all_variables()) with no scope: what Saver()
        saves, in a program with no other saveable objects (none that TFM201 converts has one)."""
        return (isinstance(var_list, cst.Call) and not var_list.args
                and self.scanner.analyzer.category(var_list.func)[0] in ("tf.global_variables", "tf.all_variables"))

    def _all_state(self, items: list[Item]) -> None:
        """Saver(): every variable created so far, and the optimizers of the train ops built so far."""
        saver = self.saver
        for item in items:
            if item.layers and set(item.layers) & self.scanner.block.layer_objects:
                raise Refusal(saver.call, "tf.train.Saver with tf.layers / Keras layer variables is not "
                                          "mapped to TF1 checkpoint names yet")
            if item.kind is Kind.VARIABLE:
                name = item.defines[0]
                saver.objects[name] = name
                saver.tf1_names[self._tf1_name(item.emit[0], name)] = name
            elif item.kind is Kind.VARIABLE_DICT:
                name = item.defines[0]
                saver.objects[name] = name
                for key, value in _dict_values(item.emit[0]):
                    saver.tf1_names[self._tf1_name(value, name)] = f"{name}[{key}]"
            elif item.kind is Kind.TRAIN_OP:
                self._optimizer(self.scanner.block.train_ops[item.defines[0]], items)
        if self.scanner.module_helpers:
            raise Refusal(saver.call, "tf.train.Saver with variables created in tf.Module classes is not "
                                      "mapped to TF1 checkpoint names yet")

    def _listed(self, var_list: cst.BaseExpression, items: list[Item]) -> None:
        """Saver([w, b]) saves those under their TF1 names, Saver({"name": w}) under the given names."""
        variables = {item.defines[0]: item for item in items if item.kind is Kind.VARIABLE}
        aliases = self.scanner.block.aliases
        if isinstance(var_list, (cst.List, cst.Tuple)):
            pairs = [(None, element.value) for element in var_list.elements]
        elif isinstance(var_list, cst.Dict):
            pairs = [(string_value(element.key), element.value) for element in var_list.elements]
            if any(key is None for key, _ in pairs):
                raise Refusal(var_list, "tf.train.Saver(var_list={...}) needs string literal keys")
        else:
            raise Refusal(var_list, "tf.train.Saver(var_list=...) must be a list or dict literal of variables")
        for key, value in pairs:
            if not isinstance(value, cst.Name) or value.value in aliases or value.value not in variables:
                raise Refusal(value, f"tf.train.Saver saves '{code(value)}', which is not one variable of "
                                     "this program")
            item = variables[value.value]
            self.saver.objects[value.value] = value.value
            self.saver.tf1_names[key or self._tf1_name(item.emit[0], value.value)] = value.value

    def _tf1_name(self, node: cst.CSTNode, variable: str) -> str:
        """The name a converted variable had in the TF1 graph: its `tf.Variable(..., name=...)`."""
        call = node.body[0].value if isinstance(node, cst.SimpleStatementLine) else node
        name = None
        if isinstance(call, cst.Call) and code(call.func) == "tf.Variable":
            name = next((string_value(a.value) for a in call.args if a.keyword and a.keyword.value == "name"), None)
        if name is None:
            raise Refusal(self.saver.call, f"tf.train.Saver: the TF1 checkpoint name of '{variable}' is not known "
                                           "statically (give the variable a name=)")
        if name in self.saver.tf1_names:
            raise Refusal(self.saver.call, f"tf.train.Saver: two variables are named '{name}'")
        return name

    def _optimizer(self, train_op, items: list[Item]) -> None:
        """The optimizer of `train_op`, built by a call or bound by one of `items` (those before the saver)."""
        receiver = train_op.node.func.value
        if isinstance(receiver, cst.Name):
            definition = next(item for item in items
                              if item.kind is Kind.OPTIMIZER and train_op.optimizer in item.defines)
            receiver = definition.node.body[0].value
        tf_name = self.scanner.analyzer.category(receiver.func)[0]
        state = table("checkpoints")["optimizer_state"].get(tf_name)
        if state is None:
            raise Refusal(self.saver.call, f"tf.train.Saver: the TF1 checkpoint names of {tf_name}'s slots are "
                                           "not known")
        if any(arg.keyword and arg.keyword.value == "name" for arg in receiver.args):
            raise Refusal(receiver, "tf.train.Saver: an optimizer name= changes its TF1 slot names")
        self.saver.objects[train_op.optimizer] = train_op.optimizer
        self.saver.slots += [s for s in state["slots"] if s not in self.saver.slots]
        self.saver.optimizer_variables += [v for v in state["variables"] if v not in self.saver.optimizer_variables]

    # -- save() / restore() ------------------------------------------------------------------------

    def is_call(self, node: cst.Call) -> bool:
        func = node.func
        return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and self.scanner.kinds.get(func.value.value) is Kind.SAVER
                and self.scanner.resolver.is_block_reference(func.value))

    def read_call(self, node: cst.Call, visit) -> None:
        """`saver.save(sess, ...)` / `saver.restore(sess, ...)`; `visit(expression)` reads the other
        arguments (session runs in them still become step functions) and returns the facts."""
        method = node.func.attr.value
        if method not in ("save", "restore"):
            raise Refusal(node, f"Saver.{method} is not modelled")
        signature = _SAVE_SIGNATURE if method == "save" else _RESTORE_SIGNATURE
        bound = bind_arguments(node, signature, f"Saver.{method}")
        if "sess" not in bound or not self.scanner.analyzer.is_session(bound["sess"]):
            raise Refusal(node, f"Saver.{method} with a session that is not this program's")
        if "save_path" not in bound:
            raise Refusal(node, f"Saver.{method} without a path")
        for parameter, value in bound.items():
            if parameter not in ("sess", "save_path", "global_step"):
                raise Refusal(value, f"Saver.{method}({parameter}=...) is not modelled")
            if parameter != "sess":
                facts = visit(value)
                kinds = {self.scanner.kinds[n] for n in facts.reads}
                if facts.builds_ops or kinds - {Kind.VARIABLE}:
                    raise Refusal(value, f"Saver.{method} {parameter} computed from graph values")
        step = bound.get("global_step")
        if isinstance(step, cst.Name) and step.value == "None":
            step = None
        if not any(known.call is node for known in self.calls):  # statements are read more than once
            self.calls.append(CheckpointCall(node, method, bound["save_path"], step))

    def session_arguments(self) -> set[int]:
        return {id(call.call.args[0].value) for call in self.calls}


def _dict_values(line: cst.SimpleStatementLine):
    value = line.body[0].value
    for element in value.elements:
        yield code(element.key), element.value


def finds_latest(program) -> bool:
    """Whether the program asks TF for the latest checkpoint of a directory."""
    return any(isinstance(node, cst.Call) and program.tf_name(node.func) in _LATEST for node in walk(program.module))

