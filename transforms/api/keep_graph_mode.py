"""TFM105: keep graph mode for code that still needs it.

After renaming, graph-only APIs (`tf.compat.v1.placeholder`, `Session`, queue runners, ...) raise
under TF2's default eager execution; that is exactly where `tf_upgrade_v2`'s output fails. So does a
TF1 test's `self.test_session()`: TF1 ran every `tf.test.TestCase` test in graph mode, TF2 runs them
eagerly. When a file uses one, imports tensorflow at module level and never disables v2 behaviour
itself, this inserts `tf.compat.v1.disable_v2_behavior()` right after its imports. A file that builds
its graph code inside `tf.compat.v1.wrap_function` (TFM203) runs eagerly and is left alone. Runs after
the renames.
"""
from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transforms.api._tf_spelling import TF_MODULE, direct_tf_name
from transforms.base import TFTransform
from transforms.common.syntax import scan

GRAPH_ONLY = frozenset({
    "tf.placeholder", "tf.sparse_placeholder", "tf.Session", "tf.InteractiveSession",
    "tf.data.make_initializable_iterator", "tf.summary.FileWriter", "tf.summary.merge",
    "tf.summary.merge_all", "tf.train.start_queue_runners", "tf.train.MonitoredSession",
    "tf.train.MonitoredTrainingSession", "tf.train.SingularMonitoredSession",
})
DISABLERS = frozenset({"tf.disable_v2_behavior", "tf.disable_eager_execution"})
# Graph code wrapped into a TF2 function graph (TFM203) builds there, under eager execution.
GRAPH_WRAPPERS = frozenset({"tf.wrap_function"})
GRAPH_TEST_SESSION = "TestCase.test_session"  # `self.test_session()`, TF1 tests' graph-mode session


def _tensorflow_imports(statement: cst.CSTNode) -> list[cst.ImportAlias]:
    """`import tensorflow[.compat.v1] [as x]` aliases directly in a top-level statement, or in
    the blocks of a top-level try/if (the `try: import ... except ImportError:` idiom)."""
    found: list[cst.ImportAlias] = []

    class Collector(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Import(self, node: cst.Import) -> None:
            found.extend(a for a in node.names
                         if get_full_name_for_node(a.name) in (TF_MODULE, TF_MODULE + ".compat.v1"))

    scan(statement, Collector())
    return found


def _disable_call(alias: cst.ImportAlias) -> cst.SimpleStatementLine:
    module = get_full_name_for_node(alias.name)
    bound = alias.asname.name.value if alias.asname else module
    path = "disable_v2_behavior" if module.endswith("compat.v1") else "compat.v1.disable_v2_behavior"
    return cst.parse_statement(f"{bound}.{path}()\n")


def _is_self_test_session(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Attribute) and node.attr.value == "test_session"
            and isinstance(node.value, cst.Name) and node.value.value == "self")


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


class KeepGraphMode(TFTransform):
    CODE = "TFM105"
    DESCRIPTION = "Insert tf.compat.v1.disable_v2_behavior() where graph-only APIs remain"
    PHASE = 58
    TRIGGERS = ("placeholder", "Session", "make_initializable_iterator", "FileWriter", "merge",
                "start_queue_runners", "test_session")

    def visit_Module(self, node: cst.Module) -> bool:
        self._first_use: tuple[cst.CSTNode, str] | None = None
        self._disabled = False
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        if direct_tf_name(self, node.func) in DISABLERS | GRAPH_WRAPPERS:
            self._disabled = True
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._note_use(node)
        return True

    def visit_Name(self, node: cst.Name) -> bool:
        self._note_use(node)
        return True

    def _note_use(self, node: cst.BaseExpression) -> None:
        canonical = direct_tf_name(self, node)
        if canonical not in GRAPH_ONLY and _is_self_test_session(node):
            canonical = GRAPH_TEST_SESSION
        if self._first_use is None and canonical in GRAPH_ONLY | {GRAPH_TEST_SESSION}:
            self._first_use = (node, canonical)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self._first_use is None or self._disabled:
            return updated
        use, canonical = self._first_use
        body = list(updated.body)
        for index, statement in enumerate(body):
            aliases = _tensorflow_imports(statement)
            if aliases:
                break
        else:
            self.report(use, f"{canonical} only works in graph mode, which TF2 does not use by default; "
                        "call tf.compat.v1.disable_v2_behavior() at start-up", fixed=False,
                        severity="warning")
            return updated
        position = index + 1
        while position < len(body) and _is_import_line(body[position]):
            position += 1
        call = _disable_call(aliases[0])
        body.insert(position, call)
        self.report(use, f"{canonical} only works in graph mode and TF2 executes eagerly by default: "
                    f"inserted {cst.Module([]).code_for_node(call).strip()} after the imports",
                    fixed=True, severity="warning")
        return updated.with_changes(body=body)
