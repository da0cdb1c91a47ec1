"""Traced runs of a wrapped program: `sess.run(..., options=run_options, run_metadata=run_metadata)`
then `writer.add_run_metadata(run_metadata, tag)`, as TensorFlow's TensorBoard tutorial records a step's
profile. A pruned function runs the same ops but takes no RunOptions / RunMetadata, so the trace is
not collected: the `add_run_metadata` lines go, and so do the lines making the options and metadata
when nothing else reads them (findings say so)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import load_names, only_small_statement, walk

RUN_METADATA = "add_run_metadata"
TRACE_OBJECTS = frozenset({"tf.RunOptions", "tf.RunMetadata"})
RUN_METADATA_GONE = ("FileWriter.add_run_metadata(...) removed: the run it recorded is a pruned function now, "
                     "which takes no RunOptions / RunMetadata (TF2 profiles with tf.profiler.experimental)")


def run_metadata_lines(scope: cst.CSTNode, writers: set[str]) -> list[cst.SimpleStatementLine]:
    """The statements `writer.add_run_metadata(...)` on the writers named `writers`."""
    return [node for node in walk(scope) if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
            and isinstance(node.body[0], cst.Expr) and isinstance(call := node.body[0].value, cst.Call)
            and isinstance(call.func, cst.Attribute) and call.func.attr.value == RUN_METADATA
            and isinstance(call.func.value, cst.Name) and call.func.value.value in writers]


def trace_lines(transform, scope: cst.CSTNode, runs: list[cst.Call],
                metadata_lines: list[cst.SimpleStatementLine]) -> list[cst.SimpleStatementLine]:
    """The statements `name = tf.RunOptions(...)` / `name = tf.RunMetadata()` whose names only `runs`
    (as options / run_metadata) and the removed `metadata_lines` read."""
    passed = {id(arg.value) for run in runs for arg in run.args
              if arg.keyword is not None and arg.keyword.value in ("options", "run_metadata")}
    removed = {id(node) for line in metadata_lines for node in walk(line)}
    lines = []
    for node in walk(scope):
        small = only_small_statement(node) if isinstance(node, cst.SimpleStatementLine) else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Call) and transform.tf_name(small.value.func) in TRACE_OBJECTS):
            continue
        name, target = small.targets[0].target.value, small.targets[0].target
        reads = [use for use in load_names(scope) if use.value == name and use is not target]
        if all(id(use) in passed or id(use) in removed for use in reads):
            lines.append(node)
    return lines
