"""Objects of the program's own data-set classes, whose `next_batch` a fused loop may call ahead of its
steps (TFM301, `fusion/draws.py`), as it does TF1's tutorial loader's.

    class DataSet:
        def next_batch(self, batch_size):
            if self._index + batch_size > self._count:
                numpy.random.shuffle(self._order)
                self._index = 0
            ...
            return self._images[rows], self._labels[rows]

    train_set, test_set = read_data_sets()    # `return DataSet(...), DataSet(...)`

Drawing a batch ahead is the same program when the draw touches nothing but its own object and
NumPy's random state: a `next_batch` (and the methods of its class it calls) that reads its
parameters, its locals, NumPy, the module's constants and safe builtins; writes only attributes and
items of `self` or of its locals; and calls methods of `self` checked the same way, NumPy functions,
those builtins (not `print`: its lines would move), methods of the arrays it holds that change
none, and `append` to lists it makes itself. NumPy may shuffle only arrays the method made (an array
the object was given may be its caller's too). Such a class says nothing of its batches' shapes, so
the loop's step must fix them (fusion/plan.py)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import is_constant, walk_outside_functions
from transforms.speed.fusion.scan import names_bound

SAFE_CALLS = frozenset({"float", "int", "len", "round", "abs", "min", "max", "list", "tuple", "range", "slice",
                        "sorted", "sum", "enumerate", "zip", "bool", "isinstance", "ValueError", "IndexError"})
PURE_PREFIXES = ("numpy", "math")
# NumPy array methods that make new values and change none
VALUE_METHODS = frozenset({"reshape", "astype", "copy", "flatten", "ravel", "transpose", "take", "squeeze", "sum",
                           "mean", "max", "min", "argmax", "argmin", "tolist", "item", "any", "all", "nonzero",
                           "clip", "dot", "repeat", "swapaxes", "round", "cumsum", "std", "var"})
LIST_METHODS = frozenset({"append", "extend", "insert"})
_SMALL = (cst.Assign, cst.AugAssign, cst.Expr, cst.Return, cst.Raise, cst.Assert, cst.Pass)
_MAX_DEPTH = 3


def batch_sources(module: cst.Module, assignments: list[cst.Assign], qualified) -> frozenset[str]:
    """Names bound once in the module to an object of such a class: `data = DataSet(...)`, or made by
    a module function returning one (`return DataSet(...)`) or a tuple of them, unpacked."""
    classes = {c.name.value for c in module.body if isinstance(c, cst.ClassDef) and _draws_own_batches(c, module,
                                                                                                      qualified)}
    if not classes:
        return frozenset()
    makers = {f.name.value: arity for f in module.body if isinstance(f, cst.FunctionDef)
              and (arity := _made_objects(f, classes)) is not None}
    counts: dict[str, int] = {}
    for node in assignments:
        for name in names_bound([node]):
            counts[name] = counts.get(name, 0) + 1
    found = set()
    for node in assignments:
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call) or not isinstance(node.value.func, cst.Name):
            continue
        target, callee = node.targets[0].target, node.value.func.value
        if isinstance(target, cst.Name) and (callee in classes or makers.get(callee) == 0):
            found.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and makers.get(callee) == len(target.elements) \
                and all(isinstance(element.value, cst.Name) for element in target.elements):
            found |= {element.value.value for element in target.elements}
    return frozenset(name for name in found if counts.get(name) == 1)


def _made_objects(function: cst.FunctionDef, classes: set[str]) -> int | None:
    """0 when every `return` of `function` returns a call of one of `classes`, n when each returns a
    tuple of n such calls, else None."""
    returns = [node for node in walk_outside_functions(function.body) if isinstance(node, cst.Return)]
    arities = {_arity(node.value, classes) for node in returns}
    return arities.pop() if len(arities) == 1 and None not in arities else None


def _arity(value: cst.BaseExpression | None, classes: set[str]) -> int | None:
    if _is_made(value, classes):
        return 0
    if isinstance(value, cst.Tuple) and value.elements and all(_is_made(e.value, classes) for e in value.elements):
        return len(value.elements)
    return None


def _is_made(value: cst.BaseExpression | None, classes: set[str]) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in classes


def _draws_own_batches(cls: cst.ClassDef, module: cst.Module, qualified) -> bool:
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)} \
        if isinstance(cls.body, cst.IndentedBlock) else {}
    method = methods.get("next_batch")
    constants = _module_constants(module)
    return method is not None and _touches_only_itself(method, methods, constants, qualified, 0)


def _module_constants(module: cst.Module) -> set[str]:
    """Names the module binds once, at its top level, to a constant (`BATCH = 32`)."""
    bound: dict[str, int] = {}
    constant = set()
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if isinstance(small, cst.Assign):
            for name in names_bound([small]):
                bound[name] = bound.get(name, 0) + 1
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) and is_constant(small.value):
                constant.add(small.targets[0].target.value)
    return {name for name in constant if bound[name] == 1}


def _touches_only_itself(method: cst.FunctionDef, methods: dict, constants: set[str], qualified, depth: int) -> bool:
    params = method.params
    if method.decorators or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg \
            or not params.params or depth > _MAX_DEPTH:
        return False
    for node in walk_outside_functions(method.body):
        if isinstance(node, cst.BaseCompoundStatement) and not isinstance(node, (cst.If, cst.For, cst.While)):
            return False
        if isinstance(node, cst.BaseSmallStatement) and not isinstance(node, _SMALL):
            return False
        if isinstance(node, (cst.Lambda, cst.Yield, cst.Await, cst.NamedExpr)):
            return False
    local = {name for node in walk_outside_functions(method.body)
             if isinstance(node, (cst.Assign, cst.AugAssign, cst.For, cst.CompFor)) for name in _bound_names(node)}
    checker = _Reads(params.params[0].name.value, {p.name.value for p in params.params[1:]}, local, constants,
                     qualified)
    method.body.visit(checker)
    return checker.plain and checker.own_methods <= set(methods) and all(
        _touches_only_itself(methods[name], methods, constants, qualified, depth + 1) for name in checker.own_methods)


def _bound_names(node: cst.CSTNode) -> set[str]:
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    names = set()
    for target in targets:
        names |= _names_in_target(target)
    return names


def _names_in_target(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in _names_in_target(element.value)}
    return set()


class _Reads(cst.CSTVisitor):
    """Whether a method body reads and writes only what this module's docstring allows; the methods of
    `self` it calls, to be checked in turn."""

    def __init__(self, self_name: str, params: set[str], local: set[str], constants: set[str], qualified) -> None:
        self.self_name, self.params, self.local = self_name, params, local
        self.readable = {self_name} | params | local | constants | SAFE_CALLS | {"True", "False", "None"}
        self.qualified = qualified
        self.plain = True
        self.own_methods: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if any(arg.keyword is not None and arg.keyword.value == "out" for arg in node.args):
            self.plain = False  # NumPy writing into an array it is given
        elif isinstance(func, cst.Name):
            self.plain &= func.value in SAFE_CALLS or self._pure(func) and self._leaves_arguments(node)
        elif isinstance(func, cst.Attribute) and _is_name(func.value, self.self_name):
            self.own_methods.add(func.attr.value)
        elif isinstance(func, cst.Attribute) and self._pure(func):
            self.plain &= self._leaves_arguments(node)
        elif isinstance(func, cst.Attribute):
            # a method of a value the object or the method holds: one that leaves it as it is, or one
            # filling a list the method made itself
            root = _root_name(func.value)
            self.plain &= root in self.readable - SAFE_CALLS and func.attr.value in VALUE_METHODS or \
                root in self.local - self.params and func.attr.value in LIST_METHODS
        else:
            self.plain = False

    def _leaves_arguments(self, call: cst.Call) -> bool:
        """NumPy's functions leave their arguments as they are, but for shuffling in place: that one
        must shuffle an array the method made itself (not one the object was given, which its
        caller may hold too)."""
        if not any(name.endswith(".shuffle") for name in self.qualified(call.func)):
            return True
        return bool(call.args) and isinstance(call.args[0].value, cst.Name) \
            and call.args[0].value.value in self.local - self.params

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.plain &= self._writable(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.plain &= self._writable(node.target)

    def visit_Name(self, node: cst.Name) -> None:
        self.plain &= node.value in self.readable or self._pure(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False  # the attribute's own name is no variable

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False  # nor is a keyword

    def _pure(self, node: cst.CSTNode) -> bool:
        names = self.qualified(node)
        return bool(names) and all(name.split(".")[0] in PURE_PREFIXES for name in names)

    def _writable(self, target: cst.BaseExpression) -> bool:
        """Names of the method, and attributes or items of `self` or of its locals (not of a parameter:
        that object is the caller's)."""
        if isinstance(target, cst.Name):
            return True
        if isinstance(target, (cst.Tuple, cst.List)):
            return all(self._writable(element.value) for element in target.elements)
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            return _root_name(target) in {self.self_name} | (self.local - self.params)
        return False


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _root_name(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None
