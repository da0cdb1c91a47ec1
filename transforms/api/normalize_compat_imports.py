"""TFM104: `import tensorflow.compat.v1 as tf` -> `import tensorflow as tf`.

Runs first (phase 5), so every later transform sees one import spelling and spells TF2 names
through a plain `tensorflow` alias; structural transforms that emit TF2 code under that alias then
mean TF2. On its own it keeps behaviour: each reference through the alias whose v1 meaning differs
in TF2 (per the API tables) is pinned to `tf.compat.v1.<name>`; later transforms upgrade those they
can (TFM101-TFM103 read `tf.compat.v1.x` and `tf.x` alike). `from tensorflow.compat import v1 as tf`
is normalised the same way.
"""
from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transforms.api._references import ReferenceTransform, chain_nodes
from transforms.api._tf_spelling import TF_MODULE, direct_tf_name
from transforms.common.tables import COMPAT_PREFIX, keyword_table, symbol_table
from transforms.common.syntax import code_names, scan

COMPAT_V1 = TF_MODULE + ".compat.v1"


def _reroot(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`tf.a.b` -> `tf.compat.v1.a.b` (the chain's root Name gains `.compat.v1`)."""
    if isinstance(expr, cst.Attribute):
        return expr.with_changes(value=_reroot(expr.value))
    return cst.Attribute(cst.Attribute(expr, cst.Name("compat")), cst.Name("v1"))


def _imports_v1_module(node: cst.ImportFrom) -> bool:
    """`from tensorflow.compat import v1 [as x]`, importing nothing else."""
    module = get_full_name_for_node(node.module) if node.module and not node.relative else ""
    return module == TF_MODULE + ".compat" and not isinstance(node.names, cst.ImportStar) \
        and [get_full_name_for_node(a.name) for a in node.names] == ["v1"]


def _compat_aliases(module: cst.Module) -> set[str]:
    """Names bound by the imports this transform rewrites."""
    found: set[str] = set()

    class Collector(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            found.update(a.asname.name.value for a in node.names if a.asname is not None
                         and isinstance(a.asname.name, cst.Name)
                         and get_full_name_for_node(a.name) == COMPAT_V1)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if _imports_v1_module(node):
                alias = node.names[0]
                found.add(alias.asname.name.value if alias.asname else "v1")

    scan(module, Collector())
    return found


class NormalizeCompatImports(ReferenceTransform):
    CODE = "TFM104"
    DESCRIPTION = "Import tensorflow instead of tensorflow.compat.v1, pinning TF1-only uses to tf.compat.v1"
    PHASE = 5
    TRIGGERS = ("compat",)  # both rewritten import spellings name tensorflow.compat

    @classmethod
    def applies_to(cls, code: str) -> bool:
        """Only code that imports tensorflow.compat.v1 has anything to rewrite: every reference the
        transform claims goes through a name such an import binds (as migrated code's many
        `tf.compat.v1.x` references, under a plain `import tensorflow as tf`, do not)."""
        if not super().applies_to(code):
            return False
        names = code_names(code)
        return names is None or COMPAT_V1 in names.imports

    def visit_Module(self, node: cst.Module) -> bool:
        self.renames = symbol_table().renames
        self.functions = keyword_table().functions
        # Pins that TFM102/TFM103 may still move to TF2 are not reported as final.
        self.upgradable = set(self.functions) | set(keyword_table().casts)
        self._imports: list[cst.CSTNode] = []
        self._pins: dict[int, str] = {}
        self._aliases = _compat_aliases(node)
        return super().visit_Module(node)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        names = []
        for alias in updated.names:
            if get_full_name_for_node(alias.name) == COMPAT_V1 and alias.asname is not None:
                alias = alias.with_changes(name=cst.Name(TF_MODULE))
                self._imports.append(original)
            names.append(alias)
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.BaseSmallStatement:
        if not _imports_v1_module(updated):
            return updated
        self._imports.append(original)
        alias = updated.names[0]
        bound = alias.asname.name if alias.asname else cst.Name("v1")
        return cst.Import([cst.ImportAlias(cst.Name(TF_MODULE), asname=cst.AsName(bound))],
                          semicolon=updated.semicolon)

    def claim(self, node: cst.BaseExpression, canonical: str) -> bool:
        root = chain_nodes(node)[-1]
        if not (isinstance(root, cst.Name) and root.value in self._aliases
                and COMPAT_V1 in self.raw_names(root)):
            return False
        differing = self._differing_part(node)
        if differing is None:
            return True
        self._pins[id(node)] = differing
        target = self.renames.get(differing, "")
        if target.startswith(COMPAT_PREFIX) and differing not in self.upgradable:
            self.report(node, f"{differing} has no TF2 equivalent; kept on {target}", fixed=True,
                        severity="warning")
        return True

    def _differing_part(self, node: cst.BaseExpression) -> str | None:
        """The most specific name in the reference whose TF2 meaning differs (the bare module
        counts: `f(tf)` hands over the whole v1 API), or None."""
        parts = chain_nodes(node)
        if len(parts) == 1:
            return "tf"
        for part in parts[:-1]:
            name = direct_tf_name(self, part)
            if name in self.renames or name in self.functions:
                return name
        return None

    def replace(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression | None:
        return _reroot(updated) if id(original) in self._pins else None

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        for node in self._imports[:1]:
            self.report(node, f"tensorflow.compat.v1 imported as tensorflow; {len(self._pins)} reference(s) "
                        "with a different TF2 meaning pinned to tf.compat.v1", fixed=True)
        return super().leave_Module(original, updated)
