"""A MetadataWrapper that computes qualified names, positions and parents only when a transform asks.

libcst's `QualifiedNameProvider` visits every node of the module to store, per node, a lazy value
that asks the node's scope for its qualified names; its `PositionProvider` generates the whole module's
code once more to record every node's position. Together they are about a third of what resolving a
transform's metadata costs, and the runner resolves it again after every transform that changes the
code. Here the first is a mapping that asks the scope only for the nodes looked up (the same
`scope.get_qualified_names_for(node)` call, remembered per node), and the second is libcst's own
computation, run on the first lookup (a transform that reports nothing never pays for it). Parents
are computed on first lookup too, from the nodes' fields (libcst's provider rebuilds every node to
list its children).

What a lookup returns is what libcst's providers return, for every node of the wrapped module: names
for a node that has a scope, the caller's default (our callers all pass `set()`) for one that has
none. Scopes and expression contexts are libcst's providers, unchanged.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider

from transforms.common.syntax import children

_MISSING = object()


class _Deferred(Mapping):
    """A provider's whole mapping, computed on first use."""

    def __init__(self, compute: Callable[[], Mapping]) -> None:
        self._compute: Callable[[], Mapping] | None = compute
        self._mapping: Mapping | None = None

    def _resolved(self) -> Mapping:
        if self._mapping is None:
            self._mapping = self._compute()
            self._compute = None
        return self._mapping

    def __getitem__(self, node: cst.CSTNode) -> object:
        return self._resolved()[node]

    def get(self, node: cst.CSTNode, default: object = None) -> object:
        return self._resolved().get(node, default)

    def __contains__(self, node: object) -> bool:
        return node in self._resolved()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())


class _QualifiedNames(Mapping):
    """QualifiedNameProvider's mapping, per node on demand from the module's scopes."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self._wrapper = wrapper
        self._scopes: Mapping | None = None
        self._names: dict[cst.CSTNode, Collection] = {}

    def _scope_of(self, node: cst.CSTNode) -> object:
        if self._scopes is None:
            self._scopes = self._wrapper.resolve(ScopeProvider)
        return self._scopes.get(node, _MISSING)

    def get(self, node: cst.CSTNode, default: object = None) -> object:
        names = self._names.get(node)
        if names is not None:
            return names
        scope = self._scope_of(node)
        if scope is _MISSING or scope is None:
            return default
        names = self._names[node] = scope.get_qualified_names_for(node)
        return names

    def __getitem__(self, node: cst.CSTNode) -> object:
        names = self.get(node, _MISSING)
        if names is _MISSING:
            raise KeyError(node)
        return names

    def __contains__(self, node: object) -> bool:
        return self.get(node, _MISSING) is not _MISSING

    def __iter__(self) -> Iterator[cst.CSTNode]:
        if self._scopes is None:
            self._scopes = self._wrapper.resolve(ScopeProvider)
        return (node for node, scope in self._scopes.items() if scope is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _positions(wrapper: MetadataWrapper) -> Mapping:
    return _Deferred(lambda: PositionProvider()._gen(wrapper))


def _qualified_names(wrapper: MetadataWrapper) -> Mapping:
    return _QualifiedNames(wrapper)


def _parents(wrapper: MetadataWrapper) -> Mapping:
    return _Deferred(lambda: _parent_map(wrapper.module))


def _parent_map(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """ParentNodeProvider's mapping (child -> parent, for every node but the module). libcst's asks
    every node for `node.children`, which rebuilds it; here they are read from the fields."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack = [module]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[child] = node
            stack.append(child)
    return parents


_ON_DEMAND: dict[type, Callable[[MetadataWrapper], Mapping]] = {
    QualifiedNameProvider: _qualified_names,
    PositionProvider: _positions,
    ParentNodeProvider: _parents,
}


class LazyMetadataWrapper(MetadataWrapper):
    """A MetadataWrapper (same constructor) whose qualified names and positions are on demand."""

    __slots__ = ()

    def resolve_many(self, providers: Collection[type]) -> Mapping[type, Mapping]:
        for provider in providers:
            if provider in _ON_DEMAND and provider not in self._metadata:
                self._metadata[provider] = _ON_DEMAND[provider](self)
        eager = [provider for provider in providers if provider not in _ON_DEMAND]
        if eager:
            super().resolve_many(eager)
        return {provider: self._metadata[provider] for provider in providers}
