"""The program's sessions: where each is created (`with tf.Session() as sess:` anywhere, or
`sess = tf.Session()`), that it is only run and closed, and how it disappears: a `with` block nested
in plain code is unwrapped in place, a nested assignment removed (block-level ones are flattened by
transforms/graph/analysis/flatten.py and dropped by the scan)."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import Refusal, calls_under, walk


def find_sessions(resolver) -> list[tuple[cst.Call, cst.CSTNode]]:
    """(creation call, its `with` statement or assignment line) for every session; records the names
    they are bound to in `resolver.session_targets`. Several sessions must follow one another
    (transforms/graph/sessions/later_sessions.py)."""
    sessions = []
    for node in calls_under(resolver.module):
        name = resolver.tf_name(node.func)
        if not (name and categorize(name)[0] is Category.SESSION):
            continue
        holder = resolver.parent(node)
        if isinstance(holder, cst.WithItem):
            target = holder.asname.name if holder.asname else None
        elif isinstance(holder, cst.Assign) and len(holder.targets) == 1:
            target = holder.targets[0].target
        else:
            raise Refusal(node, "a session that is neither a `with` target nor assigned to a name")
        if target is not None and not isinstance(target, cst.Name):
            raise Refusal(node, "a session bound to something other than a name")
        if target is not None:
            resolver.session_targets.add(id(target))
        sessions.append((node, resolver.parent(holder)))
    return sessions


def check_session_uses(resolver, sites, closes: list[cst.Call], checkpoint_arguments: set[int] = frozenset()) -> None:
    """The session is only run, closed, passed to `saver.save` / `saver.restore` and made the default
    for a flattened block (`checkpoint_arguments`: ids of the names passed so)."""
    allowed = {id(call.func.value) for call in [*(site.call for site in sites), *closes]} | checkpoint_arguments
    allowed |= {id(arg.value) for site in sites for arg in site.call.args
                if arg.keyword and arg.keyword.value == "session"}
    for node in walk(resolver.module):
        if isinstance(node, cst.Name) and id(node) in resolver.session_targets:
            for assignment in resolver.assignments_of(node):
                for access in assignment.references:
                    if id(access.node) not in allowed:
                        raise Refusal(access.node, f"the session '{node.value}' is used for more than running")


def default_session_blocks(flattener) -> set[int]:
    """The sessions of `with sess.as_default():` blocks the graph block flattens (the session only made
    default for the block's runs): ids of their `sess` names."""
    return {id(item.item.func.value) for item in flattener.context_headers
            if isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
            and item.item.func.attr.value == "as_default" and isinstance(item.item.func.value, cst.Name)}


def nested_session_replacements(sessions, block, flattener) -> dict:
    """Sessions created in nested code: their `with` blocks unwrap, their assignments go."""
    flattened = {id(with_item) for with_item in flattener.context_headers}
    items = {id(item.node) for item in block.items}
    replacements = {}
    for _, holder in sessions:
        if isinstance(holder, cst.With) and not any(id(w) in flattened for w in holder.items):
            if not isinstance(holder.body, cst.IndentedBlock):
                raise Refusal(holder, "one-line `with` session block")
            replacements[id(holder)] = lambda updated, holder=holder: cst.FlattenSentinel(_unwrapped(holder, updated))
        elif isinstance(holder, cst.SimpleStatementLine) and id(holder) not in items:
            replacements[id(holder)] = lambda _: cst.RemovalSentinel.REMOVE
    return replacements


def _unwrapped(original: cst.With, updated: cst.With) -> list[cst.BaseStatement]:
    """The body of a session `with`, its first statement taking the `with` line's comments."""
    body = list(updated.body.body) or [cst.SimpleStatementLine([cst.Pass()])]
    comment = original.body.header.comment
    lines = list(original.leading_lines) + ([cst.EmptyLine(indent=True, comment=comment)] if comment else [])
    body[0] = body[0].with_changes(leading_lines=lines + list(body[0].leading_lines))
    return body
