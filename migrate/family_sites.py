"""Counting the sites of each TF1 API family in a parsed module (see migrate/families.py)."""
from __future__ import annotations

from collections import Counter

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from migrate.families import family_of
from transforms.common.dispatch import FastDispatch
from transforms.common.lazy_metadata import may_name_tensorflow
from transforms.common.qualnames import canonical_tf_name, module_aliases
from transforms.common.tables import passes_tf2_keyword, symbol_table


def family_counts(original: MetadataWrapper, migrated: MetadataWrapper) -> dict[str, dict[str, int]]:
    """{family: {"sites", "tf2", "compat", "tf1"}} for the families `original` uses. An unchanged or
    failed file passes one wrapper twice: it is walked once."""
    found = _Sites()
    original.visit(found)
    left = found
    if migrated is not original:
        left = _Sites()
        migrated.visit(left)
    counts: dict[str, dict[str, int]] = {}
    for family, total in sorted(Counter(f for f, _ in found.sites).items()):
        compat = sum(1 for f, bucket in left.sites if f == family and bucket == "compat")
        tf1 = sum(1 for f, bucket in left.sites if f == family and bucket == "tf1")
        counts[family] = {"sites": total, "tf2": max(0, total - compat - tf1), "compat": compat, "tf1": tf1}
    return counts


def _bucket(raw_name: str, canonical: str) -> str:
    """Where a reference left in migrated code stands: tf2, compat or tf1."""
    if raw_name.startswith("tensorflow.compat.v1") or raw_name.startswith("tf_slim"):
        return "compat"
    if canonical.startswith("tf.contrib") or symbol_table().is_removed_in_v2(canonical):
        return "tf1"
    return "tf2"


class _Sites(FastDispatch, cst.CSTVisitor):
    """Outermost references to family symbols: `tf.train.Saver` counts once, not also `tf.train`."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.sites: list[tuple[str, str]] = []
        self.aliases: dict[str, str] = {}
        self.tf2_calls: set[int] = set()  # callees of calls that are TF2 code (see passes_tf2_keyword)

    def visit_Module(self, node: cst.Module) -> None:
        self.aliases = module_aliases(node, self._canonical)  # slim = tf.contrib.slim; slim.conv2d(...)

    def _canonical(self, node: cst.CSTNode) -> str | None:
        if not may_name_tensorflow(self, node):
            return None
        names = {canonical_tf_name(q.name) for q in self.get_metadata(QualifiedNameProvider, node, set())}
        names.discard(None)
        return next(iter(names)) if len(names) == 1 else None

    def visit_Call(self, node: cst.Call) -> None:
        if passes_tf2_keyword(node, self._canonical(node.func)):
            self.tf2_calls.add(id(node.func))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not self._count(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._count(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return False  # `slim = tf.contrib.slim` binds a name; the value is the reference

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def _count(self, node: cst.CSTNode) -> bool:
        if not may_name_tensorflow(self, node):
            return False
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            raw = self._through_alias(qualified.name)
            canonical = canonical_tf_name(raw)
            family = family_of(canonical) if canonical else None
            if family:
                self.sites.append((family, "tf2" if id(node) in self.tf2_calls else _bucket(raw, canonical)))
                return True
        return False

    def _through_alias(self, name: str) -> str:
        """`slim.conv2d` -> `tensorflow.contrib.slim.conv2d` when `slim` is a module-level alias."""
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return name
        raw_target = "tensorflow" + target[len("tf"):]
        return f"{raw_target}.{rest}" if rest else raw_target
