"""Summary writers of a wrapped program: `tf.summary.FileWriter` does not run eagerly, so each becomes
`TF1FileWriter` (transforms/graph/bridge/runtime.py), the same methods on a TF2 summary writer; the
session's graph it is given is the wrapped graph. One made in the region is made after the graph."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import Refusal, calls_under, walk
from transforms.graph.bridge.bindings import name_assignments
from transforms.graph.bridge.tracing import run_metadata_lines

WRITER_METHODS = frozenset({"add_summary", "add_graph", "flush", "close"})
@dataclass
class Writer:
    call: cst.Call
    statement: cst.SimpleStatementLine | None  # `name = tf.summary.FileWriter(...)`, when it is one
    name: str | None


def read_writers(transform, scope: cst.CSTNode, region: list[cst.BaseStatement]) -> list[Writer]:
    in_region = {id(node) for statement in region for node in walk(statement)}
    assignments = name_assignments(scope)
    writers = []
    for call in calls_under(scope):
        name = transform.tf_name(call.func)
        if not (name and categorize(name)[0] is Category.SUMMARY_WRITER):
            continue
        name, statement = assignments.get(id(call), (None, None))
        if id(call) in in_region and (statement is None or statement not in region):
            raise Refusal(call, "a summary writer made inside the graph code other than on a line of its own")
        writers.append(Writer(call, statement, name))
    _check_methods(scope, {writer.name for writer in writers if writer.name})
    return writers


def _check_methods(scope: cst.CSTNode, names: set[str]) -> None:
    removed = {id(line.body[0].value.func) for line in run_metadata_lines(scope, names)}
    for node in walk(scope):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value in names \
                and node.attr.value not in WRITER_METHODS and id(node) not in removed:
            raise Refusal(node, f"FileWriter.{node.attr.value} has no TF2 counterpart in TF1FileWriter")
