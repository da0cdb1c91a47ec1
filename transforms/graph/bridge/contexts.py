"""Contexts around a program: a `with tf.Graph().as_default():` or `with tf.device(...):` block holding
its sessions.

The block's statements join the code around it, and the program is read as if they had been written
there. The wrapped graph is a graph of its own, so a graph context goes; it may also name its graph
first (`graph = tf.Graph()` ... `with graph.as_default():`) when nothing else reads that name but the
sessions' `graph=` argument, which goes with them. A device context is kept around the graph code
built in it (the writer puts it back inside `build_graph()`); the code after the graph runs eagerly
outside it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.syntax import calls_under, load_names, only_small_statement
from transforms.graph.bridge.region import is_session_call, opens_session, with_host_bodies

NEW_GRAPH = "tf.Graph"
DEVICE = "tf.device"


@dataclass
class Unwrapped:
    module: cst.Module
    blocks: list[cst.With] = field(default_factory=list)  # the graph contexts removed, for findings
    freed_names: set[str] = field(default_factory=set)  # graph names no longer bound or read
    devices: dict[int, cst.With] = field(default_factory=dict)  # statement id -> the device block it was in


def without_graph_contexts(transform, module: cst.Module) -> Unwrapped:
    """`module` with each graph context that holds a session replaced by its statements."""
    found = Unwrapped(module)
    found.module = with_host_bodies(module, lambda host, body: _flattened(transform, host, body, found))
    return found


def _flattened(transform, scope: cst.CSTNode, body: list[cst.BaseStatement], found: Unwrapped):
    statements: list[cst.BaseStatement] = []
    changed = False
    for statement in body:
        if _is_device_block(transform, statement) and _holds_session(transform, statement):
            statements.extend(_unwrapped(statement))
            found.devices.update(_device_statements(transform, statement))
            changed = True
            continue
        graph = _entered_graph(transform, statement)
        if graph is None or not _holds_session(transform, statement):
            statements.append(statement)
            continue
        if isinstance(graph, cst.Name):
            line = _graph_line(transform, statements, graph.value)
            if line is None or not _only_entered(transform, scope, graph.value, line, statement):
                statements.append(statement)
                continue
            statements = [kept for kept in statements if kept is not line]
            found.freed_names.add(graph.value)
        statements.extend(_unwrapped(statement))
        found.blocks.append(statement)
        changed = True
    return statements if changed else body


def _holds_session(transform, block: cst.With) -> bool:
    return any(opens_session(transform, inner) for inner in block.body.body)


def _unwrapped(block: cst.With) -> list[cst.BaseStatement]:
    inner = list(block.body.body)
    inner[0] = inner[0].with_changes(leading_lines=[*block.leading_lines, *inner[0].leading_lines])
    return inner


def _is_device_block(transform, statement: cst.BaseStatement) -> bool:
    """`with tf.device(...):`, alone, its block indented."""
    return isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock) \
        and len(statement.items) == 1 and statement.items[0].asname is None \
        and isinstance(statement.items[0].item, cst.Call) and transform.tf_name(statement.items[0].item.func) == DEVICE


def _device_statements(transform, block: cst.With) -> dict[int, cst.With]:
    """The statements built under the device: the block's own, and those of a session block in it."""
    statements = list(block.body.body)
    for statement in block.body.body:
        if isinstance(statement, cst.With) and opens_session(transform, statement) \
                and isinstance(statement.body, cst.IndentedBlock):
            statements += statement.body.body
    return {id(statement): block for statement in statements}


def _entered_graph(transform, statement: cst.BaseStatement) -> cst.BaseExpression | None:
    """The graph a `with <graph>.as_default():` block enters: a `tf.Graph()` call or a name."""
    if not (isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock)
            and len(statement.items) == 1 and statement.items[0].asname is None):
        return None
    call = statement.items[0].item
    if not (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "as_default"):
        return None
    graph = call.func.value
    if isinstance(graph, cst.Name) or (isinstance(graph, cst.Call) and not graph.args
                                       and transform.tf_name(graph.func) == NEW_GRAPH):
        return graph
    return None


def _graph_line(transform, body: list[cst.BaseStatement], name: str) -> cst.BaseStatement | None:
    """The `<name> = tf.Graph()` line of `body`."""
    for statement in body:
        small = only_small_statement(statement)
        if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name \
                and isinstance(small.value, cst.Call) and not small.value.args \
                and transform.tf_name(small.value.func) == NEW_GRAPH:
            return statement
    return None


def _only_entered(transform, scope: cst.CSTNode, name: str, line: cst.BaseStatement, block: cst.With) -> bool:
    """Whether `name`, bound by `line`, is read only to enter `block` and as its sessions' `graph=` argument."""
    allowed = {id(line.body[0].targets[0].target), id(block.items[0].item.func.value)}
    for call in calls_under(block):
        if is_session_call(transform, call):
            allowed |= {id(arg.value) for arg in call.args if arg.keyword is not None and arg.keyword.value == "graph"}
    return all(id(node) in allowed for node in load_names(scope) if node.value == name)
