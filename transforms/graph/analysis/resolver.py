"""Answers the graph analysis' questions about the source from the transform's libcst metadata:
what TF symbol a node names, a node's parent and line, which binding a name refers to, and which
block (the module, or a top-level function such as `main()`) builds the graph."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, ScopeProvider

from transforms.common.graph_symbols import Category, categorize
from transforms.common.qualnames import canonical_tf_name
from transforms.common.syntax import Refusal, walk
from transforms.common.tables import symbol_table


class GraphResolver:
    def __init__(self, transform, module: cst.Module) -> None:
        self.transform = transform
        self.module = module
        self.owner: cst.CSTNode = module
        self.block_scope = None
        self.session_targets: set[int] = set()  # the names the program's session is bound to

    def tf_name(self, node: cst.CSTNode) -> str | None:
        """The canonical TF name of `node`; a tf.contrib name that re-exported a core object
        (`tf.contrib.rnn.GRUCell`) is that object's core name, converted as the core one is."""
        name = self.transform.tf_name(node)
        core = symbol_table().contrib_reexports.get(name) if name else None
        return canonical_tf_name("tensorflow" + core[len("tf"):]) if core else name

    def is_builtin(self, node: cst.CSTNode, name: str) -> bool:
        """Whether `node` names Python's builtin `name`, not a binding of the program that shadows it."""
        return self.transform.qualified_names(node) == {f"builtins.{name}"}

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.transform.get_metadata(ParentNodeProvider, node, None)

    def line(self, node: cst.CSTNode) -> int:
        position = self.transform.get_metadata(PositionProvider, node, None)
        return position.start.line if position else 0

    def last_line(self, node: cst.CSTNode) -> int:
        position = self.transform.get_metadata(PositionProvider, node, None)
        return position.end.line if position else 0

    def first_refusal(self, refusals: list[Refusal]) -> Refusal | None:
        """The refusal at the earliest node in the source: a binding's references are a set, so the one
        found first varies from run to run."""
        def start(refusal: Refusal) -> tuple[int, int]:
            position = self.transform.get_metadata(PositionProvider, refusal.node, None)
            return (position.start.line, position.start.column) if position else (0, 0)
        return min(refusals, key=start, default=None)

    def scope(self, node: cst.CSTNode):
        return self.transform.get_metadata(ScopeProvider, node, None)

    def is_block_reference(self, node: cst.Name) -> bool:
        """Whether a name refers to a binding of the graph block (not a local of a nested function)."""
        scope = self.scope(node)
        while scope is not None and scope is not self.block_scope:
            if node.value in scope.assignments or scope.parent is scope:
                return False
            scope = scope.parent
        return scope is not None

    def is_session_name(self, node: cst.Name) -> bool:
        scope = self.scope(node)
        assignments = scope[node.value] if scope is not None else ()  # the binding seen there, maybe enclosing
        return bool(assignments) and all(id(a.node) in self.session_targets for a in assignments)

    def block_assignments(self, name: str) -> list:
        return list(self.block_scope.assignments[name])

    def assignments_of(self, node: cst.Name) -> list:
        scope = self.scope(node)
        return list(scope.assignments[node.value]) if scope is not None else []

    def inside_function(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in a def or lambda nested in the graph block (runs when called)."""
        current = self.parent(node)
        while current is not None and current is not self.owner:
            if isinstance(current, (cst.FunctionDef, cst.Lambda)):
                return True
            current = self.parent(current)
        return False

    def graph_block(self) -> tuple[cst.CSTNode, list[cst.BaseStatement]]:
        """The module or function whose body builds the graph (all placeholders must be there)."""
        owners: dict[str, set] = {"placeholder": set(), "session": set()}
        for node in walk(self.module):
            if isinstance(node, cst.Call):
                name = self.tf_name(node.func)
                category = categorize(name)[0] if name else None
                if category in (Category.PLACEHOLDER, Category.SESSION):
                    owners[category.value].add(self._owner_of(node))
        candidates = owners["placeholder"] or owners["session"]
        if len(candidates) != 1:
            created = "placeholders" if owners["placeholder"] else "sessions"
            raise Refusal(None, f"{created} are created in several functions")
        owner = next(iter(candidates))
        if isinstance(owner, cst.Module):
            return owner, list(owner.body)
        if not isinstance(owner.body, cst.IndentedBlock) or not owner.body.body:
            raise Refusal(owner, "graph built in a one-line function")
        return owner, list(owner.body.body)

    def _owner_of(self, node: cst.CSTNode) -> cst.CSTNode:
        current = self.parent(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, (cst.ClassDef, cst.Lambda)):
                raise Refusal(node, "graph built inside a class or lambda is not converted yet")
            current = self.parent(current)
        if isinstance(current, cst.FunctionDef) and not isinstance(self.parent(current), cst.Module):
            raise Refusal(node, "graph built inside a nested function or method is not converted yet")
        return current
