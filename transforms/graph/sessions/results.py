"""What a run gave back, in the shapes sess.run used: the fetch leaf that `results[<literal>]`
reads, and the expression that turns a step function's value into the NumPy structure sess.run
returned (for results used inside an expression)."""
from __future__ import annotations

import libcst as cst

from transforms.graph.sessions.runs import VALUES
from transforms.common.syntax import Refusal, code


def fetched_item(subscript: cst.Subscript, fetch, keys: list[str] | None):
    """The fetch leaf that `results[<literal>]` reads, or None."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    key = subscript.slice[0].slice.value
    if keys is not None:
        matches = [child for text, child in zip(keys, fetch.children) if text == code(key)]
        return matches[0] if len(matches) == 1 and not matches[0].children else None
    if isinstance(key, cst.Integer) and int(key.value) < len(fetch.children):
        child = fetch.children[int(key.value)]
        return None if child.children else child
    return None


def in_place_conversion(fetch, node: cst.CSTNode) -> str | None:
    """A format string turning a step function's value shaped like `fetch` into what sess.run
    returned (None: nothing to convert). `node` is where to point a refusal."""
    if fetch.shape in ("op", "summary"):
        return None
    if fetch.shape in VALUES:
        return "{}.numpy()"
    if fetch.shape == "tensors":
        return "[value.numpy() for value in {}]"
    if any(child.shape not in (*VALUES, "op") for child in fetch.children):
        raise Refusal(node, "a fetched structure with nesting, used inside an expression")
    # An operation's place holds None, in the step function's value as in what sess.run returned.
    value = "value.numpy()" if all(child.shape in VALUES for child in fetch.children) else \
        "None if value is None else value.numpy()"
    if fetch.shape == "dict":
        return "{{key: %s for key, value in {}.items()}}" % value
    if fetch.shape == "tuple":
        return "tuple(%s for value in {})" % value
    return "[%s for value in {}]" % value
