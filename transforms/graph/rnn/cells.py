"""TF1 RNN cells run by `tf.nn.dynamic_rnn` -> Keras recurrent layers.

    cell = tf.nn.rnn_cell.LSTMCell(64)                  lstm = tf.keras.layers.LSTM(64, return_sequences=True,
    outputs, state = tf.nn.dynamic_rnn(                                              return_state=True, name="rnn")
        cell, inputs, dtype=tf.float32)                 ...
    last = state.h                                      outputs, state_h, state_c = lstm(inputs)   # in the step
                                                        last = state_h

LSTMCell / BasicLSTMCell -> LSTM, GRUCell -> GRU(reset_after=False) (TF1's GRU applies the reset gate
before the recurrent matmul), BasicRNNCell -> SimpleRNN; the layer is built once, named like TF1's
scope (`rnn`, `rnn_1`, or dynamic_rnn's `scope=`) and called where dynamic_rnn ran. An LSTM's state
`(c, h)` is read as `state.c` / `state.h` / `state[0]` / `state[1]`: each read becomes the Keras
output it is. The weights are laid out differently (TF1 packs input and recurrent kernels in one
matrix, gates i, j, f, o, and adds forget_bias at run time; Keras has two matrices, gates i, f, c, o,
and the forget bias in the bias): migrate/harness/rnn_weights.py converts legacy weights for the
harness. A run over a short sequence of fixed length (a placeholder `[None, T, ...]` with T an integer
literal or a module constant of at most MAX_UNROLLED_STEPS, batches of NumPy sequences of such a
length read from a dataset (`rnn/sequence_steps.py`), or the outputs of such a run) gets
`unroll=True`: the same cell computation per step, without Keras's generic while loop, whose per-step
cost (TensorArrays, the v2 While op and its gradient's accumulators) made the migrated LSTM step about
twice as slow as TF1's dynamic_rnn on CPU. The sequence_length of dynamic_rnn and
bidirectional_dynamic_rnn becomes the layer's mask (`tf.sequence_mask`), with zero_output_for_mask:
the state of each sequence's last step, zeros after it. A DropoutWrapper's input / output keep
probabilities become tf.nn.dropout on the layer's input / output sequence (one mask per sequence
where TF1 drew one per step: a finding says so). A MultiRNNCell becomes one layer per cell, each run
over the previous one's outputs (rnn/stacks.py). An initial_state that is the cell's
`zero_state(...)` goes: Keras starts from zeros too. Refused: peepholes, projections, clipping,
forget_bias other than 1.0, custom initializers, sequence_length in a stacked static_rnn, any other
initial_state, time_major, state dropout, a cell run twice, state read any other way.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import libcst as cst

from transforms.common.graph_symbols import rnn_cell_kind
from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.analysis.model import Item, Kind
from transforms.graph.rnn.sequence_steps import bound_value, dataset_time_steps, module_integer
from transforms.graph.rnn.stacks import StackLayer, parse_stack
from transforms.graph.rnn.stacks import layer_name as stack_layer_name
from transforms.common.syntax import Refusal, bind_arguments, code, statement, string_value

_CELL_SIGNATURES = {
    "tf.nn.rnn_cell.LSTMCell": ["num_units", "use_peepholes", "cell_clip", "initializer", "num_proj", "proj_clip",
                                "num_unit_shards", "num_proj_shards", "forget_bias", "state_is_tuple",
                                "activation", "reuse", "name", "dtype"],
    "tf.nn.rnn_cell.BasicLSTMCell": ["num_units", "forget_bias", "state_is_tuple", "activation", "reuse", "name",
                                     "dtype"],
    "tf.nn.rnn_cell.GRUCell": ["num_units", "activation", "reuse", "kernel_initializer", "bias_initializer", "name",
                               "dtype"],
    "tf.nn.rnn_cell.BasicRNNCell": ["num_units", "activation", "reuse", "name", "dtype"],
}
_HARMLESS = {"num_units", "activation", "dtype", "forget_bias", "state_is_tuple", "use_peepholes"}
_KERAS = {"lstm": "LSTM", "gru": "GRU", "simple": "SimpleRNN"}
_CELL_KINDS = {*_CELL_SIGNATURES, *(name.replace("tf.nn.rnn_cell.", "tf.contrib.rnn.") for name in _CELL_SIGNATURES)}
_DYNAMIC_RNN = ["cell", "inputs", "sequence_length", "initial_state", "dtype", "parallel_iterations",
                "swap_memory", "time_major", "scope"]
_BIDIRECTIONAL_RNN = ["cell_fw", "cell_bw", "inputs", "sequence_length", "initial_state_fw", "initial_state_bw",
                      "dtype", "parallel_iterations", "swap_memory", "time_major", "scope"]
_STATIC_RNN = ["cell", "inputs", "initial_state", "dtype", "sequence_length", "scope"]
_DROPOUT_WRAPPER = ["cell", "input_keep_prob", "output_keep_prob", "state_keep_prob", "variational_recurrent",
                    "input_size", "dtype", "seed", "dropout_state_filter_visitor"]
_LSTM_STATE = {"c": 0, "h": 1}  # LSTMStateTuple(c, h)
DROPOUT_NOTE = ("DropoutWrapper -> tf.nn.dropout on the RNN layer's whole input / output sequence: each element "
                "kept with the same probability, but drawn at once (TF1 drew a mask per step), so the random "
                "values differ from TF1's")
# Longest fixed sequence a converted run is unrolled over (unrolling builds one cell computation per
# step: worth it for the short sequences where the loop's per-step overhead dominates).
MAX_UNROLLED_STEPS = 32


@dataclass
class Cell:
    kind: str                    # lstm / gru / simple
    units: cst.BaseExpression
    activation: cst.BaseExpression | None
    node: cst.Call
    used: bool = False
    #: DropoutWrapper's keep probabilities that drop something (None: keeps everything).
    input_keep: cst.BaseExpression | None = None
    output_keep: cst.BaseExpression | None = None
    wrapper: cst.Call | None = None  # the DropoutWrapper call
    layers: list[Cell] | None = None  # a MultiRNNCell's cells (kind "stack"; see rnn/stacks.py)


class RnnConverter:
    def __init__(self, scanner) -> None:
        self.scanner = scanner
        self.cells: dict[str, Cell] = {}
        self.cell_lists: dict[str, cst.BaseExpression] = {}  # names bound to a MultiRNNCell's list of cells
        self.scope_counts = {"rnn": 0, "bidirectional_rnn": 0}
        self.sequence_steps: dict[str, int] = {}  # outputs of block runs -> their fixed number of steps
        self.zero_states: dict[str, str] = {}  # names bound to `<cell>.zero_state(...)` -> the cell
        self._placeholders: dict = {}
        #: (DropoutWrapper call, what its conversion computes otherwise): findings for a converted file.
        self.notes: list[tuple[cst.Call, str]] = []

    def run(self, item: Item, target: cst.BaseExpression, call: cst.Call, tf_name: str) -> None:
        """A run in the graph block: its statement becomes the Keras layer's call."""
        conversion = self.convert_run(target, call, tf_name, self.cells, self._block_references,
                                      self.scanner.block.member_aliases, self.scanner.block.placeholders)
        item.body = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(conversion.target())], call)])
        self.scanner.graph_statement(item, conversion.defined, call, extra_uses=[conversion.use])
        for layer in conversion.stack_layers:
            follow = self._follow(item, layer.line)
            self.scanner.graph_statement(follow, layer.defined, layer.read, extra_reads={layer.previous},
                                         extra_uses=[layer.use])
        for dropout in conversion.output_dropouts:
            self._output_dropout(item, dropout)
        for name, (forward, backward) in conversion.pairs:
            self._pair(item, name, forward, backward)

    def _pair(self, item: Item, name: str, forward: str, backward: str) -> None:
        """A statement after the run's: `name = (forward, backward)`, the pair TF1 bound to `name`."""
        line = statement(f"{name} = ({forward}, {backward})")
        pair = self._follow(item, line)
        self.scanner.graph_statement(pair, (name,), line.body[0].value, extra_reads={forward, backward})

    def _follow(self, item: Item, line: cst.SimpleStatementLine) -> Item:
        items = self.scanner.flattener.items
        follow = Item(line, len(items), item.scopes)
        items.append(follow)
        return follow

    def _output_dropout(self, item: Item, dropout: OutputDropout) -> None:
        """A statement after the run's: the outputs TF1 read from the DropoutWrapper, dropped."""
        line = dropout.statement()
        dropped = self._follow(item, line)
        self.scanner.graph_statement(dropped, (dropout.outputs,), dropout.keep, extra_reads={dropout.raw})

    def convert_run(self, target: cst.BaseExpression, call: cst.Call, tf_name: str, cells: dict,
                    references: Callable[[str], list], aliases: dict, placeholders: dict | None = None) -> RunConversion:
        """The Keras layer for a run of `cells`; reads of its results (found by `references`) that
        must change are written into `aliases` (node id -> code). `placeholders` (graph block runs
        only): the block's placeholders, whose shapes tell a fixed sequence length."""
        self._cells, self._references, self._aliases = cells, references, aliases
        self._placeholders = placeholders if placeholders is not None else {}
        self._in_block = placeholders is not None
        if tf_name == "tf.nn.bidirectional_dynamic_rnn":
            return self.bidirectional_dynamic_rnn(target, call)
        if tf_name.endswith(".static_rnn"):
            return self.static_rnn(target, call)
        return self.dynamic_rnn(target, call)

    def _block_references(self, name: str) -> list:
        return [access for assignment in self.scanner.resolver.block_assignments(name)
                for access in assignment.references]

    def static_rnn(self, target: cst.BaseExpression, call: cst.Call) -> RunConversion:
        """`outputs, state = tf.nn.static_rnn(cell, steps, dtype=...)` over a list of per-step tensors
        (e.g. `tf.unstack(x, axis=1)`) -> the layer over `tf.stack(steps, axis=1)`; each read
        `outputs[i]` becomes step i of the layer's output sequence."""
        bound = _run_arguments(call, _STATIC_RNN, "tf.nn.static_rnn", modelled=("initial_state", "sequence_length"))
        self._zero_initial_state(bound, "tf.nn.static_rnn")
        cell = self._cell(bound.get("cell"))
        lengths = bound.get("sequence_length")
        if cell.kind == "stack":
            if lengths is not None:
                raise Refusal(lengths, "static_rnn(sequence_length=...) of a MultiRNNCell is not modelled")
            return self._stacked_run(target, call, bound, cell, "tf.nn.static_rnn")
        if cell.input_keep is not None or cell.output_keep is not None:
            raise Refusal(call, "a DropoutWrapper cell run by static_rnn is not modelled")
        outputs, state = self._targets(target)
        layer = self._layer_name(bound.get("scope"), "rnn")
        object_name = self.scanner.names.fresh(_KERAS[cell.kind].lower())
        construction = self._construction(cell, layer, unroll=True, masked=lengths is not None)
        use = _StackedStepsUse(call, object_name, construction, [bound["inputs"]], {}, True, _KERAS[cell.kind],
                               lengths=lengths)
        sequence = self.scanner.names.fresh(f"{outputs}_sequence") if outputs != "_" else "_"
        if outputs != "_":
            self._rename_step_reads(outputs, sequence)
        results = [sequence, *self._state_names(cell, state)]
        return RunConversion(use, results, tuple(n for n in (outputs, state) if n != "_"))

    def _rename_step_reads(self, outputs: str, sequence: str) -> None:
        """`outputs[i]` -> step i of the layer's sequence; `tf.stack(outputs)` (time first) -> the sequence
        transposed, `tf.stack(outputs, axis=1)` -> the sequence itself."""
        for access in self._references(outputs):
            member = self.scanner.resolver.parent(access.node)
            index = _literal_index(member, access.node)
            if index is not None:
                self._aliases[id(member)] = f"{sequence}[:, {index}]"
                continue
            stacked = self._stacked_reads(member, access.node, sequence)
            if stacked is None:
                raise Refusal(access.node, f"static_rnn outputs '{outputs}' read other than as {outputs}[<int>] "
                                           f"or tf.stack({outputs}[, axis=0 or 1])")
            self._aliases[id(stacked[0])] = stacked[1]

    def _stacked_reads(self, member: cst.CSTNode, name: cst.Name, sequence: str) -> tuple[cst.Call, str] | None:
        call = self.scanner.resolver.parent(member) if isinstance(member, cst.Arg) else None
        if not (isinstance(call, cst.Call) and self.scanner.resolver.tf_name(call.func) == "tf.stack"
                and call.args[0] is member and member.keyword is None):
            return None
        axis = bind_arguments(call, ["values", "axis", "name"], "tf.stack").get("axis", cst.Integer("0"))
        if not isinstance(axis, cst.Integer) or axis.value not in ("0", "1"):
            return None
        return call, sequence if axis.value == "1" else f"tf.transpose({sequence}, [1, 0, 2])"

    def cell(self, item: Item, target: cst.BaseExpression, call: cst.Call, tf_name: str) -> None:
        """`cell = tf.nn.rnn_cell.LSTMCell(n)` (or a DropoutWrapper of such a cell): remembered until
        dynamic_rnn runs it."""
        self.cells[target.value] = parse_cell(target, call, tf_name, self.cells, self.scanner.resolver.tf_name,
                                              self._integer, self.cell_lists)
        item.kind, item.defines = Kind.RNN_CELL, (target.value,)
        self.scanner.kinds[target.value] = Kind.RNN_CELL

    def is_zero_state(self, value: cst.BaseExpression) -> bool:
        """`<cell>.zero_state(batch_size, dtype)` of a cell of the block."""
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "zero_state" and isinstance(value.func.value, cst.Name) \
            and value.func.value.value in self.cells

    def zero_state(self, item: Item, target: cst.BaseExpression, call: cst.Call) -> None:
        """`state = cell.zero_state(batch_size, tf.float32)`: remembered; a run given it as its initial
        state starts from zeros, as the Keras layer does by itself (see _zero_initial_state)."""
        bound = bind_arguments(call, ["batch_size", "dtype"], "zero_state")
        if not isinstance(target, cst.Name) or self.scanner.resolver.tf_name(bound.get("dtype")) != "tf.float32":
            raise Refusal(call, "a zero_state other than `name = cell.zero_state(batch_size, tf.float32)`")
        self.zero_states[target.value] = call.func.value.value
        item.kind, item.defines = Kind.RNN_CELL, (target.value,)
        self.scanner.kinds[target.value] = Kind.RNN_CELL

    def _zero_initial_state(self, bound: dict, tf_name: str) -> None:
        """A run's initial_state may be its cell's zero state, read nowhere else: Keras starts from zeros."""
        state = bound.pop("initial_state", None)
        if state is None:
            return
        cell = bound.get("cell")
        if not (isinstance(state, cst.Name) and isinstance(cell, cst.Name)
                and self.zero_states.get(state.value) == cell.value and len(self._references(state.value)) == 1):
            raise Refusal(state, f"{tf_name}(initial_state=...) other than its cell's zero state, read only there, "
                                 "is not modelled")

    def is_cell_list(self, value: cst.BaseExpression) -> bool:
        """`[<RNN cell>(...), ...]` or `[<RNN cell>(...) for _ in range(N)]`: a MultiRNNCell's cells."""
        calls = [e.value for e in value.elements] if isinstance(value, cst.List) else \
            [value.elt] if isinstance(value, cst.ListComp) else []
        return bool(calls) and all(isinstance(node, cst.Call) and rnn_cell_kind(self.scanner.resolver.tf_name(node.func))
                                   for node in calls)

    def cell_list(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`cells = [...]` (is_cell_list): read where a MultiRNNCell takes it."""
        if not isinstance(target, cst.Name):
            raise Refusal(target, "a list of RNN cells assigned to something other than a name")
        self.cell_lists[target.value] = value
        item.kind, item.defines = Kind.RNN_CELL, (target.value,)
        self.scanner.kinds[target.value] = Kind.RNN_CELL

    def _integer(self, node: cst.BaseExpression) -> int | None:
        if isinstance(node, cst.Integer):
            return int(node.value)
        return module_integer(self.scanner.resolver.module, node.value) if isinstance(node, cst.Name) else None

    def dynamic_rnn(self, target: cst.BaseExpression, call: cst.Call) -> RunConversion:
        """`outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=...)` -> the Keras layer's call."""
        bound = _run_arguments(call, _DYNAMIC_RNN, "tf.nn.dynamic_rnn", modelled=("sequence_length", "initial_state"))
        self._zero_initial_state(bound, "tf.nn.dynamic_rnn")
        cell = self._cell(bound.get("cell"))
        if cell.kind == "stack":
            return self._stacked_run(target, call, bound, cell, "tf.nn.dynamic_rnn")
        names = self._targets(target)
        layer = self._layer_name(bound.get("scope"), "rnn")
        object_name = self.scanner.names.fresh(_KERAS[cell.kind].lower())
        steps = self._fixed_steps(bound["inputs"])
        lengths = bound.get("sequence_length")
        construction = self._construction(cell, layer, unroll=steps is not None, masked=lengths is not None)
        use = self._run_use(call, object_name, construction, bound["inputs"], lengths, _KERAS[cell.kind],
                            "tf.nn.dynamic_rnn", cell.input_keep)
        outputs, state = names
        self._note_steps(steps, outputs)
        dropouts = self._output_dropouts((cell, outputs))
        layer_outputs = _layer_output(outputs, dropouts)
        results = [layer_outputs, *self._state_names(cell, state)]
        return RunConversion(use, results, tuple(n for n in (layer_outputs, state) if n != "_"), dropouts)

    def _stacked_run(self, target: cst.BaseExpression, call: cst.Call, bound: dict, stack: Cell,
                     tf_name: str) -> RunConversion:
        """A MultiRNNCell's run: its first layer's call in the run's statement, the others after it
        (transforms/graph/rnn/stacks.py)."""
        static = tf_name.endswith("static_rnn")
        layers, inputs, lengths = stack.layers, bound["inputs"], bound.get("sequence_length")
        if static and any(layer.input_keep is not None or layer.output_keep is not None for layer in layers):
            raise Refusal(call, "DropoutWrapper cells in a MultiRNNCell run by static_rnn are not modelled")
        outputs, state = self._targets(target)
        scope = self._layer_name(bound.get("scope"), "rnn")
        unroll = static or self._fixed_steps(inputs) is not None
        dropouts = self._output_dropouts((layers[-1], outputs))
        for layer in layers[:-1]:
            self._note_dropout(layer)
        last = self.scanner.names.fresh(f"{outputs}_sequence") if static and outputs != "_" else \
            _layer_output(outputs, dropouts)
        if static and outputs != "_":
            self._rename_step_reads(outputs, last)
        base = outputs if outputs != "_" else "rnn_outputs"
        sequences = [self.scanner.names.fresh(f"{base}_{k}") for k in range(len(layers) - 1)] + [last]
        states = self._stack_state_names(layers, state)
        names_at_end = tuple(n for n in ((outputs if static else last), state) if n != "_")
        uses, lines = [], []
        for k, layer in enumerate(layers):
            keras = _KERAS[layer.kind]
            object_name = self.scanner.names.fresh(keras.lower())
            construction = self._construction(layer, stack_layer_name(scope, k), unroll=unroll,
                                              masked=lengths is not None)
            if k == 0:
                use = _StackedStepsUse(call, object_name, construction, [inputs], {}, True, keras) if static else \
                    self._run_use(call, object_name, construction, inputs, lengths, keras, tf_name, layer.input_keep)
                uses.append(use)
                continue
            source = code(_dropped_if(_dropped_if(cst.Name(sequences[k - 1]), layers[k - 1].output_keep),
                                      layer.input_keep))
            use = LayerUse(call, object_name, construction, [cst.parse_expression(source)], {}, True, keras) \
                if lengths is None else _LengthsMaskUse(call, object_name, construction,
                                                        [cst.parse_expression(source)], {}, True, keras,
                                                        lengths=lengths, sequences=inputs)
            line = cst.parse_statement(f"{', '.join([sequences[k], *states[k]])} = {use.call_code()}")
            use.call = line.body[0].value  # the statement holds the layer's call, as it will read
            use.inputs = [use.call.args[0].value]
            read = cst.Tuple([cst.Element(node) for node in (layers[k - 1].output_keep, layer.input_keep, lengths)
                              if node is not None])
            defined = names_at_end if k == len(layers) - 1 else (sequences[k],)
            lines.append(StackLayer(line, use, defined, sequences[k - 1], read))
        first = names_at_end if len(layers) == 1 else (sequences[0],)
        return RunConversion(uses[0], [sequences[0], *states[0]], first, dropouts, stack_layers=lines)

    def _stack_state_names(self, layers: list[Cell], state: str) -> list[list[str]]:
        """Each layer's names for what its Keras layer returns after the outputs ([h, c] for an LSTM);
        reads `state[k]...` of TF1's tuple of states renamed to them."""
        if state == "_":
            return [["_", "_"] if layer.kind == "lstm" else ["_"] for layer in layers]
        names = self.scanner.names
        parts = [{"h": names.fresh(f"{state}_{k}_h"), "c": names.fresh(f"{state}_{k}_c")} if layer.kind == "lstm"
                 else {"h": names.fresh(f"{state}_{k}")} for k, layer in enumerate(layers)]
        parent = self.scanner.resolver.parent
        for access in self._references(state):
            member = parent(access.node)
            k = _literal_index(member, access.node)
            k = k + len(layers) if k is not None and k < 0 else k
            if k is None or not 0 <= k < len(layers):
                raise Refusal(access.node, f"MultiRNNCell state '{state}' read other than as {state}[<int>]")
            if layers[k].kind != "lstm":
                self._aliases[id(member)] = parts[k]["h"]
                continue
            outer = parent(member)
            part = _state_part(outer, member)
            if part is None:
                raise Refusal(member, f"LSTM state '{code(member)}' read other than as .c / .h / [0] / [1]")
            self._aliases[id(outer)] = parts[k][part]
        return [[p["h"], p["c"]] if layer.kind == "lstm" else [p["h"]] for p, layer in zip(parts, layers)]

    def _run_use(self, call: cst.Call, object_name: str, construction: str, inputs: cst.BaseExpression,
                 lengths: cst.BaseExpression | None, keras: str, tf_name: str,
                 input_keep: cst.BaseExpression | None = None) -> LayerUse:
        """The layer's call: on the inputs (dropped first, for a DropoutWrapper's input_keep_prob), with
        the mask of the sequence lengths when the run has them."""
        if lengths is not None and not isinstance(inputs, cst.Name):
            raise Refusal(inputs, f"{tf_name}(sequence_length=...) over inputs that are not a name")
        layer_inputs = inputs if input_keep is None else _dropped(inputs, input_keep)
        if lengths is None:
            return LayerUse(call, object_name, construction, [layer_inputs], {}, True, keras)
        return _LengthsMaskUse(call, object_name, construction, [layer_inputs], {}, True, keras, lengths=lengths,
                               sequences=inputs)

    def _output_dropouts(self, *runs: tuple[Cell, str]) -> list[OutputDropout]:
        """For each (cell, outputs name) whose cell drops its outputs: the name the layer binds instead.
        Each cell that drops anything gets its finding (DROPOUT_NOTE)."""
        for cell, _ in runs:
            self._note_dropout(cell)
        return [OutputDropout(outputs, self.scanner.names.fresh(f"{outputs}_undropped"), cell.output_keep)
                for cell, outputs in runs if cell.output_keep is not None and outputs != "_"]

    def _note_dropout(self, cell: Cell) -> None:
        """DROPOUT_NOTE for a cell that drops something, once per DropoutWrapper call (a comprehension
        makes several cells of one)."""
        note = (cell.wrapper, DROPOUT_NOTE)
        if (cell.input_keep is not None or cell.output_keep is not None) and note not in self.notes:
            self.notes.append(note)

    def bidirectional_dynamic_rnn(self, target: cst.BaseExpression, call: cst.Call) -> RunConversion:
        """`(out_fw, out_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(cell_fw, cell_bw, x, ...)`
        -> `Bidirectional(<fw layer>, backward_layer=<bw layer, go_backwards>, merge_mode=None)`, whose
        backward outputs come back in input time order, as TF1's do."""
        bound = _run_arguments(call, _BIDIRECTIONAL_RNN, "tf.nn.bidirectional_dynamic_rnn", modelled=("sequence_length",))
        forward, backward = self._cell(bound.get("cell_fw")), self._cell(bound.get("cell_bw"))
        if forward.kind != backward.kind:
            raise Refusal(call, "forward and backward cells of different kinds are not modelled")
        if forward.input_keep is not None or backward.input_keep is not None:
            raise Refusal(call, "DropoutWrapper(input_keep_prob=...) in a bidirectional run (each direction drops "
                                "its own inputs) is not modelled")
        pairs: list[tuple[str, tuple[str, str]]] = []
        (out_fw, out_bw), (state_fw, state_bw) = (self._direction_targets(part, pairs)
                                                  for part in self._targets_nodes(target))
        if forward.kind == "lstm" and any(pair[1] == (state_fw, state_bw) for pair in pairs):
            raise Refusal(target, "LSTM states of a bidirectional run read as one pair are not modelled")
        layer = self._layer_name(bound.get("scope"), "bidirectional_rnn")
        object_name = self.scanner.names.fresh("bidirectional")
        steps = self._fixed_steps(bound["inputs"])
        lengths = bound.get("sequence_length")
        masked = lengths is not None
        # Not unrolled when masked: Bidirectional makes its backward layer zero the outputs of masked
        # steps, and Keras's unrolled loop then zeroes the backward outputs at unreversed positions.
        unroll = steps is not None and not masked
        construction = (f"tf.keras.layers.Bidirectional("
                        f"{self._construction(forward, 'fw', unroll=unroll, masked=masked)}, backward_layer="
                        f"{self._construction(backward, 'bw', go_backwards=True, unroll=unroll, masked=masked)}, "
                        f"merge_mode=None, name={layer!r})")
        self._note_steps(steps, out_fw, out_bw)
        use = self._run_use(call, object_name, construction, bound["inputs"], lengths, "Bidirectional",
                            "tf.nn.bidirectional_dynamic_rnn")
        dropouts = self._output_dropouts((forward, out_fw), (backward, out_bw))
        layer_outputs = _layer_output(out_fw, dropouts), _layer_output(out_bw, dropouts)
        results = [*layer_outputs, *self._state_names(forward, state_fw), *self._state_names(backward, state_bw)]
        defined = tuple(n for n in (*layer_outputs, state_fw, state_bw) if n != "_")
        return RunConversion(use, results, defined, dropouts, pairs)

    def _direction_targets(self, target: cst.BaseExpression, pairs: list) -> tuple[str, str]:
        """(forward, backward) names for one half of a bidirectional run's result: `(fw, bw)` as
        written, or fresh ones for a pair bound to one name (bound to the pair after the run)."""
        if isinstance(target, cst.Name) and target.value == "_":
            return "_", "_"
        if not isinstance(target, cst.Name):
            return self._targets(target)
        names = self.scanner.names
        directions = names.fresh(f"{target.value}_fw"), names.fresh(f"{target.value}_bw")
        pairs.append((target.value, directions))
        return directions

    def _fixed_steps(self, inputs: cst.BaseExpression) -> int | None:
        """The fixed, short number of steps of a block run's inputs: a placeholder bound once, shaped
        `[batch, T, ...]` with T an integer literal or a module constant, or the outputs of such a run."""
        if not (self._in_block and isinstance(inputs, cst.Name)):
            return None
        if len(self.scanner.resolver.block_assignments(inputs.value)) != 1:
            return None
        steps = self.sequence_steps.get(inputs.value)
        placeholder = self._placeholders.get(inputs.value)
        if steps is None and placeholder is not None:
            steps = _time_dimension(placeholder.shape, self.scanner.resolver.module)
        elif steps is None:
            steps = (dataset_time_steps(inputs.value, self.scanner.resolver, self.scanner.resolver.module)
                     or self._embedded_steps(inputs.value))
        return steps if steps is not None and 0 < steps <= MAX_UNROLLED_STEPS else None

    def _embedded_steps(self, name: str) -> int | None:
        """T of `name = tf.nn.embedding_lookup(<table>, ids)` with ids a placeholder `[batch, T]`: the
        embedded sequences have the ids' steps."""
        resolver = self.scanner.resolver
        value = bound_value(name, resolver)
        if not (isinstance(value, cst.Call) and resolver.tf_name(value.func) == "tf.nn.embedding_lookup"):
            return None
        ids = bind_arguments(value, ["params", "ids"], "tf.nn.embedding_lookup").get("ids")
        placeholder = self._placeholders.get(ids.value) if isinstance(ids, cst.Name) else None
        if placeholder is None or len(resolver.block_assignments(ids.value)) != 1:
            return None
        return _time_dimension(placeholder.shape, resolver.module, rank=2)

    def _note_steps(self, steps: int | None, *outputs: str) -> None:
        if self._in_block and steps is not None:
            self.sequence_steps.update({name: steps for name in outputs if name != "_"})

    def _targets_nodes(self, target: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression]:
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
            return target.elements[0].value, target.elements[1].value
        raise Refusal(target, "bidirectional_dynamic_rnn's result must be unpacked into "
                              "`(outputs_fw, outputs_bw), (state_fw, state_bw)`")

    def _cell(self, node: cst.BaseExpression | None) -> Cell:
        if not (isinstance(node, cst.Name) and node.value in self._cells):
            raise Refusal(node or cst.Name("cell"), "an RNN run of a cell not created as `cell = <RNN cell>(...)`")
        cell = self._cells[node.value]
        if cell.used:
            raise Refusal(node, f"cell '{node.value}' run twice (its weights shared): not modelled")
        cell.used = True
        return cell

    def _targets(self, target: cst.BaseExpression) -> tuple[str, str]:
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 and all(
                isinstance(e.value, cst.Name) for e in target.elements):
            return target.elements[0].value.value, target.elements[1].value.value
        raise Refusal(target, "the RNN's result must be unpacked into `outputs, state`")

    def _layer_name(self, scope: cst.BaseExpression | None, default: str) -> str:
        """TF1's variable scope of the run: `scope=` or the default, numbered from its second use."""
        if scope is not None:
            name = string_value(scope)
            if name is None or "/" in name:
                raise Refusal(scope, "the RNN's scope must be a plain string literal")
            return name
        count = self.scope_counts[default]
        self.scope_counts[default] += 1
        return default if count == 0 else f"{default}_{count}"

    def _construction(self, cell: Cell, layer: str, go_backwards: bool = False, unroll: bool = False,
                      masked: bool = False) -> str:
        arguments = [code(cell.units)]
        if cell.activation is not None:
            arguments.append(f"activation={code(cell.activation)}")
        if cell.kind == "gru":
            arguments.append("reset_after=False")
        arguments += ["return_sequences=True", "return_state=True"]
        arguments += ["go_backwards=True"] if go_backwards else []
        arguments += ["unroll=True"] if unroll else []  # static_rnn's graph is unrolled; short fixed runs
        arguments += ["zero_output_for_mask=True"] if masked else []  # TF1's outputs past a sequence's end
        arguments.append(f"name={layer!r}")
        return f"tf.keras.layers.{_KERAS[cell.kind]}({', '.join(arguments)})"

    def _state_names(self, cell: Cell, state: str) -> list[str]:
        """What the Keras layer returns after its outputs: [h, c] for an LSTM (TF1's state is (c, h),
        each read of it renamed), [h] otherwise (TF1's state is h itself)."""
        if cell.kind != "lstm":
            return [state]
        if state == "_":
            return ["_", "_"]
        names = self.scanner.names
        h, c = names.fresh(f"{state}_h"), names.fresh(f"{state}_c")
        self._rename_state_reads(state, {"h": h, "c": c})
        return [h, c]

    def _rename_state_reads(self, state: str, parts: dict[str, str]) -> None:
        for access in self._references(state):
            member = self.scanner.resolver.parent(access.node)
            part = _state_part(member, access.node)
            if part is None:
                raise Refusal(access.node, f"LSTM state '{state}' read other than as .c / .h / [0] / [1]")
            self._aliases[id(member)] = parts[part]


def _run_arguments(call: cst.Call, signature: list[str], tf_name: str, modelled: tuple[str, ...] = ()) -> dict:
    bound = bind_arguments(call, signature, tf_name)
    for parameter in ("sequence_length", "initial_state", "initial_state_fw", "initial_state_bw"):
        if parameter in bound and parameter not in modelled:
            raise Refusal(bound[parameter], f"{tf_name}({parameter}=...) is not modelled")
    if code(bound.get("time_major", cst.Name("False"))) != "False":
        raise Refusal(bound["time_major"], "time-major RNN inputs are not modelled")
    return bound


@dataclass
class OutputDropout:
    """`outputs = tf.nn.dropout(raw, rate=1 - keep)`: a DropoutWrapper's output_keep_prob, applied to
    the whole output sequence the Keras layer bound to `raw`."""

    outputs: str
    raw: str
    keep: cst.BaseExpression

    def statement(self) -> cst.SimpleStatementLine:
        return statement(f"{self.outputs} = tf.nn.dropout({self.raw}, rate=1 - {code(_operand(self.keep))})")


def _layer_output(outputs: str, dropouts: list[OutputDropout]) -> str:
    return next((dropout.raw for dropout in dropouts if dropout.outputs == outputs), outputs)


def _dropped(inputs: cst.BaseExpression, keep: cst.BaseExpression) -> cst.Call:
    """`tf.nn.dropout(inputs, rate=1 - keep)`, holding the nodes themselves (renames still apply)."""
    template = cst.parse_expression("tf.nn.dropout(inputs, rate=1 - keep)")
    rate = template.args[1].value.with_changes(right=_operand(keep))
    return template.with_changes(args=[template.args[0].with_changes(value=inputs),
                                       template.args[1].with_changes(value=rate)])


@dataclass
class RunConversion:
    """A converted RNN run: the Keras layer and its call, the names it binds (in the layer's
    result order), and the TF1 names the statement defined."""

    use: LayerUse
    results: list[str]
    defined: tuple[str, ...]
    output_dropouts: list[OutputDropout] = field(default_factory=list)
    #: Names TF1 bound to a (forward, backward) pair, with the names of its two parts.
    pairs: list[tuple[str, tuple[str, str]]] = field(default_factory=list)
    #: A MultiRNNCell's layers after the first, each a statement after the run's.
    stack_layers: list[StackLayer] = field(default_factory=list)

    def target(self) -> cst.Tuple:
        return cst.Tuple([cst.Element(cst.Name(n)) for n in self.results], lpar=[], rpar=[])


def parse_cell(target: cst.BaseExpression, call: cst.Call, tf_name: str, cells: dict[str, Cell],
               tf_name_of: Callable[[cst.BaseExpression], str | None],
               integer_of: Callable[[cst.BaseExpression], int | None] = lambda _: None,
               cell_lists: dict[str, cst.BaseExpression] | None = None) -> Cell:
    """`cell = tf.nn.rnn_cell.LSTMCell(n)`, refused where the Keras layer would compute otherwise;
    `cell = DropoutWrapper(<one of cells, or a cell made here>, ...)` (`tf_name_of` names its callee);
    `cell = MultiRNNCell([...])` (`integer_of` reads the N of `[<cell> for _ in range(N)]`; the list
    may be a name of `cell_lists`)."""
    if not isinstance(target, cst.Name):
        raise Refusal(target, f"{tf_name} assigned to something other than a name")
    if rnn_cell_kind(tf_name) == "dropout":
        return _dropout_wrapper(target, call, tf_name, cells, tf_name_of)
    if rnn_cell_kind(tf_name) == "stack":
        def member(node: cst.Call) -> Cell:
            inner = tf_name_of(node.func)
            if rnn_cell_kind(inner) not in ("lstm", "gru", "simple", "dropout"):
                raise Refusal(node, f"{tf_name} of something other than RNN cells")
            return parse_cell(target, node, inner, cells, tf_name_of)

        layers = parse_stack(call, tf_name, cells, member, tf_name_of, integer_of, cell_lists or {})
        return Cell("stack", layers[-1].units, None, call, layers=layers)
    signature = _CELL_SIGNATURES[tf_name.replace("tf.contrib.rnn.", "tf.nn.rnn_cell.")]
    bound = bind_arguments(call, signature, tf_name)
    for parameter, value in bound.items():
        if parameter not in _HARMLESS or _changes_layout(parameter, value):
            raise Refusal(value, f"{tf_name}({parameter}={code(value)}) is not modelled")
    if "num_units" not in bound:
        raise Refusal(call, f"{tf_name} without num_units")
    return Cell(rnn_cell_kind(tf_name), bound["num_units"], bound.get("activation"), call)


def layer_settings(call: cst.Call, tf_name: str) -> list[cst.CSTNode]:
    """The parts of a cell's construction that configure its Keras layers: the call itself, the
    wrapped cell of a DropoutWrapper (whose keep probabilities apply where the cell runs), or the
    cells a MultiRNNCell makes in its list (cells listed by name were checked where they were made)."""
    kind = rnn_cell_kind(tf_name)
    if kind == "stack":
        listed = bind_arguments(call, ["cells", "state_is_tuple"], tf_name).get("cells")
        elements = listed.elements if isinstance(listed, (cst.List, cst.Tuple)) else []
        return [element.value for element in elements if isinstance(element.value, cst.Call)]
    if kind != "dropout":
        return [call]
    return [bind_arguments(call, _DROPOUT_WRAPPER, tf_name).get("cell") or call]


def _dropout_wrapper(target: cst.Name, call: cst.Call, tf_name: str, cells: dict[str, Cell],
                     tf_name_of: Callable[[cst.BaseExpression], str | None]) -> Cell:
    """The wrapped cell, with the keep probabilities that drop something. TF1 drops each step's
    inputs and outputs with a fresh mask; dropping the whole sequence at once gives every element the
    same distribution (the random draws differ from TF1's, as any other random op's do)."""
    bound = bind_arguments(call, _DROPOUT_WRAPPER, tf_name)
    wrapped = bound.get("cell")
    inner = tf_name_of(wrapped.func) if isinstance(wrapped, cst.Call) else None
    if inner in _CELL_KINDS:
        cell = parse_cell(target, wrapped, inner, cells, tf_name_of)
    elif isinstance(wrapped, cst.Name) and wrapped.value in cells:
        cell = cells[wrapped.value]
    else:
        raise Refusal(wrapped or call, f"{tf_name} of a cell not created as `cell = <RNN cell>(...)` before it")
    for parameter, value in bound.items():
        if parameter not in ("cell", "input_keep_prob", "output_keep_prob", "state_keep_prob"):
            raise Refusal(value, f"{tf_name}({parameter}=...) is not modelled")
    if _drops(bound.get("state_keep_prob")):
        raise Refusal(bound["state_keep_prob"], f"{tf_name}(state_keep_prob=...) (the state passed between steps "
                                                "dropped) is not modelled")
    if cell.used or cell.input_keep is not None or cell.output_keep is not None:
        raise Refusal(wrapped, f"cell '{wrapped.value}' wrapped twice or also run unwrapped: not modelled")
    cell.used = True  # runs only through the wrapper
    return replace(cell, used=False, wrapper=call, input_keep=_drops(bound.get("input_keep_prob")),
                   output_keep=_drops(bound.get("output_keep_prob")))


def _dropped_if(inputs: cst.BaseExpression, keep: cst.BaseExpression | None) -> cst.BaseExpression:
    return inputs if keep is None else _dropped(inputs, keep)


def _operand(keep: cst.BaseExpression) -> cst.BaseExpression:
    """`keep` as the right operand of `1 - keep`: parenthesised unless it binds tighter than `-`."""
    if isinstance(keep, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Float, cst.Integer)) or keep.lpar:
        return keep
    return keep.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _drops(keep: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The keep probability, unless it keeps everything (absent, or the literal 1): TF1 then adds no dropout."""
    if keep is None or (isinstance(keep, (cst.Float, cst.Integer)) and float(keep.value) == 1.0):
        return None
    return keep


@dataclass
class _StackedStepsUse(LayerUse):
    """A Keras RNN layer called on static_rnn's list of per-step inputs, stacked along time; with the
    mask of its sequence_length, as dynamic_rnn's (_LengthsMaskUse)."""

    lengths: cst.BaseExpression | None = None

    def call_code(self, render=code) -> str:
        steps = render(self.inputs[0])
        if self.lengths is None:
            return f"{self.object_name}(tf.stack({steps}, axis=1))"
        mask = f"tf.sequence_mask({render(self.lengths)}, len({steps}))"
        return f"{self.object_name}(tf.stack({steps}, axis=1), mask={mask})"


@dataclass
class _LengthsMaskUse(LayerUse):
    """A Keras RNN layer run over sequences of the given lengths (dynamic_rnn's sequence_length): the
    mask of each sequence's first `length` steps makes the layer keep the state of the last of them
    and, with zero_output_for_mask, output zeros after it, as TF1 did."""

    lengths: cst.BaseExpression | None = None
    sequences: cst.BaseExpression | None = None  # the inputs before any dropout: their steps

    def call_code(self, render=code) -> str:
        steps = f"tf.shape({render(self.sequences)})[1]"
        return f"{self.object_name}({render(self.inputs[0])}, mask=tf.sequence_mask({render(self.lengths)}, {steps}))"


def _time_dimension(shape: str, module: cst.Module, rank: int = 3) -> int | None:
    """T of a batch-major placeholder shape `[batch, T, ...]` of at least `rank` dimensions: an integer
    literal, or a name bound once in the module, by a module-level `NAME = <integer literal>`."""
    try:
        node = cst.parse_expression(shape)
    except cst.ParserSyntaxError:
        return None
    if not (isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) >= rank):
        return None
    time = node.elements[1].value
    if isinstance(time, cst.Integer):
        return int(time.value)
    if isinstance(time, cst.Name):
        return module_integer(module, time.value)
    return None


def _literal_index(member: cst.CSTNode, name: cst.Name) -> int | None:
    """i of `name[i]` with i an integer literal (negative allowed)."""
    if not (isinstance(member, cst.Subscript) and member.value is name and len(member.slice) == 1):
        return None
    index = member.slice[0].slice
    value = index.value if isinstance(index, cst.Index) else None
    negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
    number = value.expression if negative else value
    if not isinstance(number, cst.Integer):
        return None
    return -int(number.value) if negative else int(number.value)


def _state_part(member: cst.CSTNode, name: cst.Name) -> str | None:
    if isinstance(member, cst.Attribute) and member.value is name and member.attr.value in _LSTM_STATE:
        return member.attr.value
    if isinstance(member, cst.Subscript) and member.value is name and len(member.slice) == 1:
        index = member.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            return {0: "c", 1: "h"}.get(int(index.value.value))
    return None


def _changes_layout(parameter: str, value: cst.BaseExpression) -> bool:
    """Arguments accepted only at the value that keeps TF1's computation what the Keras layer does."""
    text = code(value)
    if parameter == "forget_bias":
        return text not in ("1.0", "1")
    if parameter == "state_is_tuple":
        return text != "True"
    if parameter == "use_peepholes":
        return text != "False"
    return False
