"""TFM108: NumPy aliases that NumPy 1.24 / 2.0 removed -> what they always meant.

TF1 code used `np.float`, `np.int`, `np.bool`, `np.object`... freely; they were the Python builtins
under another name (`np.float is float` on NumPy 1.x), and on the NumPy that TensorFlow 2.21 needs
they raise AttributeError. The builtin is the same object, so the rewrite changes no value. Names are
matched by qualified name (`numpy.float` however NumPy is imported).
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.base import TFTransform
from transforms.common.syntax import code_names

# numpy.<alias> -> the object it was: builtins, and the NumPy scalar types NumPy 2 renamed.
REMOVED_ALIASES = {
    "float": "float", "int": "int", "bool": "bool", "object": "object", "str": "str",
    "complex": "complex", "long": "int", "unicode": "str",
    "float_": "float64", "complex_": "complex128", "cfloat": "complex128", "string_": "bytes_",
    "unicode_": "str_",
}
BUILTINS = frozenset({"float", "int", "bool", "object", "str", "complex"})


class ReplaceRemovedNumpyAliases(TFTransform):
    CODE = "TFM108"
    DESCRIPTION = "NumPy aliases removed in NumPy 1.24/2.0 (np.float, np.int, np.object...) -> the builtins they were"
    SAFETY = "safe"
    PHASE = 50
    TRIGGERS = ("numpy",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    @classmethod
    def applies_to(cls, code: str) -> bool:
        """Only an attribute is rewritten (`np.float`): code without one named like a removed alias
        has nothing to rewrite (`float(x)` and `tf.float32` are no such attribute)."""
        if not super().applies_to(code):
            return False
        names = code_names(code)
        return names is None or not names.attributes.isdisjoint(REMOVED_ALIASES)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        alias = self._removed_alias(original)
        if alias is None:
            return updated
        target = REMOVED_ALIASES[alias]
        if target in BUILTINS:
            replacement: cst.BaseExpression = cst.Name(target)
        else:
            replacement = updated.with_changes(attr=cst.Name(target))
        self.report(original, f"numpy.{alias} was removed from NumPy -> {cst.Module([]).code_for_node(replacement)}",
                    fixed=True)
        return replacement

    def _removed_alias(self, node: cst.Attribute) -> str | None:
        names = {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}
        if len(names) != 1:
            return None
        module, _, name = next(iter(names)).rpartition(".")
        return name if module == "numpy" and name in REMOVED_ALIASES else None
