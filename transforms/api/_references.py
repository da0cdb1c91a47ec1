"""A base for transforms that rewrite references to TensorFlow symbols (`tf.a.b`, `nn.relu`, `ph`).

Each dotted reference outside import statements is offered to `claim()` outermost first; once a
node is claimed, the names inside it (`tf.layers` inside `tf.layers.dense`) are not offered, so one
reference is rewritten and reported once. `replace()` builds the new node when the tree is rebuilt.
References are matched by the name they spell themselves (`direct_tf_name`), not through local
aliases: rewriting `relu = tf.nn.relu` itself is enough. `from tensorflow import x` imports left
without uses are dropped at the end.
"""
from __future__ import annotations

from typing import ClassVar

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, ScopeProvider

from transforms.api._prune_imports import fully_rewritten_imports, remove_imports
from transforms.api._tf_spelling import Spelling, direct_tf_name, qualified_names
from transforms.common.imports import add_imports
from transforms.common.syntax import leftmost_name, replaced_on_paths
from transforms.base import FINDINGS_KEY, IMPORTS_KEY, TFTransform


def chain_nodes(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`node` and the attribute values inside it: tf.a.b -> [tf.a.b, tf.a, tf]."""
    nodes = [node]
    while isinstance(node, cst.Attribute):
        node = node.value
        nodes.append(node)
    return nodes


class ReferenceTransform(TFTransform):
    """Abstract: subclasses implement claim() and replace()."""

    METADATA_DEPENDENCIES = TFTransform.METADATA_DEPENDENCIES + (ScopeProvider,)

    #: Whether the leave_ hooks, leave_Module aside, only put replace()'s expressions in place of
    #: claimed references: then no transformer pass runs, the walk's claims are applied on their paths.
    REPLACES_CLAIMS_ONLY: ClassVar[bool] = False

    _dry_run = False  # in the walk that decides whether the pass runs

    def transform_wrapper(self, wrapper: MetadataWrapper) -> cst.Module:
        """Most runs rewrite nothing (the stability check's second run, code already on TF2 names).
        So the hooks first run on a walk that rebuilds nothing: the visit_ hooks, and the leave_ hooks
        that dry_leave() stands for. The transformer pass runs only when they decided on a rewrite,
        from the start (visit_Module resets the state; the first walk's findings are dropped)."""
        findings = self.context.scratch[FINDINGS_KEY]
        reported = len(findings)
        if not self._decides_a_rewrite(wrapper):
            self._place_findings(wrapper)
            return wrapper.module
        if self.REPLACES_CLAIMS_ONLY:
            return self._replace_claims(wrapper)
        del findings[reported:]
        return super().transform_wrapper(wrapper)

    def _replace_claims(self, wrapper: MetadataWrapper) -> cst.Module:
        """What the transformer pass would return, from the walk's claims and findings: the claimed
        references replaced (rebuilding only the nodes above them), then leave_Module."""
        module = wrapper.module
        replacements = {}
        for node in self._claimed.values():
            replacement = self.replace(node, node)
            if replacement is not None:
                replacements[node] = replacement
                self.rewritten(node)
        with self.resolve(wrapper):
            replaced = replaced_on_paths(module, replacements, wrapper.resolve(ParentNodeProvider))
            result = self.leave_Module(module, replaced)
        self._place_findings(wrapper)
        requests = self.context.scratch.pop(IMPORTS_KEY)
        return add_imports(result, requests) if requests else result

    def _decides_a_rewrite(self, wrapper: MetadataWrapper) -> bool:
        module = wrapper.module
        self._start_pass(wrapper, pruned=True)
        self._rewrite_seen = False
        try:
            with self.resolve(wrapper):
                self._dry_run = True
                try:
                    self.visit_only(module)
                finally:
                    self._dry_run = False
                if self._rewrite_seen or self.has_rewrites():
                    return True
                left = self.leave_Module(module, module)  # its findings, for a module kept as it is
        finally:
            self._subtrees = None
        return left is not module or bool(self.context.scratch.pop(IMPORTS_KEY))

    def _visit_only(self, node: cst.CSTNode) -> None:
        super()._visit_only(node)
        if self._dry_run and not self._rewrite_seen:
            self._rewrite_seen = self.dry_leave(node)

    def has_rewrites(self) -> bool:
        """After the visit_ hooks: whether a leave_ hook other than leave_Module will change a node."""
        return bool(self._claimed)

    def dry_leave(self, node: cst.CSTNode) -> bool:
        """In the walk that decides whether the pass runs, called where the pass would leave `node`
        (children first): whether its leave_ hook changes the node unless a node inside it changed.
        A transform whose leave_ hooks report findings reports them here, in the pass's order (they
        are dropped if the pass runs). The default: leave_ hooks act only on claimed references."""
        return False

    def visit_Module(self, node: cst.Module) -> bool:
        self.spelling = Spelling(self)
        self._covered: set[int] = set()
        self._claimed: dict[int, cst.BaseExpression] = {}
        self._rewritten_roots: set[int] = set()
        return True

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return remove_imports(updated, fully_rewritten_imports(self, original, self._rewritten_roots))

    def rewritten(self, original: cst.BaseExpression) -> None:
        """Note that `original` is being replaced (its import may become unused)."""
        root = leftmost_name(original)
        if root is not None:
            self._rewritten_roots.add(id(root))

    def cover(self, node: cst.BaseExpression) -> None:
        """Keep `node` and the names inside it from being offered to claim()."""
        self._covered.update(id(n) for n in chain_nodes(node))

    def raw_names(self, node: cst.CSTNode) -> set[str]:
        return qualified_names(self, node)

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._offer(node)
        return True

    def visit_Name(self, node: cst.Name) -> bool:
        self._offer(node)
        return True

    def _offer(self, node: cst.BaseExpression) -> None:
        if id(node) in self._covered:
            return
        canonical = direct_tf_name(self, node)
        if canonical and self.claim(node, canonical):
            self._claimed[id(node)] = node
            self.cover(node)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return self._replace(original, updated)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._replace(original, updated)

    def _replace(self, original, updated):
        if id(original) not in self._claimed:
            return updated
        replacement = self.replace(original, updated)
        if replacement is None:
            return updated
        self.rewritten(original)
        return replacement

    # -- for subclasses ----------------------------------------------------------------------------

    def claim(self, node: cst.BaseExpression, canonical: str) -> bool:
        """Decide about a reference (and report); True if replace() should rewrite it."""
        raise NotImplementedError

    def replace(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression | None:
        raise NotImplementedError
