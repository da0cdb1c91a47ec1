"""The variables a var_list names: `[D_W1, D_b1]`, a graph name bound once to such a list
(`theta_D = [...]`), or a `+` of them (`theta_G + theta_Q`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from transforms.common.syntax import only_small_statement
from transforms.graph.analysis.model import GraphBlock, Item
from transforms.graph.training.optimizers import concatenated_lists

_MAX_DEPTH = 4

#: A graph name -> the one statement binding it (None when it is bound more than once, or not at all).
Definition = Callable[[str], cst.BaseStatement | None]


def listed_names(var_list: cst.BaseExpression, definition: Definition, depth: int = 0) -> list[str] | None:
    """The names `var_list` lists, in order; None when it is not such a list."""
    if depth > _MAX_DEPTH:
        return None
    parts = concatenated_lists(var_list)
    if len(parts) > 1:
        listed = [listed_names(part, definition, depth + 1) for part in parts]
        return None if None in listed else [name for names in listed for name in names]
    if isinstance(var_list, cst.Name):
        small = only_small_statement(definition(var_list.value) or cst.SimpleStatementLine([]))
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == var_list.value):
            return None
        return listed_names(small.value, definition, depth + 1)
    if not isinstance(var_list, (cst.List, cst.Tuple)) or not all(
            isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in var_list.elements):
        return None
    return [element.value.value for element in var_list.elements]


def block_definition(block: GraphBlock) -> Definition:
    """Definitions in an analysed block."""
    return lambda name: _single(block.definitions.get(name, ()), block.items)


def items_definition(definitions: dict[str, list[int]], items: Sequence[Item]) -> Definition:
    """Definitions among the items read so far (while the block is being read)."""
    return lambda name: _single(definitions.get(name, ()), items)


def _single(indices: Sequence[int], items: Sequence[Item]) -> cst.BaseStatement | None:
    return items[indices[0]].node if len(indices) == 1 else None
