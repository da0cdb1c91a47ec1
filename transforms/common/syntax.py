"""Small libcst helpers shared by every family of transforms."""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple
from weakref import WeakKeyDictionary

import libcst as cst

from transforms.common.dispatch import is_real_hook

_EMPTY = cst.Module(body=[])


class Refusal(Exception):
    """The program uses something the rewrite does not model: the file is left as it is.

    `node` is where the construct is (its line goes into the finding)."""

    def __init__(self, node: cst.CSTNode | None, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


def code(node: cst.CSTNode) -> str:
    """Source text of a node, as it appears in the file."""
    return _EMPTY.code_for_node(node).strip()


class _ModuleMemo:
    """A value computed from a module, remembered for the last few modules met (a module is never
    changed in place; the entry keeps it alive, so that its id stays its own)."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self.entries: dict[int, tuple[cst.Module, object]] = {}

    def get(self, module: cst.Module):
        entry = self.entries.get(id(module))
        return entry[1] if entry is not None and entry[0] is module else None

    def put(self, module: cst.Module, value):
        if len(self.entries) >= self.kept:
            self.entries.clear()
        self.entries[id(module)] = (module, value)
        return value


# Generating a module's code is a walk of the whole tree; the runner knows the code of every module
# it parsed, and transforms ask for it too (text pre-checks), so the last few are remembered.
_CODES = _ModuleMemo(kept=8)


def shortened(text: str, width: int = 70) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis: code quoted in a message."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def module_code(module: cst.Module) -> str:
    """`module.code`, remembered for the modules met last."""
    text = _CODES.get(module)
    return text if text is not None else _CODES.put(module, module.code)


def remember_code(module: cst.Module, text: str) -> None:
    """Note that `text` is `module.code` (it was parsed into `module`, or generated from it)."""
    _CODES.put(module, text)


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def statement(text: str) -> cst.BaseStatement:
    return cst.parse_statement(text if text.endswith("\n") else text + "\n")


def bind_arguments(call: cst.Call, signature: list[str], what: str) -> dict[str, cst.BaseExpression]:
    """Map a call's arguments onto parameter names (positional ones by `signature` order)."""
    bound: dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise Refusal(arg, f"{what} is called with *args/**kwargs, which hide its arguments")
        if arg.keyword is None:
            if index >= len(signature):
                raise Refusal(arg, f"{what} has more positional arguments than expected")
            bound[signature[index]] = arg.value
        elif arg.keyword.value in signature:
            bound[arg.keyword.value] = arg.value
        else:
            raise Refusal(arg, f"{what} has an unknown argument '{arg.keyword.value}'")
    return bound


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, without spaces around `=`, as PEP 8 writes keyword arguments."""
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ... : the first not in `taken`, which it is then added to."""
    candidate, counter = base, 1
    while candidate in taken:
        candidate, counter = f"{base}_{counter}", counter + 1
    taken.add(candidate)
    return candidate


def leftmost_name(node: cst.BaseExpression) -> cst.Name | None:
    """`tf` of `tf.nn.relu`; None when the chain does not start with a name."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def arg_scope_listed(module: cst.Module) -> list[cst.Attribute]:
    """The `slim.conv2d`-style attributes listed in the first argument of an `...arg_scope([...])`
    call: arg_scope names the functions it sets defaults for, it runs none of them."""
    listed = []
    for node in calls_under(module):
        if isinstance(node.func, (cst.Name, cst.Attribute)) and node.args \
                and _callee_word(node.func) == "arg_scope" and isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            listed.extend(element.value for element in node.args[0].value.elements
                          if isinstance(element.value, cst.Attribute))
    return listed


def _callee_word(func: cst.Name | cst.Attribute) -> str:
    return func.value if isinstance(func, cst.Name) else func.attr.value


def string_value(node: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal, else None."""
    if isinstance(node, cst.SimpleString) and not node.prefix.lower().strip("ru"):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    return None


def is_literal(node: cst.BaseExpression) -> bool:
    """Numbers, booleans, None and strings, optionally negated: values a feed can be replaced by."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


def is_constant(node: cst.BaseExpression) -> bool:
    """Literals combined by operators, in tuples or parentheses (`0.0001 * 3`, `(1, 2)`): an immutable
    value that is the same whenever it is evaluated."""
    if is_literal(node):
        return True
    if isinstance(node, cst.UnaryOperation):
        return is_constant(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return is_constant(node.left) and is_constant(node.right)
    if isinstance(node, cst.Tuple):
        return all(isinstance(e, cst.Element) and is_constant(e.value) for e in node.elements)
    return isinstance(node, cst.ConcatenatedString)


class _FieldOrder(cst.CSTVisitor):
    """Records the fields libcst's visit goes through, in its order, without entering them."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields.append(attribute)


_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields holding `node`'s children, in the order libcst visits them. Every node type's
    `_visit_and_replace_children` visits the same fields in the same order whatever their values, so
    one (rebuilding) visit per type tells it; `node.children` pays that rebuild on every call."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        recorder = _FieldOrder()
        node._visit_and_replace_children(recorder)
        fields = _FIELDS[type(node)] = tuple(recorder.fields)
    return fields


_IS_NODE: dict[type, bool] = {}


def is_node_type(value_type: type) -> bool:
    """issubclass(value_type, CSTNode), remembered: CSTNode is an ABC, whose checks are slow."""
    known = _IS_NODE.get(value_type)
    if known is None:
        known = _IS_NODE[value_type] = issubclass(value_type, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`: the same nodes in the same order, read from its fields."""
    found: list[cst.CSTNode] = []
    fields = _FIELDS.get(type(node)) or child_fields(node)
    for field in fields:
        value = getattr(node, field)
        value_type = type(value)
        if is_node_type(value_type):
            found.append(value)
        elif value is not None and value_type is not cst.MaybeSentinel:
            found.extend(value)  # a sequence of nodes
    return found


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), parents before children, in source order."""
    if type(node) is cst.Module:
        return iter(_walked(node).nodes)
    return _walk(node)


def calls_under(node: cst.CSTNode) -> Iterator[cst.Call]:
    """The calls under `node` (itself included), in walk order."""
    if type(node) is cst.Module:
        return iter(_walked(node).calls)
    return (child for child in _walk(node) if type(child) is cst.Call)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


class _Walked(NamedTuple):
    nodes: list[cst.CSTNode]
    calls: list[cst.Call]


# Nine walks in ten are of a whole module (the analyses ask where a module calls this or that), so the
# nodes of the last few modules walked are remembered.
_WALKED = _ModuleMemo(kept=4)


def _walked(module: cst.Module) -> _Walked:
    walked = _WALKED.get(module)
    if walked is None:
        nodes = list(_walk(module))
        walked = _WALKED.put(module, _Walked(nodes, [node for node in nodes if type(node) is cst.Call]))
    return walked


def walk_outside_functions(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`walk(node)` without the bodies of the functions defined under `node` (their returns and names
    are their own); the definitions themselves are included."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, cst.FunctionDef) or current is node:
            stack.extend(reversed(children(current)))


class CodeNames(NamedTuple):
    """What a module's code can refer to anything through (never text in strings or comments)."""

    #: Names, attribute names and the parts of imported names.
    identifiers: frozenset[str]
    #: Attribute names only: `x.<name>`.
    attributes: frozenset[str]
    #: Dotted names of what the imports bind: `import a.b` -> `a.b`, `from a import b` -> `a.b`.
    imports: frozenset[str]


@lru_cache(maxsize=4)
def python_ast(code: str) -> ast.Module | None:
    """CPython's parse of `code` (shared: the transforms' pre-checks and import_names read it; no
    one changes it); None when CPython cannot parse it."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None


@lru_cache(maxsize=4)
def code_names(code: str) -> CodeNames | None:
    """The names `code` uses (see CodeNames); None when CPython cannot parse it."""
    tree = python_ast(code)
    if tree is None:
        return None
    found: set[str] = set()
    attributes: set[str] = set()
    imports: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update(node.name.split("."))
            if node.asname:
                found.add(node.asname)
        elif isinstance(node, ast.Import):
            imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(node.module.split("."))
            if not node.level:
                imports.update(f"{node.module}.{alias.name}" for alias in node.names)
    return CodeNames(frozenset(found | attributes), frozenset(attributes), frozenset(imports))


def code_identifiers(code: str) -> frozenset[str] | None:
    """The identifiers through which `code` can refer to anything: names, attribute names and the
    parts of imported names (never text in strings or comments); None when CPython cannot parse it."""
    names = code_names(code)
    return None if names is None else names.identifiers


def scan(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads: the same visit_/leave_ hooks, in the same
    order, on the same nodes (children come from the same libcst method), without rebuilding and
    re-validating every node as libcst's visit does. Hooks on fields (visit_<Type>_<field>) are not
    called: a visitor passed here has none."""
    visitor_type = type(visitor)
    if visitor_type.on_visit is _LIBCST_ON_VISIT and visitor_type.on_leave is _LIBCST_ON_LEAVE:
        hooks = _HOOKS.get(visitor_type)
        if hooks is None:
            hooks = _HOOKS[visitor_type] = {}
        _scan_typed(node, visitor, hooks)
    else:
        _scan(node, visitor)


def _scan(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    if visitor.on_visit(node):
        for child in children(node):
            _scan(child, visitor)
    visitor.on_leave(node)


_LIBCST_ON_VISIT, _LIBCST_ON_LEAVE = cst.CSTVisitor.on_visit, cst.CSTVisitor.on_leave
#: Visitor class -> node type -> its real visit_ and leave_ hooks (None for libcst's do-nothing stubs),
#: as functions: one dictionary lookup per node.
#: Weak: many visitors are classes made afresh by each call of the function defining them.
_HOOKS: WeakKeyDictionary[type, dict[type, tuple]] = WeakKeyDictionary()


def _scan_typed(node: cst.CSTNode, visitor: cst.CSTVisitor, hooks: dict[type, tuple]) -> None:
    """`_scan` for a visitor dispatching as CSTVisitor does (`visit_<Type>`, `leave_<Type>` found by
    name), with each hook looked up once per node type and stubs not called."""
    node_type = type(node)
    found = hooks.get(node_type)
    if found is None:
        found = hooks[node_type] = (_hook_function(type(visitor), "visit_", node_type),
                                    _hook_function(type(visitor), "leave_", node_type))
    visit, leave = found
    if visit is None or visit(visitor, node) is not False:
        for child in children(node):
            _scan_typed(child, visitor, hooks)
    if leave is not None:
        leave(visitor, node)


def _hook_function(visitor_type: type, prefix: str, node_type: type):
    function = getattr(visitor_type, prefix + node_type.__name__, None)
    return function if is_real_hook(function) else None


def only_small_statement(statement: cst.BaseStatement) -> cst.BaseSmallStatement | None:
    """The statement's one small statement (`x = f()` alone on its line), else None."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def is_docstring(statement: cst.BaseStatement) -> bool:
    small = only_small_statement(statement)
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)


def load_names(node: cst.CSTNode, parameters: bool = False) -> Iterator[cst.Name]:
    """Name nodes that stand for variables: not attribute names or keywords, and not parameters
    unless asked for (these are all the names a new binding could clash with)."""
    skip = set()
    for child in walk(node):
        child_type = type(child)  # these node types have no subclasses; `is` spares the ABC checks
        if child_type is cst.Name:
            if id(child) not in skip:
                yield child
        elif child_type is cst.Attribute:
            skip.add(id(child.attr))
        elif child_type is cst.Arg:
            if child.keyword is not None:
                skip.add(id(child.keyword))
        elif child_type is cst.Param and not parameters:
            skip.add(id(child.name))


def binding_names(scope, name: str) -> list[cst.Name]:
    """The Name nodes that bind `name` in `scope` or read those bindings (from nested scopes too): what
    renaming that variable changes. A parameter's own node is a Param, not listed."""
    return [node for assignment in scope.assignments[name]
            for node in [assignment.node, *(access.node for access in assignment.references)]
            if isinstance(node, cst.Name)]


class NodeOrigins:
    """The node of the file as written that each rebuilt node stands for, by the rebuilt node's
    identity. The rebuilt nodes are held here: one dropped by a later rewrite is then never freed, so
    no node made afterwards can take its id and be mistaken for it."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[cst.CSTNode, cst.CSTNode]] = {}

    def add(self, node: cst.CSTNode, origin: cst.CSTNode) -> None:
        self._entries[id(node)] = (node, origin)

    def origin(self, node: cst.CSTNode, default: cst.CSTNode | None = None) -> cst.CSTNode | None:
        entry = self._entries.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else default

    def pairs(self) -> list[tuple[cst.CSTNode, cst.CSTNode]]:
        """(rebuilt node, origin) of every entry."""
        return list(self._entries.values())

    def merged(self, *others: NodeOrigins) -> NodeOrigins:
        """These origins and `others`' (theirs winning for a node in several)."""
        merged = NodeOrigins()
        for origins in (self, *others):
            merged._entries.update(origins._entries)
        return merged


class NodeReplacer(cst.CSTTransformer):
    """Replace nodes (found by identity in the original tree) by what a function makes of their updated
    version; a function may return a FlattenSentinel or RemovalSentinel where libcst allows them."""

    def __init__(self, replacements: dict[int, Callable[[cst.CSTNode], object]]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        updated = super().on_leave(original_node, updated_node)
        make = self.replacements.get(id(original_node))
        return make(updated) if make else updated

    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[statement("pass")])
        return updated_node


def replace_nodes(node: cst.CSTNode, replacements: dict[int, Callable[[cst.CSTNode], object]]):
    """`node` with the replacements applied (the same object when there are none)."""
    if not replacements:
        return node
    return node.visit(NodeReplacer(replacements))


def replaced_on_paths(root: cst.CSTNode, replacements: Mapping[cst.CSTNode, cst.CSTNode],
                      parents: Mapping[cst.CSTNode, cst.CSTNode]) -> cst.CSTNode:
    """`root` with each node of `replacements` (none inside another) swapped for its value. Only the
    nodes above them are rebuilt, where a transformer pass would rebuild the whole tree; `parents`
    maps each node under `root` to its parent."""
    if not replacements:
        return root
    on_path: set[int] = set()
    for node in replacements:
        while node is not root and id(node) not in on_path:
            on_path.add(id(node))
            node = parents[node]
    by_id = {id(node): new for node, new in replacements.items()}

    def rebuilt(node: cst.CSTNode) -> cst.CSTNode:
        if id(node) in by_id:
            return by_id[id(node)]
        changes = {}
        for field in child_fields(node):
            value = getattr(node, field)
            if is_node_type(type(value)):
                if id(value) in on_path:
                    changes[field] = rebuilt(value)
            elif value is not None and value is not cst.MaybeSentinel.DEFAULT \
                    and any(id(child) in on_path for child in value):
                changes[field] = [rebuilt(child) if id(child) in on_path else child for child in value]
        return node.with_changes(**changes)

    return rebuilt(root)


def with_value(statement: cst.BaseStatement, value: str, target: str | None = None) -> cst.BaseStatement:
    """`statement` (an assignment or expression line) with a new value, or a fresh `target = value`."""
    if target is not None:
        return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], expr(value))])
    small = statement.body[0]
    if isinstance(small, (cst.Assign, cst.AnnAssign)):
        return statement.with_changes(body=[small.with_changes(value=expr(value))])
    return statement.with_changes(body=[cst.Expr(expr(value))])


def retarget(statement: cst.BaseStatement, name: str) -> cst.BaseStatement:
    """An assignment line assigning to `name` instead."""
    small = statement.body[0]
    return statement.with_changes(body=[small.with_changes(targets=[cst.AssignTarget(cst.Name(name))])])


def target_names(target: cst.BaseExpression) -> tuple[str, ...] | None:
    """The names a `name = ...` / `a, b = ...` target binds (None for other targets)."""
    if isinstance(target, cst.Name):
        return (target.value,)
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return tuple(e.value.value for e in target.elements)
    return None


def argument_code(call: cst.Call) -> str:
    """A call's arguments as written."""
    return ", ".join(code(arg) for arg in call.args)


def is_target(resolver, node: cst.CSTNode) -> bool:
    """Whether `node` is bound, deleted or assigned to there (also inside tuple/list targets)."""
    child, parent = node, resolver.parent(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        child, parent = parent, resolver.parent(parent)
    if isinstance(parent, (cst.AssignTarget, cst.Del, cst.AsName)):
        return True
    return isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and parent.target is child


def unwrapped_block(block: cst.With) -> cst.FlattenSentinel:
    """The statements of a `with` block in place of the block (its leading comments kept)."""
    body = block.body
    statements = [cst.SimpleStatementLine(body=body.body)] if isinstance(body, cst.SimpleStatementSuite) \
        else list(body.body)
    statements[0] = statements[0].with_changes(leading_lines=[*block.leading_lines, *statements[0].leading_lines])
    return cst.FlattenSentinel(statements)


class LocalRenamer(cst.CSTTransformer):
    """Parameters -> arguments and clashing locals -> fresh names (attribute names are left alone)."""

    def __init__(self, renames: dict[str, str | cst.BaseExpression]) -> None:
        self.renames = renames

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)  # `x.shape`: only the object part is a variable

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        new = self.renames.get(original.value)
        if new is None:
            return updated
        return cst.Name(new) if isinstance(new, str) else new

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # `f(size=size)`: the keyword is no variable
