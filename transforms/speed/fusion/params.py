"""The parameters of a multi-step function (TFM301) and their TensorSpecs.

Each array or scalar the step call reads by name becomes a parameter of the multi-step function,
with the TensorSpec of the step parameter it feeds: as is when passed whole, with its first dimension
made `None` when sliced into batches (the whole array holds many batches). The input_signature
converts NumPy arrays exactly as the step function's own signature did, once instead of per step.
"""
from __future__ import annotations

import libcst as cst

from transforms.speed.fusion.state import StepFunction


def loop_params(call: cst.Call, step: StepFunction, per_step, scheduled=frozenset()) -> tuple | str:
    """(name, TensorSpec) of each array or scalar the graph loop takes, from the step's signature."""
    chosen: dict[str, str] = {}
    specs: dict[str, cst.BaseExpression] = {}
    for position, arg in enumerate(call.args):
        slot = step.params.index(arg.keyword.value) if arg.keyword else position
        if slot >= len(step.specs):
            return "the step function's input_signature does not cover its parameters"
        if isinstance(arg.value, cst.Name) and arg.value.value in scheduled:
            stacked = _stacked_spec(step.specs[slot])
            if stacked is None:
                return f"cannot tell the shape of `{arg.value.value}` from the input_signature"
            specs[values_name(arg.value.value)] = stacked
            continue
        value = per_step.get(arg.value.value, arg.value) if isinstance(arg.value, cst.Name) else arg.value
        sliced = isinstance(value, cst.Subscript)
        name = value.value.value if sliced else (value.value if isinstance(value, cst.Name) else None)
        if name is None or name in ("True", "False"):
            continue
        spec = _batch_spec(step.specs[slot]) if sliced else step.specs[slot]
        if spec is None:
            return f"cannot tell the shape of a batch of `{name}` from the input_signature"
        code = cst.Module([]).code_for_node(spec)
        if chosen.setdefault(name, code) != code:
            return f"`{name}` feeds parameters with different signatures"
        specs[name] = spec
    return tuple(specs.items())


def values_name(name: str) -> str:
    """The parameter holding every step's value of a scheduled per-step number `name`."""
    return name + "_values"


def _stacked_spec(spec: cst.BaseExpression) -> cst.BaseExpression | None:
    """`tf.TensorSpec([...], dtype)` (or a shape tuple, or one dimension: `(batch_size)`) -> the spec
    of one value per step: `[None, ...]`."""
    shape = _shape(spec)
    if shape is None:
        return None
    first = cst.Element(cst.Name("None"), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if
                        shape.elements else cst.MaybeSentinel.DEFAULT)
    return spec.with_changes(args=[spec.args[0].with_changes(value=shape.with_changes(
        elements=[first, *shape.elements])), *spec.args[1:]])


def _shape(spec: cst.BaseExpression) -> cst.List | cst.Tuple | None:
    """The shape of `tf.TensorSpec(shape, dtype)` as a list or tuple display; a single dimension
    (an integer, or a name in parentheses, as TF1 programs wrote `shape=(batch_size)`) as a list of it."""
    if not isinstance(spec, cst.Call) or not spec.args:
        return None
    shape = spec.args[0].value
    if isinstance(shape, (cst.List, cst.Tuple)):
        return shape
    if isinstance(shape, cst.Integer) or isinstance(shape, cst.Name) and shape.lpar:
        return cst.List([cst.Element(shape.with_changes(lpar=(), rpar=()))])
    return None


def fixes_shape(spec: cst.BaseExpression) -> bool:
    """Whether a stacked spec (`_stacked_spec`'s) fixes every dimension of one value."""
    shape = _shape(spec)
    return shape is not None and not any(isinstance(e.value, cst.Name) and e.value.value == "None"
                                         for e in shape.elements[1:])


def _batch_spec(spec: cst.BaseExpression) -> cst.BaseExpression | None:
    """`tf.TensorSpec([B, ...], dtype)` (or a shape tuple) -> the spec of a whole array of batches: `[None, ...]`."""
    if not isinstance(spec, cst.Call) or not spec.args or not isinstance(spec.args[0].value, (cst.List, cst.Tuple)):
        return None
    shape = spec.args[0].value
    if not shape.elements:
        return None
    first = shape.elements[0].with_changes(value=cst.Name("None"))
    new_shape = shape.with_changes(elements=[first, *shape.elements[1:]])
    return spec.with_changes(args=[spec.args[0].with_changes(value=new_shape), *spec.args[1:]])
