"""Placeholders, read as what they become: arguments of the step functions, specified by dtype and
shape (a `tf.TensorSpec` each), with a default for `tf.placeholder_with_default`."""
from __future__ import annotations

import libcst as cst

from transforms.graph.analysis.model import Placeholder
from transforms.common.syntax import Refusal, bind_arguments, code, is_literal


def read_placeholder(call: cst.Call, name: str, with_default: bool) -> Placeholder:
    if with_default:
        bound = bind_arguments(call, ["input", "shape", "name"], "tf.placeholder_with_default")
        default = bound.get("input")
        if default is None or not is_literal(default) or "shape" not in bound:
            raise Refusal(call, "tf.placeholder_with_default needs a literal default and a shape")
        return Placeholder(name, _literal_dtype(default), code(bound["shape"]), default, call)
    bound = bind_arguments(call, ["dtype", "shape", "name"], "tf.placeholder")
    if "dtype" not in bound:
        raise Refusal(call, "tf.placeholder without a dtype")
    shape = code(bound["shape"]) if "shape" in bound else "None"
    return Placeholder(name, code(bound["dtype"]), shape, None, call)


def _literal_dtype(default: cst.BaseExpression) -> str:
    if isinstance(default, cst.Name) and default.value in ("True", "False"):
        return "tf.bool"
    inner = default.expression if isinstance(default, cst.UnaryOperation) else default
    if isinstance(inner, cst.Integer):
        return "tf.int32"
    if isinstance(inner, cst.Float):
        return "tf.float32"
    raise Refusal(default, "tf.placeholder_with_default default of a type the rewrite does not infer")
