"""`from tensorflow.contrib import layers` / `import tensorflow.contrib.layers as layers`: once the graph
rewrite has turned every contrib layer into Keras, the import binds nothing the program reads, and it
would fail on TF2 (there is no tf.contrib). Such imports go; one whose name is still read stays."""
from __future__ import annotations

import libcst as cst

from transforms._graph_syntax import load_names
from transforms.qualnames import dotted_name

_CONTRIB = "tensorflow.contrib"


def drop_unused_contrib_imports(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    read = {name.value for statement in body if not _is_import_line(statement) for name in load_names(statement)}
    kept = []
    for statement in body:
        if _is_import_line(statement):
            statement = _without_unused(statement, read)
            if statement is None:
                continue
        kept.append(statement)
    return kept


def _is_import_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _without_unused(statement: cst.SimpleStatementLine, read: set[str]) -> cst.SimpleStatementLine | None:
    smalls = []
    for small in statement.body:
        aliases = [alias for alias in small.names if not _unused_contrib(small, alias, read)] \
            if not isinstance(small.names, cst.ImportStar) else small.names
        if not aliases:
            continue
        if len(aliases) != len(small.names):
            aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            small = small.with_changes(names=aliases)
        smalls.append(small)
    if not smalls:
        return None
    smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=smalls)


def _unused_contrib(small: cst.Import | cst.ImportFrom, alias: cst.ImportAlias, read: set[str]) -> bool:
    if isinstance(small, cst.ImportFrom):
        if small.relative or small.module is None:
            return False
        module = dotted_name(small.module)
        full = f"{module}.{dotted_name(alias.name)}"
    else:
        if alias.asname is None:
            return False  # `import tensorflow.contrib.x` binds `tensorflow`
        full = dotted_name(alias.name)
    if not (full == _CONTRIB or full.startswith(_CONTRIB + ".")):
        return False
    bound = alias.asname.name.value if alias.asname else dotted_name(alias.name)
    return bound not in read
