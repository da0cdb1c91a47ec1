"""TF1 training pieces -> TF2: `tf.train.*Optimizer` -> Keras 3 optimizer (hyper-parameters renamed,
TF1 defaults kept where Keras differs), `tf.train.*_decay` -> Keras learning-rate schedule (stepped by
`optimizer.iterations`, which equals the TF1 global step when only this optimizer increments it),
and `optimizer.minimize(loss, global_step=..., var_list=...)` read into a TrainOp."""
from __future__ import annotations

import libcst as cst

from transforms._graph_api import table
from transforms._graph_model import TrainOp
from transforms._graph_syntax import Refusal, bind_arguments, code

_MINIMIZE_SIGNATURE = ["loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
                       "colocate_gradients_with_ops", "name", "grad_loss"]
_MINIMIZE_IGNORED = {"gate_gradients", "aggregation_method", "colocate_gradients_with_ops", "name"}


def _keras_arguments(call: cst.Call, tf_name: str, entry: dict, skip: tuple[str, ...] = ()) -> tuple[list[str], dict]:
    bound = bind_arguments(call, entry["signature"], tf_name)
    arguments = []
    for parameter in entry["signature"]:
        if parameter in entry["drop"] or parameter in skip:
            continue
        keras_name = entry["renames"].get(parameter, parameter)
        if parameter in bound:
            arguments.append(f"{keras_name}={code(bound[parameter])}")
        elif parameter in entry["defaults"]:
            arguments.append(f"{keras_name}={entry['defaults'][parameter]}")
    extra = [f"{key}={value}" for key, value in entry["defaults"].items() if key not in entry["signature"]]
    return arguments + extra, bound


def learning_rate_argument(call: cst.Call, tf_name: str) -> cst.BaseExpression | None:
    entry = table("optimizers")["optimizers"][tf_name]
    return bind_arguments(call, entry["signature"], tf_name).get("learning_rate")


def convert_optimizer(call: cst.Call, tf_name: str, schedules: set[str], fed_rate: bool = False) -> str:
    """The Keras optimizer for a TF1 optimizer call. `schedules`: names bound to converted schedules;
    `fed_rate`: the rate is fed each step (the optimizer starts at 0.0 and the step sets it)."""
    entry = table("optimizers")["optimizers"][tf_name]
    arguments, bound = _keras_arguments(call, tf_name, entry)
    rate = bound.get("learning_rate")
    if rate is None and "learning_rate" not in entry["defaults"]:
        raise Refusal(call, f"{tf_name} without a learning rate")
    varying = fed_rate or (isinstance(rate, cst.Name) and rate.value in schedules)
    if "constant_learning_rate" in entry and varying:
        raise Refusal(call, f"{tf_name} with a varying learning rate is not converted: "
                            f"{entry['constant_learning_rate']}")
    if fed_rate:
        arguments = ["learning_rate=0.0" if a.startswith("learning_rate=") else a for a in arguments]
    return f"tf.keras.optimizers.{entry['keras']}({', '.join(arguments)})"


def convert_schedule(call: cst.Call, tf_name: str) -> tuple[str, cst.BaseExpression]:
    """The Keras schedule for a TF1 decay call, and the global-step expression the TF1 call read."""
    entry = table("optimizers")["schedules"][tf_name]
    arguments, bound = _keras_arguments(call, tf_name, entry, skip=(entry["step"],))
    step = bound.get(entry["step"])
    if step is None:
        raise Refusal(call, f"{tf_name} without its global step")
    return f"tf.keras.optimizers.schedules.{entry['keras']}({', '.join(arguments)})", step


def read_minimize(call: cst.Call, name: str, optimizer: str) -> TrainOp:
    """`optimizer.minimize(...)` as a TrainOp (the optimizer is already converted and named)."""
    bound = bind_arguments(call, _MINIMIZE_SIGNATURE, "minimize")
    if "grad_loss" in bound:
        raise Refusal(bound["grad_loss"], "minimize(grad_loss=...) is not modelled")
    if "loss" not in bound:
        raise Refusal(call, "minimize() without a loss")
    step = bound.get("global_step")
    if step is not None and not isinstance(step, cst.Name):
        raise Refusal(step, "minimize(global_step=...) must name a variable")
    var_list = bound.get("var_list")
    if var_list is not None and not (_is_name_list(var_list) or isinstance(var_list, cst.Name)):
        raise Refusal(var_list, "minimize(var_list=...) must be a list of variable names")
    unused = set(bound) - _MINIMIZE_IGNORED - {"loss", "global_step", "var_list"}
    if unused:
        raise Refusal(call, f"minimize({', '.join(sorted(unused))}=...) is not modelled")
    return TrainOp(name, optimizer, bound["loss"], step.value if step is not None else None, var_list, call)


def _is_name_list(node: cst.BaseExpression) -> bool:
    if not isinstance(node, (cst.List, cst.Tuple)):
        return False
    return all(isinstance(element.value, (cst.Name, cst.Subscript)) and not isinstance(element, cst.StarredElement)
               for element in node.elements)


def minimize_call(value: cst.BaseExpression) -> cst.Call | None:
    """The call when `value` is `<something>.minimize(...)`."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "minimize":
        return value
    return None
