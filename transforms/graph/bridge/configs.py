"""The `tf.ConfigProto` a wrapped program's sessions were opened with: once the sessions are gone it
configures nothing, so the lines that build it go too (a finding says where TF2 takes such settings)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import only_small_statement, walk
from transforms.graph.bridge.bindings import mentions
from transforms.graph.bridge.region import Layout

CONFIG_PROTOS = frozenset({"tf.ConfigProto", "tf.GPUOptions"})


def session_config_lines(transform, layout: Layout) -> list[cst.BaseStatement]:
    """The host's statements that build a config only its sessions read: `config = tf.ConfigProto(...)`
    and `config.gpu_options.allow_growth = True`."""
    names = {arg.value.value for session in layout.sessions for arg in session.call.args
             if arg.keyword is not None and arg.keyword.value == "config" and isinstance(arg.value, cst.Name)}
    session_calls = {id(node) for session in layout.sessions for node in walk(session.call)}
    lines = []
    for name in sorted(names):
        built = [s for s in layout.body if _builds_config(transform, s, name)]
        set_up = [s for s in layout.body if _sets_attribute_of(s, name)]
        counted = {id(node) for statement in built + set_up for node in walk(statement)} | session_calls
        elsewhere = [node for node in walk(layout.host)
                     if isinstance(node, cst.Name) and node.value == name and id(node) not in counted]
        if len(built) == 1 and not elsewhere:
            lines += built + set_up
    return lines


def _builds_config(transform, statement: cst.BaseStatement, name: str) -> bool:
    small = only_small_statement(statement)
    return isinstance(small, cst.Assign) and len(small.targets) == 1 \
        and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name \
        and isinstance(small.value, cst.Call) and transform.tf_name(small.value.func) in CONFIG_PROTOS


def _sets_attribute_of(statement: cst.BaseStatement, name: str) -> bool:
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return False
    target = small.targets[0].target
    if not isinstance(target, cst.Attribute):
        return False
    while isinstance(target, cst.Attribute):
        target = target.value
    reads_config = mentions(small.value, name)
    return isinstance(target, cst.Name) and target.value == name and not reads_config
