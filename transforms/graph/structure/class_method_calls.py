"""How the methods of a class holding the graph use each other: who calls which method, and how
(transforms/graph/structure/class_methods.py decides from this which ones to write out)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from transforms.common.syntax import only_small_statement, walk


@dataclass
class Method:
    """A method of the class, and how the other methods use it."""

    node: cst.FunctionDef
    self_name: str
    calls: list[cst.SimpleStatementLine] = field(default_factory=list)  # statements `[x =] self.m(...)`
    references: int = 0  # `self.m` anywhere in the class's methods
    called: int = 0  # of those, calls `self.m(...)`
    referrers: set[str] = field(default_factory=set)  # the methods using `self.m`
    caller: Method | None = None  # the method written out where this one's call is (None: __init__)
    renamed: dict[str, str] = field(default_factory=dict)  # local -> the name it takes in __init__


def graph_methods(class_node: cst.ClassDef) -> dict[str, Method]:
    methods = {}
    for member in class_node.body.body:
        if isinstance(member, cst.FunctionDef) and not member.decorators and member.params.params:
            methods[member.name.value] = Method(member, member.params.params[0].name.value)
    return methods


def find_calls(caller: Method, methods: dict[str, Method]) -> None:
    """Count the uses `self.m` in `caller`, and record its statements `[x =] self.m(...)` (in the body or
    in if / else branches)."""
    for node in walk(caller.node.body):
        if isinstance(node, cst.Attribute) and is_method_of(node, caller.self_name, methods):
            methods[node.attr.value].references += 1
            methods[node.attr.value].referrers.add(caller.node.name.value)
        elif isinstance(node, cst.Call) and is_method_of(node.func, caller.self_name, methods):
            methods[node.func.attr.value].called += 1
    for statement in branch_statements(caller.node.body):
        name = called_method(statement, caller.self_name)
        if name in methods:
            methods[name].calls.append(statement)


def is_method_of(node: cst.CSTNode, self_name: str, methods: dict[str, Method]) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self_name \
        and node.attr.value in methods


def branch_statements(block: cst.BaseSuite) -> Iterator[cst.BaseStatement]:
    """The statements of a function body, those in if / else branches included."""
    for statement in block.body if isinstance(block, cst.IndentedBlock) else ():
        yield statement
        if isinstance(statement, cst.If):
            yield from branch_statements(statement.body)
            branch = statement.orelse
            while branch is not None:
                yield from branch_statements(branch.body)
                branch = branch.orelse if isinstance(branch, cst.If) else None


def called_method(statement: cst.BaseStatement, self_name: str) -> str | None:
    call = method_call(statement)
    func = call.func if call is not None else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self_name:
        return func.attr.value
    return None


def method_call(statement: cst.BaseStatement) -> cst.Call | None:
    small = only_small_statement(statement)
    if isinstance(small, cst.Expr) or (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return small.value if isinstance(small.value, cst.Call) else None
    return None
