"""A session opened before the graph it runs: `sess = tf.InteractiveSession()` first, as the TF1
tutorials begin, then the graph, then the first run.

A TF1 session runs whatever its graph holds when it runs, so opening it later changes nothing: the
session line is read as if it stood just before the first statement that uses it (names it, runs a
default session's `.eval()` / `.run()`, or opens another session), and the graph built before that is
the program's graph region like any other. It does not move past the end of its notebook cell.
"""
from __future__ import annotations

import libcst as cst

from transforms.graph.bridge.bindings import mentions
from transforms.graph.bridge.region import (is_cell_boundary, opens_session, runs_a_default_session, session_name,
                                           with_host_bodies)


def with_session_lines_moved_down(transform, module: cst.Module) -> cst.Module:
    """`module` with each host's first session line moved down to its first use."""
    return with_host_bodies(module, lambda host, body: _moved_down(transform, body))


def _moved_down(transform, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    first = next((index for index, statement in enumerate(body) if opens_session(transform, statement)), None)
    if first is None or isinstance(body[first], cst.With):
        return body
    name = session_name(transform, body[first])
    use = first + 1
    while use < len(body) and not _stops_move(transform, body[use], name):
        use += 1
    if use == first + 1:
        return body
    return [*body[:first], *body[first + 1:use], body[first], *body[use:]]


def _stops_move(transform, statement: cst.BaseStatement, name: str) -> bool:
    return opens_session(transform, statement) or runs_a_default_session(statement) \
        or is_cell_boundary(transform, statement) or mentions(statement, name)
