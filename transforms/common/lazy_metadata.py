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

Scopes and expression contexts are libcst's own visitors, run without the two whole-module walks
that libcst's batched resolution adds around them (see `_run_directly`).

What a lookup returns is what libcst's providers return, for every node of the wrapped module: names
for a node that has a scope, the caller's default (our callers all pass `set()`) for one that has
none.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from functools import lru_cache
from types import MappingProxyType

import libcst as cst
from libcst.metadata import (ExpressionContextProvider, MetadataWrapper, ParentNodeProvider, PositionProvider,
                             QualifiedNameProvider, ScopeProvider)
from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor

from transforms.common.import_names import NO_SCOPE, ImportNames
from transforms.common.positions import positions_of
from transforms.common.syntax import children, module_code

_MISSING = object()


class _Deferred(Mapping):
    """A provider's whole mapping, computed on first use."""

    def __init__(self, compute: Callable[[], Mapping]) -> None:
        self._compute: Callable[[], Mapping] | None = compute
        self._mapping: Mapping | None = None

    @property
    def resolved(self) -> bool:
        return self._mapping is not None

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
    """QualifiedNameProvider's mapping, per node on demand: from the module's imports where that
    gives libcst's answer (transforms/common/import_names.py), else from the module's scopes."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self._wrapper = wrapper
        self._scopes: Mapping | None = None
        self._names: dict[cst.CSTNode, Collection] = {}
        self._imports: ImportNames | None = None

    @property
    def imports(self) -> ImportNames:
        if self._imports is None:
            module = self._wrapper.module
            self._imports = ImportNames(module, module_code(module), self._wrapper.resolve(ParentNodeProvider))
        return self._imports

    def _scope_of(self, node: cst.CSTNode) -> object:
        if self._scopes is None:
            self._scopes = self._wrapper.resolve(ScopeProvider)
        return self._scopes.get(node, _MISSING)

    def get(self, node: cst.CSTNode, default: object = None) -> object:
        names = self._names.get(node)
        if names is not None:
            return names
        names = self.imports.qualified_names(node)
        if names is NO_SCOPE:
            return default
        if names is not None:
            self._names[node] = names
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


class _ScopeVisitor(ScopeVisitor):
    """libcst's ScopeVisitor, but its on_leave, which tests every node against 18 abstract node
    classes (a sixth of the scope walk's time), asks once per node type."""

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.provider.set_metadata(original_node, self.scope)
        if _is_assignment_like(type(original_node)):
            self.scope._assignment_count += 1
        super(ScopeVisitor, self).on_leave(original_node)


@lru_cache(maxsize=None)
def _is_assignment_like(node_type: type) -> bool:
    return issubclass(node_type, _ASSIGNMENT_LIKE_NODES)


def _visit_scopes(provider: ScopeProvider, module: cst.Module) -> None:
    """ScopeProvider.visit_Module, with the visitor above."""
    visitor = _ScopeVisitor(provider)
    module.visit(visitor)
    visitor.infer_accesses()


#: Providers whose only hook is visit_Module, which runs a visitor of their own over the module.
_MODULE_VISITS: dict[type, Callable[[object, cst.Module], None]] = {
    ExpressionContextProvider: ExpressionContextProvider.visit_Module,
    ScopeProvider: _visit_scopes,
}


def _run_directly(wrapper: MetadataWrapper, provider_class: type) -> Mapping:
    """A provider of _MODULE_VISITS resolved without libcst's batched visit. That visit walks the
    whole module once more, offering every node to the providers' hooks (they have none beyond
    visit_Module) after collecting them with `inspect.getmembers`, and then copies the result."""
    provider = provider_class()
    with provider.resolve(wrapper):
        _MODULE_VISITS[provider_class](provider, wrapper.module)
    return MappingProxyType(provider._computed)


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
            if provider in self._metadata:
                continue
            if provider in _ON_DEMAND:
                self._metadata[provider] = _ON_DEMAND[provider](self)
            elif provider in _MODULE_VISITS:
                self._metadata[provider] = _Deferred(lambda provider=provider: _run_directly(self, provider))
        eager = [provider for provider in providers if provider not in self._metadata]
        if eager:
            super().resolve_many(eager)
        return {provider: self._metadata[provider] for provider in providers}


def positions_known(wrapper: MetadataWrapper, nodes: Collection[cst.CSTNode]) -> Mapping:
    """PositionProvider's ranges for `nodes`: the wrapper's mapping when it has one already, else
    computed for these nodes alone (transforms/common/positions.py)."""
    computed = wrapper._metadata.get(PositionProvider)
    if isinstance(computed, _Deferred) and not computed.resolved:
        return positions_of(wrapper.module, nodes)
    return computed if computed is not None else wrapper.resolve(PositionProvider)


def may_name_tensorflow(dependent, node: cst.CSTNode) -> bool:
    """For a transform or visitor with qualified names resolved: False only when `node` has no
    TensorFlow name, directly or through a module-level alias (its lookup can be skipped)."""
    names = dependent.metadata.get(QualifiedNameProvider)
    return names.imports.may_name_tensorflow(node) if isinstance(names, _QualifiedNames) else True
