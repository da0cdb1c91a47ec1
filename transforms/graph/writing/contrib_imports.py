"""`from tensorflow.contrib import layers` / `import tensorflow.contrib.layers as layers` / `slim =
tf.contrib.slim`: once the graph rewrite has turned every contrib layer into Keras, the import or alias
binds nothing the program reads, and it would fail on TF2 (there is no tf.contrib). Such lines go; one
whose name is still read stays."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import load_names
from transforms.common.qualnames import dotted_name, tensorflow_aliases

_CONTRIB = "tensorflow.contrib"


def drop_unused_contrib_imports(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    tf_modules = set(tensorflow_aliases(body))
    aliases = {id(statement) for statement in body if _contrib_alias(statement, tf_modules)}
    read = {name.value for statement in body if not _is_import_line(statement) and id(statement) not in aliases
            for name in load_names(statement)}
    kept = []
    for statement in body:
        if id(statement) in aliases and _contrib_alias(statement, tf_modules) not in read:
            continue
        if _is_import_line(statement):
            statement = _without_unused(statement, read)
            if statement is None:
                continue
        kept.append(statement)
    return kept


def _contrib_alias(statement: cst.BaseStatement, tf_modules: set[str]) -> str | None:
    """The name a `slim = tf.contrib.slim` line binds (a contrib module under another name), else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
        return None
    head, _, rest = dotted_name(small.value).partition(".")
    if head in tf_modules and (rest == "contrib" or rest.startswith("contrib.")):
        return small.targets[0].target.value
    return None


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
