"""The variables a TF1 RNN cell kept, as values of the Keras recurrent layer it became, for the
comprehensions of graph code that iterate `tf.trainable_variables()` (the L2 penalty of so many RNN
programs, `sum(tf.nn.l2_loss(v) for v in tf.trainable_variables())`; variable_lists.py).

TF1's cells keep one kernel over [inputs, state] in their own gate order and, for an LSTM, a bias
without the forget bias (1.0) they add at run time; the Keras layers keep a kernel, a recurrent
kernel and a bias in Keras's gate order, the forget bias folded in (cells.py,
migrate/harness/rnn_weights.py). A penalty over the Keras weights would differ from TF1's (the
forget gate's bias is shifted by one), so each cell's TF1 variables are computed from the layer's
weights by a function written into the file: `tf1_lstm_variables(lstm)` is `[kernel, bias]` as TF1
held them, and gradients flow through it to the Keras weights as TF1's flowed to its variables.
These are values, not variables: only a comprehension of graph code, whose elements TensorFlow ops
read, iterates them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import (after_blank_lines, insert_definitions, parsed_definitions,
                                             top_level_definitions)
from transforms.common.syntax import Refusal, string_value
from transforms.graph.layers.keras_layers import LayerUse

# Keras layer -> (the function computing its TF1 variables, the TF1 cell's scope names, its variables).
_CELLS = {
    "LSTM": ("tf1_lstm_variables", ("lstm_cell", "basic_lstm_cell"), ("kernel", "bias")),
    "GRU": ("tf1_gru_variables", ("gru_cell",), ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")),
    "SimpleRNN": ("tf1_simple_rnn_variables", ("basic_rnn_cell",), ("kernel", "bias")),
}

SOURCES = {
    "tf1_lstm_variables": '''
def tf1_lstm_variables(layer):
    """TF1's LSTMCell variables [kernel, bias] as values of the Keras LSTM `layer`'s weights: one kernel
    over [inputs, state] with gates i, j, f, o, and the bias without the forget bias TF1 added at run time."""
    cell = layer.cell
    input_gate, forget_gate, candidate, output_gate = tf.split(
        tf.concat([cell.kernel, cell.recurrent_kernel], 0), 4, axis=1)
    bias_i, bias_f, bias_c, bias_o = tf.split(cell.bias, 4)
    return [tf.concat([input_gate, candidate, forget_gate, output_gate], 1),
            tf.concat([bias_i, bias_c, bias_f - 1.0, bias_o], 0)]
''',
    "tf1_gru_variables": '''
def tf1_gru_variables(layer):
    """TF1's GRUCell variables [gates/kernel, gates/bias, candidate/kernel, candidate/bias] as values of
    the Keras GRU `layer`'s weights (reset_after=False): kernels over [inputs, state], gates r, u."""
    cell = layer.cell
    update, reset, candidate = tf.split(tf.concat([cell.kernel, cell.recurrent_kernel], 0), 3, axis=1)
    bias_update, bias_reset, bias_candidate = tf.split(cell.bias, 3)
    return [tf.concat([reset, update], 1), tf.concat([bias_reset, bias_update], 0), candidate, bias_candidate]
''',
    "tf1_simple_rnn_variables": '''
def tf1_simple_rnn_variables(layer):
    """TF1's BasicRNNCell variables [kernel, bias] as values of the Keras SimpleRNN `layer`'s weights."""
    cell = layer.cell
    return [tf.concat([cell.kernel, cell.recurrent_kernel], 0), cell.bias]
''',
}


@dataclass
class CellVariables:
    """The TF1 variables of one converted RNN cell, listed where graph code iterates them."""

    use: LayerUse
    scope: str | None       # TF1's variable scope path of the run, "" at the top; None when not a literal
    function: str
    cell_scopes: tuple[str, ...]
    parts: tuple[str, ...]
    used: set[str]          # the functions the conversion writes into the file

    def attributes(self, selects: Callable[[str], bool] | None, call: cst.Call) -> list[str]:
        """The code of each TF1 variable `selects` keeps (all without it), in TF1's creation order."""
        kept = [index for index, part in enumerate(self.parts) if selects is None or self._selected(part, selects, call)]
        if not kept:
            return []
        self.used.add(self.function)
        listed = f"{self.function}({self.use.object_name})"
        if len(kept) == len(self.parts):
            return [f"*{listed}"]
        return [f"{listed}[{index}]" for index in kept]

    def _selected(self, part: str, selects: Callable[[str], bool], call: cst.Call) -> bool:
        if self.scope is None:
            raise Refusal(call, f"tf.trainable_variables() filtered by name: the variable scope of the RNN "
                                f"'{self.use.object_name}' is not known statically")
        verdicts = {selects(f"{self.scope}{cell}/{part}") for cell in self.cell_scopes}
        if len(verdicts) > 1:
            raise Refusal(call, f"tf.trainable_variables() filtered by name: whether it keeps a variable of "
                                f"'{self.use.object_name}' depends on which TF1 cell class made it")
        return verdicts.pop()


def cell_variables(use: LayerUse, scope: str | None, used: set[str]) -> CellVariables | None:
    """The TF1 variables of the RNN layer `use` made under variable scope `scope` (None for other layers)."""
    spec = _CELLS.get(use.keras)
    if spec is None:
        return None
    function, cell_scopes, parts = spec
    layer_scope = _tf1_run_scope(use)
    full = None if scope is None or layer_scope is None else f"{scope}{layer_scope}/"
    return CellVariables(use, full, function, cell_scopes, parts, used)


def _tf1_run_scope(use: LayerUse) -> str | None:
    """The TF1 scope of the cell's variables from the Keras layer's name (cells.py names the layer for
    the run's scope, `rnn`, and stacks.py a MultiRNNCell's layer k `rnn_multi_rnn_cell_<k>`)."""
    construction = cst.parse_expression(use.construction)
    names = [string_value(arg.value) for arg in construction.args if arg.keyword and arg.keyword.value == "name"]
    if len(names) != 1 or names[0] is None:
        return None
    head, marker, index = names[0].rpartition("_multi_rnn_cell_")
    return f"{head}/multi_rnn_cell/cell_{index}" if marker and index.isdigit() else names[0]


def with_cell_variable_functions(module: cst.Module, used: set[str]) -> cst.Module:
    """`module` with the functions of `used` defined after its imports (they read `tf` when called)."""
    if not used:
        return module
    taken = top_level_definitions(module) & used
    if taken:
        raise Refusal(None, f"the file already defines {', '.join(sorted(taken))}, a function the conversion writes")
    definitions = [after_blank_lines(statement) for statement in parsed_definitions([SOURCES[name] for name in sorted(used)])]
    body = list(module.body)
    return module.with_changes(body=insert_definitions(body, position_after_imports(body), definitions))
