"""TFM506: `tf.contrib.layers.<function>` -> `tf_slim.<function>`, for the functions whose code tf-slim
keeps and that run on the TensorFlow we target.

tf.contrib.layers exported contrib's layers, initializers and regularizers, and their code moved to
tf-slim unchanged: `tf.contrib.layers.l2_regularizer` is `tf_slim.l2_regularizer`. A reference to
one of those that tf-slim runs on TensorFlow 2 in graph mode (RUNS_ON_TF2, each exercised by
tests/test_contrib_emulations.py) becomes the tf-slim name, with `import tf_slim`; any other
tf.contrib.layers name is left to TFM101's finding. Functions with a core equivalent were already
replaced by TFM502, and TFM201 turned those of converted programs into Keras layers.

Only the spelling `tf.contrib.layers.<function>` is rewritten: through a `slim = tf.contrib.slim`
that TFM504 could not switch, a function stays contrib's with the rest of the file's slim (a contrib
arg_scope sets defaults for contrib's functions only), and so does a function listed in an arg_scope.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider, ScopeProvider

from transforms.base import TFTransform
from transforms.common.qualnames import dotted_name, tensorflow_alias
from transforms.common.syntax import arg_scope_listed
from transforms.contrib.import_tf_slim import RUNS_ON_TF2

CONTRIB_LAYERS = "tf.contrib.layers."
# What tf.contrib.layers exported itself (tf.contrib.framework's arg_scope, variables and global
# step are slim's through another module).
_EXPORTED = frozenset({
    "avg_pool2d", "bias_add", "conv2d", "conv2d_transpose", "convolution", "convolution2d", "dropout",
    "flatten", "fully_connected", "layer_norm", "linear", "max_pool2d", "one_hot_encoding", "relu",
    "relu6", "repeat", "separable_conv2d", "separable_convolution2d", "softmax", "stack", "unit_norm",
    "l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "xavier_initializer",
    "xavier_initializer_conv2d", "variance_scaling_initializer",
})
MOVED = _EXPORTED & RUNS_ON_TF2


class ContribLayersToTfSlim(TFTransform):
    CODE = "TFM506"
    DESCRIPTION = "tf.contrib.layers functions tf-slim keeps and runs on TF2 (l2_regularizer, flatten, ...) -> tf_slim"
    SAFETY = "safe"
    PHASE = 48  # after TFM201 and the contrib emulations, before the renames report what is left
    TRIGGERS = ("contrib",)
    IDENTIFIERS = MOVED

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.blocked = _binds_tf_slim_otherwise(node)
        self.tf = tensorflow_alias(node)
        self.scoped = {self.tf_name(listed) for listed in arg_scope_listed(node)}

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        name = self.tf_name(original)
        part = name[len(CONTRIB_LAYERS):] if name and name.startswith(CONTRIB_LAYERS) else None
        if part not in MOVED or dotted_name(original) != f"{self.tf}.contrib.layers.{part}" or name in self.scoped:
            return updated
        if self.blocked:
            self.report(original, f"{name} not replaced by tf_slim.{part}: the file uses the name 'tf_slim' "
                        "for something else", fixed=False, severity="warning")
            return updated
        self.add_import("tf_slim")
        self.report(original, f"{name} -> tf_slim.{part} (pip install tf-slim): the same function, moved out "
                    "of TensorFlow", fixed=True)
        return cst.Attribute(value=cst.Name("tf_slim"), attr=cst.Name(part))


def _binds_tf_slim_otherwise(module: cst.Module) -> bool:
    """Whether a module-level statement binds `tf_slim` to anything but the tf_slim module."""
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and any(dotted_name(t.target) == "tf_slim" for t in small.targets):
                return True
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                if any(_bound_name(alias) == "tf_slim" and not _imports_tf_slim(small, alias) for alias in small.names):
                    return True
    return False


def _bound_name(alias: cst.ImportAlias) -> str:
    return dotted_name(alias.asname.name) if alias.asname else dotted_name(alias.name)


def _imports_tf_slim(statement: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> bool:
    return isinstance(statement, cst.Import) and dotted_name(alias.name) == "tf_slim"
