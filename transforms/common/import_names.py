"""Qualified names of references to module-level imports, without libcst's scope analysis.

libcst's QualifiedNameProvider asks the module's scopes, and building them (ScopeProvider, with the
expression contexts it needs) is a whole-module analysis that the runner repeats after every
transform that changed the code. Most lookups do not need it: transforms ask about references to
TensorFlow (`tf.nn.relu`, `slim.conv2d`, `FLAGS.lr`), whose first name is bound only by module-level
imports and assignments, and about names bound nowhere (builtins). For those, libcst's answer follows
from the bindings of that one name, found with CPython's `ast` and a walk of the module-level
statements. `ImportNames.qualified_names` gives exactly libcst's answer where it can, and None where
it cannot (the caller then asks libcst):

* a name bound anywhere else (a local variable, a parameter, a function, a loop target...);
* a module-level reference in a statement at or before one binding its name: libcst leaves out
  bindings that come later in the same scope;
* strings in annotations (libcst resolves the names inside them);
* modules using `typing` (libcst treats some of its calls specially) or `match`.

`may_name_tensorflow` tells the references that can have no TensorFlow name at all, even through a
module-level alias (`relu = tf.nn.relu`): the callers that only look for TensorFlow's names skip them.
"""
from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import QualifiedName, QualifiedNameSource
from libcst.metadata.scope_provider import ImportAssignment, _gen_dotted_names

from transforms.common.syntax import python_ast

#: What `qualified_names` returns for a node that libcst gives no scope (an attribute's name, a
#: keyword, anything in an import statement, a node not in the module): the caller's default.
NO_SCOPE = object()

_TENSORFLOW_ROOTS = ("tensorflow", "tf_slim")


@dataclass
class _Census:
    """Who binds which name, from CPython's parse of the module's code."""

    module_bound: set[str] = field(default_factory=set)  # by module-level imports and plain assignments
    elsewhere: set[str] = field(default_factory=set)  # by anything else, anywhere
    tensorflow: set[str] = field(default_factory=lambda: set(_TENSORFLOW_ROOTS))  # may name TensorFlow
    definitions: set[str] = field(default_factory=set)  # names of functions and classes, at any depth
    usable: bool = True


class _CensusTaker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.census = _Census()
        self.depth = 0  # > 0 inside a function, lambda, class or comprehension
        self.aliases: list[tuple[str, ast.expr]] = []  # module-level `name = value`
        self.imports: list[tuple[str, str]] = []  # (bound name, what it imports), at any depth

    def _bind(self, name: str, plainly: bool) -> None:
        (self.census.module_bound if plainly and not self.depth else self.census.elsewhere).add(name)

    def _nested(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node) -> None:
        self._bind(node.name, plainly=False)
        self.census.definitions.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.depth += 1
        self.visit(node.args)
        for statement in node.body:
            self.visit(statement)
        self.depth -= 1
        if node.returns:
            self.visit(node.returns)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name, plainly=False)
        self.census.definitions.add(node.name)
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(part)
        self.depth += 1
        for statement in node.body:
            self.visit(statement)
        self.depth -= 1

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._nested(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

    def visit_arg(self, node: ast.arg) -> None:
        self._bind(node.arg, plainly=False)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind_import(alias, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                continue  # libcst records nothing for a star import
            self._bind_import(alias, f"{'.' * node.level}{node.module or ''}.{alias.name}")
            if any(part.startswith("typing") for part in (node.module or "").split(".")):
                self.census.usable = False

    def _bind_import(self, alias: ast.alias, imported: str) -> None:
        bound = alias.asname or alias.name.split(".")[0]
        self._bind(bound, plainly=True)
        self.imports.append((bound, imported))
        if any(root in imported for root in _TENSORFLOW_ROOTS):
            self.census.tensorflow.add(bound)
        if imported.split(".")[0] in ("typing", "typing_extensions"):
            self.census.usable = False

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._store_target(target, node.value)
        self.visit(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._store_target(node.target, node.value)
        self.visit(node.annotation)
        if node.value:
            self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._store_target(node.target, None)
        self.visit(node.value)

    def _store_target(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, plainly=True)
            if value is not None and not self.depth:
                self.aliases.append((target.id, value))
        else:
            self.visit(target)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._bind(node.id, plainly=False)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name, plainly=False)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.census.elsewhere.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Match(self, node: ast.AST) -> None:
        self.census.usable = False

    def taken(self) -> _Census:
        census = self.census
        for name, value in self.aliases:  # `relu = tf.nn.relu`: a module alias (qualnames.module_aliases)
            if _head(value) in census.tensorflow:
                census.tensorflow.add(name)
        for bound, imported in self.imports:  # a name from a module whose name is such an alias
            if imported.lstrip(".").split(".")[0] in census.tensorflow:
                census.tensorflow.add(bound)
        if census.definitions & census.tensorflow or "builtins" in census.tensorflow:
            census.usable = False  # `def tensorflow(): x = ...` makes x `tensorflow.<locals>.x`
        return census


def _head(value: ast.expr) -> str | None:
    while isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else None


def take_census(code: str) -> _Census:
    tree = python_ast(code)
    if tree is None:
        return _Census(usable=False)
    taker = _CensusTaker()
    taker.visit(tree)
    return taker.taken()


class ImportNames:
    """libcst's qualified names for references whose first name only module-level imports and
    plain assignments bind (or nothing binds), in one module."""

    def __init__(self, module: cst.Module, code: str, parents: Mapping) -> None:
        self.module = module
        self.census = take_census(code)
        self._parents = parents
        self._bindings: dict[str, list[cst.CSTNode]] = {}  # dotted name -> Import / ImportFrom / Name assigned to
        self._last_binding: dict[str, int] = {}  # head -> last top-level statement binding it
        self._targets: set[cst.Name] = set()
        self._statement_index = {id(statement): index for index, statement in enumerate(module.body)}
        if self.census.usable:
            for index, statement in enumerate(module.body):
                self._record(statement, index)
            recorded_heads = {name.split(".")[0] for name in self._bindings}
            if recorded_heads != self.census.module_bound:  # the two parses disagree: ask libcst
                self.census.usable = False

    # -- what libcst's GlobalScope records ---------------------------------------------------------

    def _record(self, statement: cst.CSTNode, index: int) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self._record_small(small, index)
        elif isinstance(statement, (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While, cst.Else,
                                    cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)):
            for part in _blocks(statement):
                self._record(part, index)
        elif isinstance(statement, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            for inner in statement.body:
                if isinstance(inner, cst.BaseSmallStatement):
                    self._record_small(inner, index)
                else:
                    self._record(inner, index)

    def _record_small(self, small: cst.BaseSmallStatement, index: int) -> None:
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                named = alias.asname.name if alias.asname else alias.name
                for dotted, _ in _gen_dotted_names(named):  # what libcst's ScopeVisitor records
                    self._bind(dotted, small, index)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    self._bind_target(target.target, index)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and isinstance(small.target, cst.Name):
            self._bind_target(small.target, index)

    def _bind_target(self, name: cst.Name, index: int) -> None:
        self._targets.add(name)
        self._bind(name.value, name, index)

    def _bind(self, dotted: str, node: cst.CSTNode, index: int) -> None:
        self._bindings.setdefault(dotted, []).append(node)
        head = dotted.split(".")[0]
        self._last_binding[head] = max(self._last_binding.get(head, -1), index)

    # -- lookups -----------------------------------------------------------------------------------

    def may_name_tensorflow(self, node: cst.CSTNode) -> bool:
        """False only when no qualified name of `node` is TensorFlow's, directly or through a
        module-level alias of a TensorFlow symbol."""
        return not self.census.usable or _first_name(node) in self.census.tensorflow

    def qualified_names(self, node: cst.CSTNode):
        """libcst's qualified names of `node`; NO_SCOPE where libcst gives it no scope; None when
        only libcst's scope analysis can tell."""
        if not self.census.usable or not isinstance(node, cst.BaseExpression) or self._in_annotation(node):
            return None
        statement = self._placement(node)
        if statement is NO_SCOPE:
            return NO_SCOPE
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return set()
        head = full_name.split(".")[0]
        if head in self.census.elsewhere:
            return None
        if head not in self.census.module_bound:
            return {QualifiedName(f"builtins.{head}", QualifiedNameSource.BUILTIN)} if hasattr(builtins, head) else set()
        if node in self._targets:
            return {QualifiedName(full_name, QualifiedNameSource.LOCAL)}
        if statement is not None and statement <= self._last_binding[head]:
            return None  # libcst leaves out bindings later in the same scope
        return self._bound_names(full_name)

    def _bound_names(self, full_name: str) -> set[QualifiedName]:
        prefix: str | None = full_name
        while prefix is not None and prefix not in self._bindings:
            prefix = prefix.rpartition(".")[0] or None
        names: set[QualifiedName] = set()
        for binding in self._bindings[prefix]:
            if isinstance(binding, cst.Name):
                names.add(QualifiedName(full_name, QualifiedNameSource.LOCAL))
            else:
                names |= ImportAssignment(prefix, None, binding, 0, None).get_qualified_names_for(full_name)
        return names

    def _in_annotation(self, node: cst.CSTNode) -> bool:
        """A string in an annotation, whose names libcst resolves (the string stands for them)."""
        if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return False
        parent = self._parents.get(node)
        while parent is not None and not isinstance(parent, cst.Annotation):
            parent = self._parents.get(parent)
        return parent is not None

    def _placement(self, node: cst.CSTNode):
        """NO_SCOPE for a node libcst gives no scope; else the index of the top-level statement
        holding it when it may be in the module's scope, None when it is in a function, lambda,
        class body or comprehension element (where libcst counts every module-level binding)."""
        child, parent = node, self._parents.get(node)
        if parent is None:
            return NO_SCOPE
        if isinstance(parent, cst.Attribute) and parent.attr is node or isinstance(parent, cst.Arg) and parent.keyword is node:
            return NO_SCOPE
        local = False
        while parent is not self.module:
            if isinstance(parent, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)):
                return NO_SCOPE
            if not local and _opens_a_scope_for(parent, child):
                local = True
            child, parent = parent, self._parents[parent]
        return None if local else self._statement_index[id(child)]


def _first_name(node: cst.CSTNode) -> str | None:
    """The first part of get_full_name_for_node(node), without building the name (None where that
    is None or starts with "None": `(a + b).c` is "None.c")."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            node = node.name
        elif isinstance(node, cst.Decorator):
            node = node.decorator
        else:
            return None


def _opens_a_scope_for(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return child is parent.body
    if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return child is parent.elt
    if isinstance(parent, cst.DictComp):
        return child is parent.key or child is parent.value
    return False


def _blocks(statement: cst.CSTNode):
    """The statement blocks of a compound statement, in order (not into functions or classes)."""
    for name in ("body", "handlers", "orelse", "finalbody"):
        part = getattr(statement, name, None)
        if part is None:
            continue
        yield from part if isinstance(part, (list, tuple)) else (part,)

