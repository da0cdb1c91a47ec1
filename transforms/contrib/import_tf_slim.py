"""TFM504: `import tensorflow.contrib.slim as slim` (or `slim = tf.contrib.slim`, or
`from tensorflow.contrib import slim`) -> `import tf_slim as slim` where every use of the name is a
part of tf-slim that still runs on the TensorFlow we target.

tf-slim is tf.contrib.slim's code, moved out of TensorFlow. tf-slim 1.1 (the last release) mostly
runs on TensorFlow 2.21 in graph mode, but not everywhere: its batch_norm reaches for internals and a
tf-keras module path that later releases moved. So the name is only switched when each `slim.<part>`
the file uses is in RUNS_ON_TF2, parts each exercised on plain TF 2 by
tests/test_contrib_emulations.py. A part only listed in an `arg_scope([...])` is not used (the scope
names the functions it applies to; it calls none). Otherwise TFM101 reports the import.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider, ScopeProvider

from transforms.base import TFTransform
from transforms.common.qualnames import dotted_name
from transforms.common.syntax import arg_scope_listed, walk

SLIM_MODULE = "tensorflow.contrib.slim"
# The tf-slim parts that run unchanged on TensorFlow 2.21 in graph mode (pure Python over the v1 API).
RUNS_ON_TF2 = frozenset({
    "model_analyzer", "arg_scope", "add_arg_scope", "utils",
    "conv2d", "convolution", "convolution2d", "conv2d_transpose", "separable_conv2d",
    "separable_convolution2d", "max_pool2d", "avg_pool2d", "fully_connected", "dropout", "flatten",
    "softmax", "repeat", "stack", "one_hot_encoding", "unit_norm", "bias_add", "layer_norm",
    "relu", "relu6", "linear", "l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "initializers",
    "init_ops", "xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer",
    "variable", "model_variable", "get_variables", "get_model_variables", "get_variables_to_restore",
    "get_or_create_global_step",
})


class ImportTfSlim(TFTransform):
    CODE = "TFM504"
    DESCRIPTION = "import tensorflow.contrib.slim -> import tf_slim, where every use is a tf-slim part that runs on TF2"
    SAFETY = "safe"
    PHASE = 47  # after TFM505 replaced the batch_norm uses it can
    TRIGGERS = ("slim",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        scope = self.get_metadata(ScopeProvider, node, None)
        parts = _attribute_parts(node)
        scoped = {id(listed.value) for listed in arg_scope_listed(node)}
        self._assign_of = _module_assignments(node)
        self.switched: set[int] = set()
        for assignment in scope.assignments if scope is not None else ():
            binder = self._slim_binder(getattr(assignment, "node", None), assignment.name)
            uses = [parts.get(id(access.node)) for access in assignment.references
                    if id(access.node) not in scoped]
            if binder is not None and all(part in RUNS_ON_TF2 for part in uses):
                self.switched.add(id(binder))

    def _slim_binder(self, node: cst.CSTNode | None, name: str) -> cst.CSTNode | None:
        """The statement part that binds `name` to tf.contrib.slim, if `node` is one."""
        if isinstance(node, cst.Import) and _imports_slim_as(node, name):
            return node
        if isinstance(node, cst.ImportFrom) and _imports_slim_from_contrib(node, name):
            return node
        assign = self._assign_of.get(id(node))
        if assign is not None and dotted_name(assign.targets[0].target) == name:
            qualified = self.get_metadata(QualifiedNameProvider, assign.value, set())
            if any(item.name == SLIM_MODULE for item in qualified):
                return assign
        return None

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        if id(original) not in self.switched:
            return updated
        self._report_switch(original)
        names = [alias.with_changes(name=cst.Name("tf_slim")) if dotted_name(alias.name) == SLIM_MODULE
                 else alias for alias in updated.names]
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.BaseSmallStatement:
        if id(original) not in self.switched:
            return updated
        self._report_switch(original)
        return _import_tf_slim_as("slim")

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.BaseSmallStatement:
        if id(original) not in self.switched:
            return updated
        self._report_switch(original)
        return _import_tf_slim_as(dotted_name(original.targets[0].target))

    def _report_switch(self, node: cst.CSTNode) -> None:
        self.report(node, f"{SLIM_MODULE} -> tf_slim (pip install tf-slim): every part of it the file uses "
                    "runs on TensorFlow 2 in graph mode", fixed=True, severity="warning")


def _import_tf_slim_as(name: str) -> cst.Import:
    return cst.Import(names=[cst.ImportAlias(name=cst.Name("tf_slim"), asname=cst.AsName(name=cst.Name(name)))])


def _imports_slim_from_contrib(node: cst.ImportFrom, name: str) -> bool:
    """`from tensorflow.contrib import slim` (one name, not renamed)."""
    return (dotted_name(node.module) == "tensorflow.contrib" and not isinstance(node.names, cst.ImportStar)
            and len(node.names) == 1 and node.names[0].asname is None
            and dotted_name(node.names[0].name) == "slim" == name)


def _module_assignments(module: cst.Module) -> dict[int, cst.Assign]:
    """id of the target name of each module-level `name = value` -> that assignment."""
    found = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name):
                    found[id(small.targets[0].target)] = small
    return found


def _imports_slim_as(node: cst.Import, name: str) -> bool:
    return any(dotted_name(alias.name) == SLIM_MODULE and alias.asname is not None
               and isinstance(alias.asname.name, cst.Name) and alias.asname.name.value == name
               for alias in node.names)


def _attribute_parts(module: cst.Module) -> dict[int, str]:
    """id of each name `x` used as `x.part` -> `part`."""
    return {id(node.value): node.attr.value for node in walk(module)
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)}
