"""Reading Python source safely: encodings (PEP 263 cookies, BOMs) and clear parse-error reasons."""
from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
from dataclasses import dataclass

import libcst as cst


class SourceError(Exception):
    """A file that cannot be read as Python text; the message is the per-file reason."""


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        """Encode migrated text the way the original was encoded."""
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode_python(data: bytes) -> DecodedSource:
    if b"\x00" in data:
        raise SourceError("contains NUL bytes (binary file?); left untouched")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"unknown source encoding ({error}); left untouched") from error
    bom = encoding == "utf-8-sig"
    body = data[len(codecs.BOM_UTF8):] if bom else data
    codec = "utf-8" if bom else encoding
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as error:
        raise SourceError(
            f"not valid {codec} at byte {error.start} (declare the encoding with a "
            f"'# -*- coding: ... -*-' line); left untouched") from error
    return DecodedSource(text, codec, bom)


_PY2_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s*print\s+[^\s(=,;.)]"), "print statement"),
    (re.compile(r"^\s*print\s*$"), "print statement"),
    (re.compile(r"^\s*except\s+[\w.]+\s*,\s*\w+\s*:"), "'except X, e' clause"),
    (re.compile(r"^\s*exec\s+[\"'\w]"), "exec statement"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "'raise X, msg' statement"),
    (re.compile(r"`[^`]+`"), "backtick repr"),
    (re.compile(r"<>"), "'<>' operator"),
    (re.compile(r"(?<![\w.])0\d+(?![\w.])"), "old-style octal literal"),
    (re.compile(r"(?<![\w'\"])ur['\"]"), "ur'' string prefix"),
)


def syntax_problem(text: str, filename: str) -> str | None:
    """Why `text` is not valid Python for this interpreter, or None. libcst's parser accepts a few
    things CPython rejects (e.g. Python 2's `except X, e:`), so CPython's own parser has the last word."""
    try:
        compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        return describe_syntax_error(text, error.lineno or 1, error.offset or 1, error.msg)
    return None


def describe_parse_error(text: str, error: cst.ParserSyntaxError) -> str:
    message = error.message.splitlines()[0] if error.message else "invalid syntax"
    return describe_syntax_error(text, error.raw_line, error.raw_column + 1, message)


def describe_syntax_error(text: str, line_no: int, column: int, message: str) -> str:
    """A per-file reason for a file that does not parse, naming Python 2 syntax when that is why."""
    lines = text.splitlines()
    candidates = [line_no] + [n for n in range(1, len(lines) + 1) if n != line_no]
    for number in candidates:
        if 1 <= number <= len(lines):
            kind = _python2_construct(lines[number - 1])
            if kind:
                return (f"Python 2 syntax ({kind}) at line {number}: convert it to Python 3 first "
                        "(e.g. with 2to3 or pyupgrade); left untouched")
    return f"syntax error at line {line_no}, column {column}: {message}; left untouched"


def _python2_construct(line: str) -> str | None:
    code = line.split("#", 1)[0]
    for pattern, kind in _PY2_PATTERNS:
        if pattern.search(code):
            return kind
    return None
