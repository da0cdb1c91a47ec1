"""TFM107: report TensorFlow names the migrated code still uses that the installed TensorFlow lacks.

Whatever the other transforms could not convert is checked against the installed API
(transforms/data/api_paths.json): a `tf.` chain through a module that does not export the next name
(`tf.estimator`, a TF1 name no table knows) fails when the line runs, so the file cannot reach a level
above tf1. Each missing name is reported once, at its first use. tf.contrib and the other removed
modules (`tf.examples.tutorials`, ...) are left to TFM101, which reports them with their replacements;
private `tensorflow.python` modules are not API and not judged. Neither are version fallbacks, code
that only runs where a name is missing or present (`except AttributeError:` after the current
spelling, `if "concat_v2" in dir(tf):`; transforms/common/version_guards.py).
"""
from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import QualifiedNameProvider

from transforms.base import TFTransform
from transforms.common.api_paths import missing_names, tensorflow_version
from transforms.common.lazy_metadata import may_name_tensorflow
from transforms.common.version_guards import VersionGuards


class ReportMissingSymbols(VersionGuards, TFTransform):
    CODE = "TFM107"
    DESCRIPTION = "Report TensorFlow names left in the code that the installed TensorFlow does not have"
    PHASE = 59
    TRIGGERS = ("tensorflow",)

    def visit_Module(self, node: cst.Module) -> None:
        self._reported: set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            self._report(alias, {get_full_name_for_node(alias.name) or ""})
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = get_full_name_for_node(node.module) if node.module and not node.relative else ""
        if module and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self._report(alias, {f"{module}.{get_full_name_for_node(alias.name)}"})
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not self._report_missing(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._report_missing(node)

    def _report_missing(self, node: cst.CSTNode) -> bool:
        if not may_name_tensorflow(self, node):
            return False  # only TensorFlow's names can be missing
        return self._report(node, {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())})

    def _report(self, node: cst.CSTNode, qualified: set[str]) -> bool:
        if self.in_version_fallback(node):
            return False
        fresh = sorted(missing_names(qualified) - self._reported)
        for missing in fresh:
            self._reported.add(missing)
            self.report(node, f"{missing} does not exist in TensorFlow {tensorflow_version()}: this code "
                        "fails there when it runs", fixed=False, severity="error")
        return bool(fresh)
