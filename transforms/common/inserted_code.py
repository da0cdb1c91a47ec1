"""Code a transform writes into a module (helper functions after the imports): spacing and names."""
from __future__ import annotations

import libcst as cst


def top_level_definitions(module: cst.Module) -> set[str]:
    """The names of the module's top-level functions and classes, which written code must not take."""
    return {statement.name.value for statement in module.body if isinstance(statement, (cst.ClassDef, cst.FunctionDef))}


def after_blank_lines(statement: cst.BaseStatement) -> cst.BaseStatement:
    """`statement` with the two blank lines PEP 8 puts around top-level functions before it."""
    lines = list(statement.leading_lines)
    blanks = _leading_blank_count(lines)
    return statement.with_changes(leading_lines=[cst.EmptyLine()] * max(0, 2 - blanks) + lines)


def _leading_blank_count(lines: list[cst.EmptyLine]) -> int:
    count = 0
    for line in lines:
        if line.comment is not None:
            break
        count += 1
    return count


def with_tensorflow_alias(helper: cst.BaseStatement, alias: str) -> cst.BaseStatement:
    """The helpers are written with `tf`; a module importing TensorFlow as another name gets that."""
    return with_module_alias(helper, "tf", alias)


class _RenameModule(cst.CSTTransformer):
    """Renames the variable `written` (not attributes so named: `tensor.numpy()` stays)."""

    def __init__(self, written: str, alias: str) -> None:
        super().__init__()
        self.written = written
        self.alias = alias
        self.attribute_names: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attribute_names.add(id(node.attr))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value == self.written and id(original) not in self.attribute_names:
            return updated.with_changes(value=self.alias)
        return updated


def with_module_alias(helper: cst.BaseStatement, written: str, alias: str) -> cst.BaseStatement:
    """`helper`, written with the module name `written` (`numpy`), with the name the file imports it as."""
    return helper if alias == written else helper.visit(_RenameModule(written, alias))


def insert_definitions(body: list[cst.BaseStatement], position: int,
                       definitions: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """`body` with `definitions` (top-level functions or classes, and what goes with them) at
    `position`, the two blank lines PEP 8 wants before the first one and before the code after them."""
    if not definitions:
        return body
    body = list(body)
    if position < len(body):
        body[position] = after_blank_lines(body[position])
    return body[:position] + [after_blank_lines(definitions[0]), *definitions[1:]] + body[position:]


def parsed_definitions(sources: list[str], tensorflow_alias: str = "tf") -> list[cst.BaseStatement]:
    """The statements of helper `sources` written with `tf`, under the module's TensorFlow alias."""
    return [with_tensorflow_alias(statement, tensorflow_alias)
            for source in sources for statement in cst.parse_module(source).body]
