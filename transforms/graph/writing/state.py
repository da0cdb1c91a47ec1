"""State that TF1 created in the graph and TF2 creates once, eagerly: variables (with their TF1 scope
path as name, so checkpoints and weight alignment still match), initializers and the global step."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import table
from transforms.graph.analysis.model import Scopes
from transforms.common.syntax import Refusal, bind_arguments, code, is_literal, string_value

_VARIABLE_SIGNATURE = ["initial_value", "trainable", "collections", "validate_shape", "caching_device", "name",
                       "variable_def", "dtype", "expected_shape", "import_scope", "constraint", "use_resource",
                       "synchronization", "aggregation", "shape"]
_GET_VARIABLE_SIGNATURE = ["name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections",
                           "caching_device", "partitioner", "validate_shape", "use_resource", "custom_getter",
                           "constraint", "synchronization", "aggregation"]
_HARMLESS = {"validate_shape", "caching_device", "use_resource", "expected_shape"}
_FLOAT_DTYPES = {"tf.float32", "tf.float64", "tf.float16", "tf.bfloat16", "float32", "float64"}


def convert_initializer(call: cst.Call, tf_name: str) -> str:
    """A TF1 initializer call as the Keras initializer with the same distribution, TF1 defaults explicit."""
    entry = table("initializers")[tf_name]
    bound = bind_arguments(call, entry["signature"], tf_name)
    arguments = []
    for parameter in entry["signature"]:
        if parameter in entry["drop"]:
            continue
        keyword = entry.get("renames", {}).get(parameter, parameter)
        if parameter in bound:
            value = code(bound[parameter])
            factor = entry.get("factors", {}).get(parameter)
            arguments.append(f"{keyword}={factor} * ({value})" if factor and not is_literal(bound[parameter])
                             else f"{keyword}={factor} * {value}" if factor else f"{keyword}={value}")
        elif parameter in entry["defaults"]:
            arguments.append(f"{keyword}={entry['defaults'][parameter]}")
    return f"tf.keras.{entry.get('module', 'initializers')}.{entry['keras']}({', '.join(arguments)})"


def draws_at_each_call(call: cst.Call, tf_name: str) -> bool:
    """Whether each call of this TF1 initializer object drew new values: a random one without a seed
    (with one, every call gave the same values, as the Keras initializer does)."""
    entry = table("initializers")[tf_name]
    if "seed" not in entry["signature"]:
        return False
    seed = bind_arguments(call, entry["signature"], tf_name).get("seed")
    return seed is None or (isinstance(seed, cst.Name) and seed.value == "None")


def convert_variable(call: cst.Call, scopes: Scopes) -> tuple[str, bool]:
    """`tf.Variable(...)` as TF2 code, and whether it is trainable."""
    bound = bind_arguments(call, _VARIABLE_SIGNATURE, "tf.Variable")
    _refuse_unmodelled(bound, {"initial_value", "trainable", "name", "dtype", "constraint", "shape"}, "tf.Variable")
    if "initial_value" not in bound:
        raise Refusal(call, "tf.Variable without an initial value")
    name = _scoped_name(bound.get("name"), scopes.prefix(False), "Variable")
    quoted = code(bound["name"]) if "name" in bound and not scopes.prefix(False) else _quoted(name, bound.get("name"))
    arguments = [code(bound["initial_value"])] + _keywords(bound, ("dtype", "shape", "constraint"))
    trainable = _trainable(bound)
    if not trainable:
        arguments.append("trainable=False")
    if name:
        arguments.append(f"name={quoted}")
    return f"tf.Variable({', '.join(arguments)})", trainable


def convert_get_variable(call: cst.Call, scopes: Scopes, initializer: str | None) -> tuple[str, bool]:
    """`tf.get_variable(...)` as a `tf.Variable` named by its variable-scope path.

    `initializer` is the converted initializer expression when the call's initializer is a known
    initializer (or a name bound to one), else None and the initializer, if any, is a value."""
    bound = bind_arguments(call, _GET_VARIABLE_SIGNATURE, "tf.get_variable")
    _refuse_unmodelled(bound, {"name", "shape", "dtype", "initializer", "trainable", "constraint"}, "tf.get_variable")
    name = string_value(bound.get("name"))
    if name is None:
        raise Refusal(call, "tf.get_variable needs a literal name to keep its variable-scope path")
    dtype = code(bound["dtype"]) if "dtype" in bound else None
    if initializer is None and "initializer" in bound:
        if "shape" in bound:
            raise Refusal(bound["initializer"], "tf.get_variable initializer is neither a known initializer "
                                                "nor a value")
        initial_value = code(bound["initializer"])
    else:
        initial_value = _initial_value(call, bound, initializer or _default_initializer(call, scopes, dtype), dtype)
    arguments = [initial_value]
    if dtype and initializer is None and "initializer" in bound:
        arguments.append(f"dtype={dtype}")
    arguments += _keywords(bound, ("constraint",))
    trainable = _trainable(bound)
    if not trainable:
        arguments.append("trainable=False")
    arguments.append(f"name={_quoted(scopes.prefix(True) + name, bound['name'])}")
    return f"tf.Variable({', '.join(arguments)})", trainable


def _initial_value(call: cst.Call, bound: dict, initializer: str, dtype: str | None) -> str:
    if "shape" not in bound:
        raise Refusal(call, "tf.get_variable with an initializer but no shape")
    dtype_argument = f", dtype={dtype}" if dtype else ""
    return f"{initializer}(shape={code(bound['shape'])}{dtype_argument})"


def _default_initializer(call: cst.Call, scopes: Scopes, dtype: str | None) -> str:
    if scopes.initializer is not None:
        return code(scopes.initializer)
    if dtype is not None and dtype not in _FLOAT_DTYPES:
        raise Refusal(call, f"tf.get_variable of dtype {dtype} without an initializer")
    return "tf.keras.initializers.GlorotUniform()"  # TF1's default for floating-point variables


def global_step_variable() -> str:
    """What tf.train.get_or_create_global_step() creates, made explicit."""
    return 'tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")'


def _refuse_unmodelled(bound: dict, allowed: set[str], what: str) -> None:
    for parameter, value in bound.items():
        if parameter not in allowed and parameter not in _HARMLESS:
            raise Refusal(value, f"{what}({parameter}=...) is not modelled")


def _keywords(bound: dict, parameters: tuple[str, ...]) -> list[str]:
    return [f"{parameter}={code(bound[parameter])}" for parameter in parameters if parameter in bound]


def _trainable(bound: dict) -> bool:
    value = bound.get("trainable")
    if value is None:
        return True
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return value.value == "True"
    raise Refusal(value, "trainable= must be a literal True or False")


def _scoped_name(name: cst.BaseExpression | None, prefix: str, default: str) -> str | None:
    if name is None:
        return prefix + default if prefix else None
    literal = string_value(name)
    if literal is None:
        raise Refusal(name, "variable name= must be a string literal to keep its scope path")
    return prefix + literal


def _quoted(text: str | None, like: cst.BaseExpression | None) -> str:
    """A string literal for `text`, in the quotes the original literal used."""
    if text is None:
        return ""
    quote = '"' if isinstance(like, cst.SimpleString) and like.value.lstrip("rRuU").startswith('"') else "'"
    return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote
