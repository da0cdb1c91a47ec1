"""TFM504: `import tensorflow.contrib.slim as slim` -> `import tf_slim as slim` where every use of
the name is a part of tf-slim that still runs on the TensorFlow we target.

tf-slim is tf.contrib.slim's code, moved out of TensorFlow; tf-slim 1.1 no longer runs everywhere
on TensorFlow 2.21 (its batch_norm and layers reach for moved internals), so the import is only
switched when each `slim.<part>` the file uses is in RUNS_ON_TF2, parts checked by
tests/test_contrib_emulations.py on the installed TensorFlow. Otherwise TFM101 reports the import.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider, ScopeProvider

from transforms.base import TFTransform
from transforms.common.qualnames import dotted_name
from transforms.common.syntax import walk

SLIM_MODULE = "tensorflow.contrib.slim"
# The tf-slim parts that run unchanged on TensorFlow 2.21 (pure Python over the v1 API).
RUNS_ON_TF2 = frozenset({"model_analyzer"})


class ImportTfSlim(TFTransform):
    CODE = "TFM504"
    DESCRIPTION = "import tensorflow.contrib.slim -> import tf_slim, where every use is a tf-slim part that runs on TF2"
    SAFETY = "safe"
    PHASE = 46
    TRIGGERS = ("slim",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        scope = self.get_metadata(ScopeProvider, node, None)
        parts = _attribute_parts(node)
        self.switched: set[int] = set()
        for assignment in scope.assignments if scope is not None else ():
            import_node = getattr(assignment, "node", None)
            uses = [parts.get(id(access.node)) for access in assignment.references]
            if isinstance(import_node, cst.Import) and _imports_slim_as(import_node, assignment.name) \
                    and uses and all(part in RUNS_ON_TF2 for part in uses):
                self.switched.add(id(import_node))

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        if id(original) not in self.switched:
            return updated
        self.report(original, f"{SLIM_MODULE} -> tf_slim (pip install tf-slim): the file uses only "
                    f"{', '.join(sorted(RUNS_ON_TF2))}, which tf-slim runs on TensorFlow 2", fixed=True,
                    severity="warning")
        names = [alias.with_changes(name=cst.Name("tf_slim")) if dotted_name(alias.name) == SLIM_MODULE
                 else alias for alias in updated.names]
        return updated.with_changes(names=names)


def _imports_slim_as(node: cst.Import, name: str) -> bool:
    return any(dotted_name(alias.name) == SLIM_MODULE and alias.asname is not None
               and isinstance(alias.asname.name, cst.Name) and alias.asname.name.value == name
               for alias in node.names)


def _attribute_parts(module: cst.Module) -> dict[int, str]:
    """id of each name `x` used as `x.part` -> `part`."""
    return {id(node.value): node.attr.value for node in walk(module)
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)}
