"""Contexts around a program: a `with tf.Graph().as_default():` or `with tf.device(...):` block holding
its sessions, and a `with sess.as_default():` block right after a session line.

The block's statements join the code around it, and the program is read as if they had been written
there. The wrapped graph is a graph of its own, so a graph context goes; it may also name its graph
first (`graph = tf.Graph()` ... `with graph.as_default():`) when nothing else reads that name but the
sessions' `graph=` argument, which goes with them. A device context is kept around the graph code
built in it (the writer puts it back inside `build_graph()`); the code after the graph runs eagerly
outside it. A session's default context (`sess = tf.Session(config=...)`, then `with sess.as_default():`
around the model, its closures and the loop, as the cnn-text-classification family writes it) goes too
when its runs all name the session: each becomes a pruned function. One that runs the default session
(`tensor.eval()`, `op.run()`) is refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.syntax import Refusal, calls_under, code, load_names, only_small_statement, shortened
from transforms.graph.bridge.region import is_session_call, opens_session, session_name, with_host_bodies

NEW_GRAPH = "tf.Graph"
DEVICE = "tf.device"


@dataclass
class Unwrapped:
    module: cst.Module
    blocks: list[cst.With] = field(default_factory=list)  # the graph contexts removed, for findings
    freed_names: set[str] = field(default_factory=set)  # graph names no longer bound or read
    devices: dict[int, cst.With] = field(default_factory=dict)  # statement id -> the device block it was in
    default_sessions: list[cst.With] = field(default_factory=list)  # `with sess.as_default():` blocks removed


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
    return _without_default_sessions(transform, statements if changed else body, found)


def _without_default_sessions(transform, body: list[cst.BaseStatement], found: Unwrapped):
    """`body` with each `with sess.as_default():` block after the line opening `sess` replaced by its
    statements (the same list when there is none)."""
    statements: list[cst.BaseStatement] = []
    sessions: set[str] = set()
    replaced = False
    for statement in body:
        name = session_name(transform, statement)
        if name is not None and not isinstance(statement, cst.With):
            sessions.add(name)
        entered = _entered_graph(transform, statement)
        if isinstance(entered, cst.Name) and entered.value in sessions:
            if (run := _default_session_run(statement, entered)) is not None:
                raise Refusal(run, f"`{shortened(code(run))}` runs the session `{code(statement.items[0].item)}` "
                                   "makes the default one; such runs are not read there")
            statements.extend(_unwrapped(statement))
            found.default_sessions.append(statement)
            replaced = True
        else:
            statements.append(statement)
    return statements if replaced else body


def _default_session_run(block: cst.With, session: cst.Name) -> cst.Call | None:
    """The first call in `block` that runs its default session without naming it: `tensor.eval()` /
    `op.run()` with no `session=`."""
    for call in calls_under(block.body):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("eval", "run") \
                and not (isinstance(func.value, cst.Name) and func.value.value == session.value) \
                and not any(arg.keyword is not None and arg.keyword.value == "session" for arg in call.args):
            return call
    return None


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
