"""`tf.nn.rnn_cell.MultiRNNCell` run by dynamic_rnn or static_rnn -> one Keras recurrent layer per
cell, each run over the previous one's output sequence (see transforms/graph/rnn/cells.py):

    cells = [tf.nn.rnn_cell.LSTMCell(64) for _ in range(2)]     lstm = tf.keras.layers.LSTM(64, ..., name="rnn_multi_rnn_cell_0")
    stack = tf.nn.rnn_cell.MultiRNNCell(cells)                  lstm_1 = tf.keras.layers.LSTM(64, ..., name="rnn_multi_rnn_cell_1")
    outputs, state = tf.nn.dynamic_rnn(stack, x, dtype=...)     ...
    last = state[-1].h                                          outputs_0, state_0_h, state_0_c = lstm(x)   # in the step
                                                                outputs, state_1_h, state_1_c = lstm_1(outputs_0)
                                                                last = state_1_h

The cells are listed (names of cells made before, or cells made in the list), or made alike by a
comprehension `[<cell> for _ in range(N)]` (N an integer literal or module constant); such lists may
be bound to a name first and joined by `+`. TF1's state is the tuple of the cells' states: `state[k]`
(then `.h` / `.c` / `[0]` / `[1]` for an LSTM cell) reads the state of layer k. A DropoutWrapper's
input / output dropout applies to the sequence entering / leaving its layer, as for a single cell.
Layer k is named `<scope>_multi_rnn_cell_<k>`, which the harness maps to TF1's
`<scope>/multi_rnn_cell/cell_<k>` (migrate/harness/rnn_weights.py). Refused: the state read whole,
a stack in a stack, a cell in two stacks, state_is_tuple=False, dropout in a static_rnn stack."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst

from transforms.common.syntax import Refusal, bind_arguments, code
from transforms.graph.layers.keras_layers import LayerUse

_MULTI_RNN_CELL = ["cells", "state_is_tuple"]


def parse_stack(call: cst.Call, tf_name: str, cells: dict, parse_member: Callable[[cst.Call], object],
                tf_name_of: Callable[[cst.BaseExpression], str | None],
                integer_of: Callable[[cst.BaseExpression], int | None],
                cell_lists: dict[str, cst.BaseExpression]) -> list:
    """The cells of `MultiRNNCell(cells)`, in order (`parse_member` reads a cell made in the list;
    `cell_lists` holds the lists bound to names)."""
    bound = bind_arguments(call, _MULTI_RNN_CELL, tf_name)
    if code(bound.get("state_is_tuple", cst.Name("True"))) != "True":
        raise Refusal(bound["state_is_tuple"], f"{tf_name}(state_is_tuple=False) is not modelled")
    members = _members(bound.get("cells"), integer_of, tf_name, cell_lists)
    layers = []
    for member in members:
        if isinstance(member, cst.Name) and member.value in cells:
            cell = cells[member.value]
            if cell.used or cell.kind == "stack":
                raise Refusal(member, f"cell '{member.value}' used twice, or a stack in a stack: not modelled")
            cell.used = True  # runs only in the stack
            layers.append(replace(cell, used=False))
        elif isinstance(member, cst.Call) and tf_name_of(member.func) is not None:
            layers.append(parse_member(member))
        else:
            raise Refusal(member, f"{tf_name} of something other than cells made as `<RNN cell>(...)`")
    if not layers or any(layer.kind == "stack" for layer in layers):
        raise Refusal(call, f"{tf_name} without cells, or with a stack among them, is not modelled")
    return layers


def _members(listed: cst.BaseExpression | None, integer_of, tf_name: str,
             cell_lists: dict[str, cst.BaseExpression]) -> list[cst.BaseExpression]:
    """The cell expressions of a list display, a `[<cell> for _ in range(N)]`, a name bound to one of
    those (read once: a second stack of the same cells would share them), or lists joined by `+`."""
    if isinstance(listed, cst.BinaryOperation) and isinstance(listed.operator, cst.Add):
        return [*_members(listed.left, integer_of, tf_name, cell_lists),
                *_members(listed.right, integer_of, tf_name, cell_lists)]
    if isinstance(listed, cst.Name) and listed.value in cell_lists:
        return _members(cell_lists.pop(listed.value), integer_of, tf_name, cell_lists)
    if isinstance(listed, (cst.List, cst.Tuple)) and all(isinstance(e, cst.Element) for e in listed.elements):
        return [element.value for element in listed.elements]
    if isinstance(listed, cst.ListComp) and _counted(listed.for_in) and isinstance(listed.elt, cst.Call):
        count = integer_of(listed.for_in.iter.args[0].value)
        if count is not None and count > 0:
            return [listed.elt] * count
    raise Refusal(listed or cst.Name("cells"), f"{tf_name}'s cells must be a list of cells, or "
                                               "`[<cell>(...) for _ in range(<integer>)]`")


def _counted(loop: cst.CompFor) -> bool:
    """`for _ in range(<one argument>)`, with nothing else, the loop variable unused."""
    return (isinstance(loop.target, cst.Name) and loop.target.value == "_" and not loop.ifs
            and loop.inner_for_in is None and isinstance(loop.iter, cst.Call)
            and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range"
            and len(loop.iter.args) == 1 and loop.iter.args[0].keyword is None)


@dataclass
class StackLayer:
    """A layer after the first: `<sequence>, <state names> = <layer>(<previous sequence, dropped>)`,
    a statement of its own after the run's."""

    line: cst.SimpleStatementLine
    use: LayerUse          # `use.call` is the statement's call
    defined: tuple[str, ...]
    previous: str          # the sequence it reads
    read: cst.BaseExpression  # the program's own nodes it reads besides: keep probabilities, lengths


def layer_name(scope: str, index: int) -> str:
    return f"{scope}_multi_rnn_cell_{index}"
