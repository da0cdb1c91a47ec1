"""Which step functions to write: one per distinct fetch, holding the backward slice of the graph from
its fetches to the placeholders it needs (graph pruning: placeholders fed but not needed are not
arguments, as TF1 ignored them) and the state it reads."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.graph.layers.keras_layers import NameAllocator
from transforms.graph.analysis.model import GraphBlock, Kind, TrainOp
from transforms.graph.sessions.runs import Fetch, RunSite
from transforms.common.syntax import Refusal, code, is_literal, load_names


@dataclass
class StepFunction:
    name: str
    sites: list[RunSite]
    items: list[int]                         # indices of the graph statements in its body
    args: list[str]                          # placeholders passed in (those with defaults last)
    constants: dict[str, str] = field(default_factory=dict)  # placeholder -> the literal always fed
    defaults: set[str] = field(default_factory=set)  # arguments with a default (placeholder_with_default)
    train_op: TrainOp | None = None
    state: list[str] = field(default_factory=list)  # state names the body reads, in creation order
    loss_slice: list[int] = field(default_factory=list)  # the train op and what its loss depends on
    tape_items: list[int] = field(default_factory=list)  # the graph statements among them
    insert_at: int = 0                       # the item before which the function is defined
    returns: Fetch | None = None             # what it returns: its sites' fetch, or that less the ops
    effects: set[str] = field(default_factory=set)  # fetched for their effect only: their values are not returned
    before_tape: list[int] = field(default_factory=list)  # graph statements of a train step made before its tape

    @property
    def returned(self) -> Fetch:
        return self.returns or self.sites[0].fetch


class Planner:
    def __init__(self, block: GraphBlock, helper_state: dict[int, set[str]], flags: set[str],
                 names: NameAllocator) -> None:
        self.block = block
        self.helper_state = helper_state  # item index -> state read inside the helpers it calls
        self.flags = flags                # placeholders used as Python flags (Keras `training=`)
        self.names = names

    def plan(self, sites: list[RunSite]) -> list[StepFunction]:
        groups: dict[str, list[RunSite]] = {}
        for site in sites:
            groups.setdefault(site.fetch_code, []).append(site)
        functions = [self._function(group) for group in groups.values()]
        train_functions = [f for f in functions if f.train_op]
        for function in train_functions:
            self.names.release(function.train_op.name)  # the train op's name goes with it
        for function in functions:
            function.name = self.names.fresh(_name(function, len(train_functions) == 1))
        return functions

    def _function(self, sites: list[RunSite]) -> StepFunction:
        first = sites[0]
        if len(first.train_ops) > 1:
            raise Refusal(first.call, "one run with several train ops is not modelled")
        train_op = self.block.train_ops[first.train_ops[0]] if first.train_ops else None
        roots = set(first.reads)
        chosen = self._slice(roots | ({train_op.name} if train_op else set()))
        function = StepFunction("", sites, self._graph_statements(chosen), [], train_op=train_op)
        if train_op:
            function.loss_slice = self._slice({train_op.name})
            function.tape_items = self._graph_statements(function.loss_slice)
        self._placeholders(function, chosen, roots)
        function.state = self._state(chosen, roots)
        function.insert_at = max([*chosen, *self._state_items(function.state), -1]) + 1
        return function

    def _graph_statements(self, indices: list[int]) -> list[int]:
        """The statements of a function body (a train op becomes the tape step instead)."""
        return [i for i in indices if self.block.items[i].kind is not Kind.TRAIN_OP]

    def _reaching(self, name: str, before: int | None) -> int | None:
        indices = [i for i in self.block.definitions.get(name, []) if before is None or i < before]
        return indices[-1] if indices else None

    def _slice(self, roots: set[str]) -> list[int]:
        return self._walk_back([(name, None) for name in roots])

    def upstream(self, index: int) -> set[int]:
        """The graph statements statement `index` reads through (its backward slice, itself excluded)."""
        return set(self._walk_back([(name, index) for name in self.block.items[index].reads]))

    def reads_of(self, index: int) -> set[str]:
        """The block names a statement reads, directly or inside the helpers it calls."""
        return set(self.block.items[index].reads) | self.helper_state.get(index, set())

    def _walk_back(self, pending: list[tuple[str, int | None]]) -> list[int]:
        chosen: set[int] = set()
        while pending:
            name, before = pending.pop()
            if self.block.kind(name) not in (Kind.TENSOR, Kind.TRAIN_OP, Kind.PLACEHOLDER):
                continue
            index = self._reaching(name, before)
            if index is None or index in chosen or self.block.kind(name) is Kind.PLACEHOLDER:
                continue
            chosen.add(index)
            pending += [(read, index) for read in self.block.items[index].reads]
        return sorted(chosen)

    def _needed_placeholders(self, items: list[int], roots: set[str]) -> set[str]:
        reads = set(roots).union(*(self.block.items[i].reads for i in items))
        return {name for name in reads if self.block.kind(name) is Kind.PLACEHOLDER}

    def _placeholders(self, function: StepFunction, chosen: list[int], roots: set[str]) -> None:
        order = list(self.block.placeholders)
        needed = sorted(self._needed_placeholders(chosen, roots), key=order.index)
        required, defaulted = [], []
        for name in needed:
            placeholder = self.block.placeholders[name]
            default = code(placeholder.default) if placeholder.default is not None else None
            fed = []
            for site in function.sites:
                value = site.feed_values.get(name)
                if value is None and default is None:
                    raise Refusal(site.call, f"placeholder '{name}' is needed here but not fed")
                fed.append((code(value), is_literal(value)) if value is not None else (default, name in self.flags))
            if all(literal for _, literal in fed) and len({text for text, _ in fed}) == 1:
                function.constants[name] = fed[0][0]  # always the same literal: a Python value
            elif name in self.flags:
                raise Refusal(function.sites[0].call, f"'{name}' decides Keras `training` but is fed varying values")
            else:
                (defaulted if default is not None else required).append(name)
        function.args, function.defaults = required + defaulted, set(defaulted)

    def _state(self, items: list[int], roots: set[str]) -> list[str]:
        """State the statements read (directly or through helpers), in creation order."""
        reads = set(roots).union(*(self.block.items[i].reads for i in items))
        reads = reads.union(*(self.helper_state.get(i, set()) for i in items))
        created = []
        for item in self.block.items:
            names = list(item.defines) if item.kind.is_state else []
            layers = [name for name in item.layers if name in self.block.layer_objects]
            created += [name for name in names + layers if name in reads and name not in created]
        return created

    def trainable(self, function: StepFunction) -> list[str]:
        """What the train op differentiates: trainable variables, variable dicts and layers of its loss.
        Not its global step, even a trainable one (`batch = tf.Variable(0.0)`), unless the loss reads it:
        TF1 found no gradient for it."""
        state = self._state(function.loss_slice, set())
        step = function.train_op.global_step if function.train_op else None
        if step is not None and step in self._state(self._slice({n.value for n in load_names(function.train_op.loss)}), set()):
            step = None
        return [name for name in state if name != step and (self.block.trainable_state.get(name)
                or name in self.block.variable_dicts or name in self.block.layer_objects)]

    def _state_items(self, state: list[str]) -> list[int]:
        return [item.index for item in self.block.items
                if set(item.defines) & set(state) or set(item.layers) & set(state)]


def _name(function: StepFunction, single_trainer: bool) -> str:
    if function.train_op:
        if single_trainer:
            return "train_step"
        return function.train_op.name.removesuffix("_op") + "_step"
    words = [_word(leaf.node) for leaf in function.sites[0].fetch.leaves() if leaf.shape in ("tensor", "tensors")]
    words = [w for w in words if w] or ["values"]
    if len(words) <= 2:
        return "compute_" + "_and_".join(words)
    return "compute_" + "_".join(words[:3]) + ("_etc" if len(words) > 3 else "")


def _word(node: cst.BaseExpression) -> str:
    while isinstance(node, (cst.Subscript, cst.Call, cst.Attribute)):
        node = node.func if isinstance(node, cst.Call) else node.attr if isinstance(node, cst.Attribute) else node.value
    return node.value if isinstance(node, cst.Name) else ""
