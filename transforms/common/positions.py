"""Positions of a few nodes, exactly as libcst's PositionProvider gives them, for a fraction of its cost.

A finding needs the line and column of one node, but libcst's PositionProvider records a range for
every node of the module: it generates the module's code with two stack operations, a range object
and a generator-based context manager per node, about four times the cost of generating the code.
Transforms report a few findings per pass, and every pass that reports pays that again on a fresh
parse. Here the code is generated once with the same line and column tracking, but ranges are
recorded only inside the subtrees of the nodes asked for: within them the recording is libcst's own
(a node's range may be hoisted from its first and last children), so their ranges are the same.
"""
from __future__ import annotations

from collections.abc import Collection
from contextlib import nullcontext
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

_NOT_RECORDING = nullcontext()


@dataclass
class _RecordingWithin(PositionProvidingCodegenState):
    """libcst's position-providing codegen state, recording only inside the wanted nodes' subtrees."""

    wanted: Collection[cst.CSTNode] = field(default_factory=frozenset)
    depth: int = 0  # > 0 inside a wanted node's subtree

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self.depth or node in self.wanted:
            self.depth += 1
            super().before_codegen(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if self.depth:  # codegen is nested, so the node entered the subtree at its before_codegen
            self.depth -= 1
            super().after_codegen(node)
            if not self.depth and all(wanted in self.provider._computed for wanted in self.wanted):
                raise _AllRecorded  # a range depends only on the code up to its node's end

    def record_syntactic_position(self, node: cst.CSTNode, **hoisted: cst.CSTNode | None):
        if self.depth:
            return super().record_syntactic_position(node, **hoisted)
        return _NOT_RECORDING


class _AllRecorded(Exception):
    """Every wanted node's range is known: the rest of the module's code need not be generated."""


def positions_of(module: cst.Module, nodes: Collection[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """PositionProvider's range of each of `nodes` that is in `module` (the others are left out)."""
    wanted = set(nodes)
    provider = PositionProvider()
    state = _RecordingWithin(default_indent=module.default_indent, default_newline=module.default_newline,
                             provider=provider, wanted=wanted)
    try:
        module._codegen(state)
    except _AllRecorded:
        pass
    return {node: provider._computed[node] for node in wanted if node in provider._computed}
