"""Classify how far a file is from TF2: tf2 (no TF1-only API left), wrapped (runs eagerly as TF2,
with TF1 graph code kept only where it is built into a TF2 function graph by tf.compat.v1.wrap_function:
see migrate/wrapped_code.py), compat (runs on tf.compat.v1, or on tf-slim, which is TF1 graph code),
tf1 (TF1-only API that current TensorFlow no longer has, or any TensorFlow name the installed
TensorFlow's API lacks: transforms/common/api_paths.py; version fallbacks aside, see
transforms/common/version_guards.py), or none (no TensorFlow at all)."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from migrate.findings import Level
from transforms.common.api_paths import missing_names
from transforms.common.contrib_homes import removed_module
from transforms.common.lazy_metadata import may_name_tensorflow
from transforms.common.qualnames import canonical_tf_name
from transforms.common.tables import EAGER_EQUIVALENTS, passes_tf2_keyword, symbol_table
from transforms.common.version_guards import VersionGuards
from migrate.wrapped_code import graph_code

# compat.v1 names code around a wrapped graph uses: an eager Saver keeps TF1 checkpoints (with the
# modules its name passes through, which a reference to it also resolves).
BRIDGE_NAMES = frozenset({"tensorflow.compat.v1.train.Saver", "tensorflow.compat.v1.train", "tensorflow.compat.v1",
                          "tensorflow.compat"})


def classify(module: cst.Module | MetadataWrapper) -> Level:
    """The level of a parsed module, judged from the qualified names it uses. Pass the wrapper
    the transforms used when there is one: it has the qualified names resolved already."""
    collector = _QualifiedNameCollector()
    wrapper = module if isinstance(module, MetadataWrapper) else MetadataWrapper(module, unsafe_skip_copy=True)
    wrapper.visit(collector)
    raw_names = collector.names
    tf_raw = {name for name in raw_names if canonical_tf_name(name) is not None}
    if not tf_raw:
        return "none"
    if any(_is_tf1_only(name) for name in tf_raw) or missing_names(tf_raw):
        return "tf1"
    outside = {name for name in collector.names_outside_graph_code if canonical_tf_name(name) is not None}
    if any(_is_compat(name) for name in outside):
        return "compat"
    return "wrapped" if any(_is_compat(name) for name in tf_raw) else "tf2"


def _is_compat(raw_name: str) -> bool:
    return raw_name.startswith(("tensorflow.compat.v1", "tf_slim"))


class _QualifiedNameCollector(VersionGuards, cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.names_outside_graph_code: set[str] = set()  # outside wrapped graph code and its wrappers
        self.tf2_calls: set[int] = set()  # callees of calls that are TF2 code (see passes_tf2_keyword)
        self._graph_code: set[cst.CSTNode] = set()
        self._inside_graph_code = 0

    def visit_Module(self, node: cst.Module) -> None:
        graph, wrappers = graph_code(node, self._qualified)
        self._graph_code = graph | wrappers

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._inside_graph_code += node in self._graph_code

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._inside_graph_code -= original_node in self._graph_code

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._inside_graph_code += node in self._graph_code

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._inside_graph_code -= original_node in self._graph_code

    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def _collect(self, node: cst.CSTNode) -> None:
        if self.in_version_fallback(node):
            return  # only runs on a TensorFlow that lacks the current spelling, or has this one
        if id(node) not in self.tf2_calls and may_name_tensorflow(self, node):  # classify() reads TF's only
            names = self._qualified(node)
            self.names.update(names)
            if not self._inside_graph_code:
                self.names_outside_graph_code.update(names - BRIDGE_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        if not may_name_tensorflow(self, node.func):
            return
        canonical = {canonical_tf_name(name) for name in self._qualified(node.func)}
        if len(canonical) == 1 and passes_tf2_keyword(node, canonical.pop()):
            self.tf2_calls.add(id(node.func))

    def visit_Name(self, node: cst.Name) -> None:
        self._collect(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._collect(node)


def _is_tf1_only(raw_name: str) -> bool:
    """A TF1-only symbol reached other than through tf.compat.v1 (which still has it)."""
    if raw_name.startswith("tensorflow.compat.v1"):
        return False
    canonical = canonical_tf_name(raw_name)
    if canonical is None:
        return False
    if canonical.startswith("tf.contrib") and not raw_name.startswith("tf_slim"):
        return True
    if removed_module(canonical) is not None:
        return True
    if canonical in EAGER_EQUIVALENTS:
        return False  # files still running sessions are tf1 / compat through them
    return symbol_table().is_removed_in_v2(canonical)
