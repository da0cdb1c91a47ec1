"""Put the converted block back together: state where it was created, plain Python where it was (with
its run sites rewritten), step functions just before the first statement that needs them. Comments of
statements that vanish (placeholders, sessions, initialisers) move to the next statement kept; those of
graph statements moved into step functions went there with them."""
from __future__ import annotations

import libcst as cst

from transforms.graph.analysis.model import GraphBlock, Item
from transforms.common.syntax import replace_nodes


def assemble(block: GraphBlock, functions: dict[int, list[cst.FunctionDef]], replacements: dict,
             blank_lines: int, written: set[int]) -> list[cst.BaseStatement]:
    """`written`: the indexes of the items written into step functions, which took their comments along."""
    output: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    for item in block.items:
        defined = functions.get(item.index, [])
        if defined:
            output += [_spaced(definition, blank_lines) for definition in defined]
            carried = [cst.EmptyLine(indent=False)] * blank_lines + [line for line in carried if line.comment]
        produced = _produced(item, replacements)
        comments = carried + list(item.leading)
        if not produced:
            vanished = list(item.leading) + list(getattr(item.node, "leading_lines", ()))
            if item.index in written:
                vanished = [line for line in vanished if line.comment is None]
            carried = carried + vanished
            continue
        first = produced[0]
        own = list(first.leading_lines)
        if own and own[0].comment is None and any(line.comment for line in own):
            comments = [line for line in comments if line.comment is None]  # those described what vanished
        produced[0] = first.with_changes(leading_lines=_merge(comments, own, blank_lines))
        output += produced
        carried = []
    trailing = functions.get(len(block.items), [])
    output += [_spaced(definition, blank_lines) for definition in trailing]
    return output


def _produced(item: Item, replacements: dict) -> list[cst.BaseStatement]:
    if not item.keeps_original:
        return list(item.emit)
    result = replace_nodes(item.node, replacements)
    if isinstance(result, cst.RemovalSentinel):
        return []
    if isinstance(result, cst.FlattenSentinel):
        return list(result.nodes)
    return [result]


def _merge(carried: list[cst.EmptyLine], own: list[cst.EmptyLine], most: int) -> list[cst.EmptyLine]:
    """Carried comment lines before the statement's own, with at most `most` blank lines in a row."""
    merged: list[cst.EmptyLine] = []
    for line in carried + own:
        if line.comment is None and len(merged) >= most and all(m.comment is None for m in merged[-most:]):
            continue
        merged.append(line)
    return merged


def _spaced(definition: cst.FunctionDef, blank_lines: int) -> cst.FunctionDef:
    return definition.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * blank_lines)


def tidy_body(statements: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Comments kept, blank lines at most one and none at the top of the body."""
    tidied = []
    for position, node in enumerate(statements):
        lines, blank = [], False
        for line in getattr(node, "leading_lines", ()):
            if line.comment is None:
                blank = True
                continue
            if blank and (lines or position):
                lines.append(cst.EmptyLine(indent=False))
            blank = False
            lines.append(line)
        if blank and position and not lines:
            lines.append(cst.EmptyLine(indent=False))
        tidied.append(node.with_changes(leading_lines=lines) if hasattr(node, "leading_lines") else node)
    return tidied
