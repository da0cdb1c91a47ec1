"""Canonical names for TensorFlow symbols, whatever spelling a file imports them by.

libcst's QualifiedNameProvider resolves `tf.nn.relu` under `import tensorflow as tf` to
`tensorflow.nn.relu`, under `import tensorflow.compat.v1 as tf` to `tensorflow.compat.v1.nn.relu`, and
under `from tensorflow.contrib import slim` `slim.conv2d` to `tensorflow.contrib.slim.conv2d`. We fold
all of these onto one canonical TF1 spelling, `tf.<path>`, so that tables need one key per symbol.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import libcst as cst

from transforms.common.tables import slim_table

_ROOTS: tuple[tuple[str, str], ...] = (
    ("tensorflow.compat.v1", "tf"),
    ("tf_slim", "tf.contrib.slim"),
    ("tensorflow", "tf"),
)


def canonical_tf_name(qualified_name: str) -> str | None:
    """Return the canonical `tf.`-spelling of a qualified name, or None if it is not TensorFlow's."""
    if qualified_name.startswith("tensorflow.compat.v2"):
        return None  # already TF2 by the user's own choice
    for root, replacement in _ROOTS:
        if qualified_name == root:
            return replacement
        if qualified_name.startswith(root + "."):
            return unaliased(replacement + qualified_name[len(root):])
    return None


def unaliased(canonical: str) -> str:
    """`tf.contrib.slim.conv2d` is the function `tf.contrib.layers.conv2d` (slim re-exports
    contrib.layers): one canonical name, so the tables need one entry per layer."""
    if not canonical.startswith("tf.contrib.slim."):
        return canonical
    return slim_table().get("layer_aliases", {}).get(canonical, canonical)


def mentions_tensorflow(source: str) -> bool:
    """Cheap pre-parse filter: files that never name TensorFlow are skipped without parsing."""
    return "tensorflow" in source or "tf_slim" in source


def module_aliases(module: cst.Module, canonical_of: Callable[[cst.CSTNode], str | None]) -> dict[str, str]:
    """Module-level names bound exactly once, by a plain assignment of a TensorFlow symbol
    (`relu = tf.nn.relu`, `flags = tf.app.flags`), mapped to that symbol's canonical name."""
    counts: Counter[str] = Counter()
    candidates: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            for target, value in _assignments(small):
                counts[target] += 1
                canonical = canonical_of(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
                if canonical:
                    candidates[target] = canonical
    return {name: target for name, target in candidates.items() if counts[name] == 1}


def _assignments(small: cst.BaseSmallStatement):
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                yield target.target.value, small.value
    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value:
        yield small.target.value, small.value
    elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        for alias in small.names:
            if alias.asname and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value, None


def dotted_name(node: cst.CSTNode | None) -> str:
    """`a.b.c` for a Name/Attribute chain, "" for anything else (calls, subscripts, None)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    return ""


def tensorflow_aliases(statements) -> list[str]:
    """The names module-level `import tensorflow [as tf]` / `import tensorflow.compat.v1 as tf` lines
    bind to TensorFlow (or its v1 API), in order."""
    found = []
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if name in ("tensorflow", "tensorflow.compat.v1") and alias.asname:
                        found.append(alias.asname.name.value)
                    elif name == "tensorflow":
                        found.append("tensorflow")
    return found


def tensorflow_alias(module: cst.Module) -> str | None:
    """The name a module imports TensorFlow (or its v1 API) as, for code written into it; None if none."""
    return next(iter(tensorflow_aliases(module.body)), None)


def numpy_alias(module: cst.Module) -> str | None:
    """The name a module-level `import numpy [as np]` binds NumPy to, for code written into the module;
    None if there is none."""
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            for alias in small.names if isinstance(small, cst.Import) else ():
                if dotted_name(alias.name) == "numpy":
                    return alias.asname.name.value if alias.asname else "numpy"
    return None
