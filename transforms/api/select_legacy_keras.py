"""TFM106: select legacy Keras where code keeps tf.compat.v1.layers or tf.compat.v1.nn.rnn_cell.

On TensorFlow 2.16+ those modules exist only with legacy Keras: the tf-keras package, selected by
TF_USE_LEGACY_KERAS=1 before TensorFlow is imported; under Keras 3 the first call raises ("`dense` is
not available with Keras 3"). When TFM201 could not turn such a file's layers into Keras layers, this
sets the variable right before the file's first top-level `import tensorflow`, so the program runs,
and reports that it now needs tf-keras installed.
"""
from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import QualifiedNameProvider

from transforms.api._tf_spelling import TF_MODULE
from transforms.base import TFTransform
from transforms.common.api_paths import tf_path
from transforms.common.lazy_metadata import may_name_tensorflow
from transforms.common.tables import symbol_table

VARIABLE = "TF_USE_LEGACY_KERAS"
SELECTION = f'os.environ["{VARIABLE}"] = "1"  # tf.compat.v1.layers / rnn_cell need legacy Keras: pip install tf-keras\n'


class SelectLegacyKeras(TFTransform):
    CODE = "TFM106"
    DESCRIPTION = "Select legacy Keras (tf-keras) before TensorFlow is imported where v1 layers or RNN cells remain"
    PHASE = 57
    TRIGGERS = ("layers", "rnn_cell")

    def visit_Module(self, node: cst.Module) -> None:
        self._first_use: tuple[cst.CSTNode, str] | None = None

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not self._note(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._note(node)

    def _note(self, node: cst.CSTNode) -> bool:
        if self._first_use is not None or not may_name_tensorflow(self, node):
            return False
        table = symbol_table()
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            path = tf_path(qualified.name)
            if path is not None and table.needs_legacy_keras(path):
                self._first_use = (node, path)
                return True
        return False

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self._first_use is None or VARIABLE in updated.code:
            return updated
        use, path = self._first_use
        body = list(updated.body)
        position = next((i for i, statement in enumerate(body) if _imports_tensorflow(statement)), None)
        if position is None:
            self.report(use, f"{path} needs legacy Keras: install tf-keras and set {VARIABLE}=1 before "
                        "TensorFlow is imported", fixed=False, severity="warning")
            return updated
        selection = [cst.parse_statement(SELECTION)]
        if not any(_imports_os(statement) for statement in body[:position]):
            selection.insert(0, cst.parse_statement("import os\n"))
        first = body[position]
        selection[0] = selection[0].with_changes(leading_lines=first.leading_lines)
        body[position:position + 1] = [*selection, first.with_changes(leading_lines=[])]
        self.report(use, f"{path} needs legacy Keras under TensorFlow 2.16+: selected it ({VARIABLE}=1 "
                    "before TensorFlow is imported); the program now requires the tf-keras package",
                    fixed=True, severity="warning")
        return updated.with_changes(body=body)


def _imports_tensorflow(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import) and any(_is_tensorflow(get_full_name_for_node(a.name)) for a in small.names):
            return True
        if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative \
                and _is_tensorflow(get_full_name_for_node(small.module)):
            return True
    return False


def _is_tensorflow(module: str | None) -> bool:
    return module is not None and (module == TF_MODULE or module.startswith(TF_MODULE + "."))


def _imports_os(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Import) and any(get_full_name_for_node(a.name) == "os" and a.asname is None
                                              for a in small.names)
        for small in statement.body)
