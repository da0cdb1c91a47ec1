"""Spelling a canonical `tf.` name in the file being migrated.

A rewritten reference reuses its own root when that root is the `tensorflow` module (`tf.log` ->
`tf.math.log`, `tensorflow.log` -> `tensorflow.math.log`). Otherwise (`from tensorflow import nn`,
`import tensorflow.compat.v1 as tf`) it goes through a module-level `import tensorflow as X` that is
visible at the reference, or through one this pass adds: `import tensorflow as tf` when no scope of
the file binds `tf`, else `import tensorflow`, so an existing different binding is never shadowed.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from transforms.common.lazy_metadata import may_name_tensorflow
from transforms.common.qualnames import canonical_tf_name
from transforms.common.syntax import leftmost_name

TF_MODULE = "tensorflow"


def raw_name(canonical: str) -> str:
    """`tf.compat.v1.x` -> `tensorflow.compat.v1.x`: the qualified name a reference to it has."""
    return TF_MODULE + canonical[len("tf"):]


def qualified_names(transform, node: cst.CSTNode) -> set[str]:
    try:
        return {q.name for q in transform.get_metadata(QualifiedNameProvider, node, set())}
    except KeyError:
        return set()


def direct_tf_name(transform, node: cst.CSTNode) -> str | None:
    """The canonical name `node` spells itself, not through a local alias such as `relu = tf.nn.relu`
    (rewriting the alias's definition is enough; its uses follow). Only plain dotted names count:
    libcst names `tf.Session().run` "tensorflow.Session.run", which is no symbol."""
    if not isinstance(node, (cst.Name, cst.Attribute)) or leftmost_name(node) is None \
            or not may_name_tensorflow(transform, node):
        return None
    names = {canonical_tf_name(name) for name in qualified_names(transform, node)}
    names.discard(None)
    return next(iter(names)) if len(names) == 1 else None


class Spelling:
    """Builds expressions for canonical names; one instance per transform pass over a module."""

    def __init__(self, transform) -> None:
        self.transform = transform
        self._added_root: str | None = None
        self._aliases: list[str] | None = None  # the module's tensorflow aliases, found once per pass

    def expression(self, at: cst.CSTNode, canonical: str) -> cst.BaseExpression | None:
        """An expression for `canonical` valid where `at` is, or None if no spelling is safe."""
        root = self.root_at(at)
        if root is None:
            return None
        return cst.parse_expression(root + canonical[len("tf"):])

    def root_at(self, at: cst.CSTNode) -> str | None:
        own = leftmost_name(at) if isinstance(at, cst.BaseExpression) else None
        if own is not None and qualified_names(self.transform, own) == {TF_MODULE}:
            return own.value
        scope = self._scope(at)
        if scope is None:
            return None
        for candidate in self._module_aliases(scope.globals):
            if self._reaches_tensorflow(scope, candidate):
                return candidate
        return self._add_import()

    def _scope(self, node: cst.CSTNode):
        try:
            return self.transform.get_metadata(ScopeProvider, node, None)
        except KeyError:
            return None

    @staticmethod
    def _reaches_tensorflow(scope, name: str) -> bool:
        return name in scope and {q.name for q in scope.get_qualified_names_for(name)} == {TF_MODULE}

    def _module_aliases(self, global_scope) -> list[str]:
        """Names bound at module level to the tensorflow module, `tf` first (one module per pass, so
        they are found once: every renamed reference asks)."""
        if self._aliases is None:
            names = [name for name in ("tf", TF_MODULE) if self._reaches_tensorflow(global_scope, name)]
            others = sorted(a.name for a in global_scope.assignments
                            if a.name not in names and self._reaches_tensorflow(global_scope, a.name))
            self._aliases = names + others
        return self._aliases

    def _add_import(self) -> str | None:
        if self._added_root:
            return self._added_root
        scopes = self._all_scopes()
        for root, asname in (("tf", "tf"), (TF_MODULE, None)):
            if not any(root in scope.assignments for scope in scopes):
                self.transform.add_import(TF_MODULE, asname=asname)
                self._added_root = root
                return root
        return None

    def _all_scopes(self) -> list:
        mapping = self.transform.metadata.get(ScopeProvider, {})
        unique = {id(scope): scope for scope in mapping.values() if scope is not None}
        return list(unique.values())
