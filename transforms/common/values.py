"""Small helpers over libcst nodes: source text, literal values, argument lists."""
from __future__ import annotations

import ast

import libcst as cst


def source(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def literal(node_or_text: cst.BaseExpression | str) -> tuple[bool, object]:
    """(True, value) when the node (or source text) is a Python literal, else (False, None)."""
    text = node_or_text if isinstance(node_or_text, str) else source(node_or_text)
    try:
        return True, ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def same_literal(node_or_text: cst.BaseExpression | str, expected_text: str | None) -> bool:
    """Whether both are literals of the same type and value (`0` is not `0.0`, `1` is not `True`)."""
    if expected_text is None:
        return False
    (ok, value), (expected_ok, expected) = literal(node_or_text), literal(expected_text)
    return ok and expected_ok and type(value) is type(expected) and value == expected


def is_string(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def with_commas(args: list[cst.Arg], original) -> tuple[cst.Arg, ...]:
    """Separate the arguments with commas, keeping the call's own trailing-comma style."""
    trailing = original[-1].comma if original else cst.MaybeSentinel.DEFAULT
    fixed = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            fixed.append(arg.with_changes(comma=trailing))
        elif isinstance(arg.comma, cst.Comma):
            fixed.append(arg)
        else:
            fixed.append(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return tuple(fixed)
