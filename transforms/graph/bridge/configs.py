"""The `tf.ConfigProto` a wrapped program's sessions were opened with: once the sessions are gone it
configures nothing, so the lines that build it go too (a finding says where TF2 takes such settings)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import walk
from transforms.graph.bridge.region import Layout
from transforms.graph.sessions.configs import builds_config, sets_attribute_of


def session_config_lines(transform, layout: Layout) -> list[cst.BaseStatement]:
    """The host's statements that build a config only its sessions read: `config = tf.ConfigProto(...)`
    and `config.gpu_options.allow_growth = True`."""
    names = {arg.value.value for session in layout.sessions for arg in session.call.args
             if arg.keyword is not None and arg.keyword.value == "config" and isinstance(arg.value, cst.Name)}
    session_calls = {id(node) for session in layout.sessions for node in walk(session.call)}
    lines = []
    for name in sorted(names):
        built = [s for s in layout.body if builds_config(transform, s, name)]
        set_up = [s for s in layout.body if sets_attribute_of(s, name)]
        counted = {id(node) for statement in built + set_up for node in walk(statement)} | session_calls
        elsewhere = [node for node in walk(layout.host)
                     if isinstance(node, cst.Name) and node.value == name and id(node) not in counted]
        if len(built) == 1 and not elsewhere:
            lines += built + set_up
    return lines
