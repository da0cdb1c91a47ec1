"""TFM101: rename TF1 symbols to their TF2 names, or to tf.compat.v1 where TF2 has none.

The table (transforms/data/symbols.json) comes from TensorFlow's own export metadata, so a rename
only ever swaps a name for another name of the same object, or keeps the v1 object through
tf.compat.v1. Functions whose TF2 namesake takes different arguments are not in the table: the
call-site transforms (TFM102/TFM103) handle them per call. tf.contrib is reported, except the names that
were core objects re-exported (tf.contrib.rnn's cells), which are renamed to where TF2 keeps them.
"""
from __future__ import annotations

import re

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transforms.common.contrib_homes import contrib_message, is_gone
from transforms.common.syntax import module_code
from transforms.api._prune_imports import fully_rewritten_imports, import_key, remove_imports
from transforms.api._references import ReferenceTransform, chain_nodes
from transforms.api._tf_spelling import TF_MODULE, direct_tf_name, raw_name
from transforms.common.tables import COMPAT_PREFIX, EAGER_EQUIVALENTS, names_a_table_symbol, passes_tf2_keyword, symbol_table

# EAGER_EQUIVALENTS are kept as they are in a file without sessions, such as one TFM201 wrote (they
# would otherwise be renamed to compat.v1 on the next run).
_GRAPH_MODE = re.compile(r"\b(Session|InteractiveSession|disable_v2_behavior|disable_eager_execution|Graph)\b")

LEGACY_KERAS_NOTE = ("needs legacy Keras (pip install tf-keras; set TF_USE_LEGACY_KERAS=1 before "
                     "importing TensorFlow); the structural rewrite to Keras layers was not applied")


class RenameSymbols(ReferenceTransform):
    CODE = "TFM101"
    DESCRIPTION = "Rename TF1 symbols to their TF2 names (tf.compat.v1 where TF2 has none); report tf.contrib"
    PHASE = 53
    REPLACES_CLAIMS_ONLY = True

    @classmethod
    def applies_to(cls, code: str) -> bool:
        return names_a_table_symbol(code)

    def visit_Module(self, node: cst.Module) -> bool:
        self.table = symbol_table()
        self._replacements: dict[int, cst.BaseExpression] = {}
        self._eager = not _GRAPH_MODE.search(module_code(node))
        self._from_imports: list[tuple[cst.ImportAlias, str]] = []
        return super().visit_Module(node)

    def visit_Call(self, node: cst.Call) -> bool:
        """`tf.summary.scalar("loss", x, step=s)` passes a keyword only TF2's function takes: it is
        TF2 code (perhaps written by an earlier transform) and keeps its name. A call of a name
        TensorFlow 1.0 renamed whose arguments changed with the name is left, and reported."""
        canonical = direct_tf_name(self, node.func)
        if passes_tf2_keyword(node, canonical):
            self.cover(node.func)
        problem = self.table.pre_1_0_call_problem(canonical or "", node)
        if problem is not None:
            self.cover(node.func)
            self.report(node, f"{canonical} is a TensorFlow 0.x name (renamed in TF 1.0, to "
                        f"{self.table.v2_name(canonical)} in TF2), but this call passes {problem}; "
                        "rename it and check its arguments by hand", fixed=False, severity="error")
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            self._report_contrib_import(alias, get_full_name_for_node(alias.name) or "")
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        """Reported when the module is left: an import of tf.contrib names whose every use is renamed
        (`from tensorflow.contrib import rnn` for `rnn.GRUCell`) is removed instead."""
        module = get_full_name_for_node(node.module) if node.module and not node.relative else ""
        if module and isinstance(node.names, (list, tuple)):
            for alias in node.names:
                self._from_imports.append((alias, module))
        return False

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        dead = fully_rewritten_imports(self, original, self._rewritten_roots)
        for alias, module in self._from_imports:
            if import_key(alias, module) not in dead:
                self._report_contrib_import(alias, f"{module}.{get_full_name_for_node(alias.name)}")
        return remove_imports(updated, dead)

    def has_rewrites(self) -> bool:
        """Claims that only report (tf.contrib, a name already right) or find no spelling rewrite nothing."""
        return bool(self._replacements)

    def _report_contrib_import(self, node: cst.CSTNode, imported: str) -> None:
        if imported == TF_MODULE or imported.startswith(TF_MODULE + "."):
            canonical = "tf" + imported[len(TF_MODULE):]
            if is_gone(canonical):
                self.report(node, contrib_message(canonical), fixed=False, severity="error")

    def claim(self, node: cst.BaseExpression, canonical: str) -> bool:
        target = self.table.v2_name(canonical)
        if target is None and is_gone(canonical):
            self._report_contrib_use(node, canonical)
            return True
        if target is None or (self._eager and canonical in EAGER_EQUIVALENTS):
            return False
        legacy = self.table.needs_legacy_keras(target)
        if raw_name(target) in self.raw_names(node):
            if legacy:
                self.report(node, f"{target} {LEGACY_KERAS_NOTE}", fixed=False, severity="warning")
            return True
        replacement = self.spelling.expression(node, target)
        if replacement is None:
            self.report(node, f"{canonical} should become {target}, but no name reaches the "
                        "tensorflow module here without shadowing another binding; left unchanged",
                        fixed=False, severity="warning")
            return True
        self._replacements[id(node)] = replacement
        self._report_rename(node, canonical, target, legacy)
        return True

    def _report_contrib_use(self, node: cst.BaseExpression, canonical: str) -> None:
        """Uses through a tensorflow alias (`tf.contrib.x`); names bound by a contrib import are
        covered by the import's finding."""
        root = chain_nodes(node)[-1]
        if self.raw_names(root) & {TF_MODULE, TF_MODULE + ".compat.v1"}:
            self.report(node, contrib_message(canonical), fixed=False, severity="error")

    def _report_rename(self, node, canonical: str, target: str, legacy: bool) -> None:
        pre_1_0 = self.table.pre_1_0.get(canonical)
        if pre_1_0 is not None:
            note = f"; {pre_1_0['note']}" if "note" in pre_1_0 else ""
            runs_on = "" if not target.startswith(COMPAT_PREFIX) else ", which TF2 keeps on tf.compat.v1"
            self.report(node, f"{canonical} (a TensorFlow 0.x name, renamed in TF 1.0) -> {target}{runs_on}{note}",
                        fixed=True, severity="warning" if note or runs_on else "info")
        elif not target.startswith(COMPAT_PREFIX):
            self.report(node, f"{canonical} -> {target}", fixed=True)
        elif legacy:
            self.report(node, f"{canonical} -> {target}, which {LEGACY_KERAS_NOTE}",
                        fixed=True, severity="warning")
        else:
            self.report(node, f"{canonical} has no TF2 equivalent; the code now runs on {target}",
                        fixed=True, severity="warning")

    def replace(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression | None:
        return self._replacements.get(id(original))
