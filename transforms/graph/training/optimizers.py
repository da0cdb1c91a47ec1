"""TF1 training pieces -> TF2: `tf.train.*Optimizer` -> Keras 3 optimizer (hyper-parameters renamed,
TF1 defaults kept where Keras differs; where no Keras optimizer updates as TF1 did, a class written
into the file that runs TF1's kernels, see tf1_optimizer_classes.py), `tf.train.*_decay` -> Keras learning-rate schedule (stepped by
`optimizer.iterations`, which equals the TF1 global step when only this optimizer increments it),
and `optimizer.minimize(loss, global_step=..., var_list=...)` read into a TrainOp."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import table
from transforms.graph.analysis.model import TrainOp
from transforms.common.syntax import Refusal, bind_arguments, code, is_literal

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


def convert_optimizer(call: cst.Call, tf_name: str, schedules: set[str], fed_rate: bool = False) -> tuple[str, str | None]:
    """The Keras optimizer for a TF1 optimizer call, and the TF1-emulating class it constructs (None
    for a stock Keras optimizer). `schedules`: names bound to converted schedules; `fed_rate`: the
    rate is fed each step (the optimizer starts at 0.0 and the step sets it)."""
    entry = table("optimizers")["optimizers"][tf_name]
    rate = learning_rate_argument(call, tf_name)
    if rate is None and "learning_rate" not in entry["defaults"]:
        raise Refusal(call, f"{tf_name} without a learning rate")
    varying = fed_rate or (isinstance(rate, cst.Name) and rate.value in schedules)
    emulation = entry.get("emulation") or (entry.get("varying_rate_emulation") if varying else None)
    if emulation:
        arguments, constructor = _tf1_arguments(call, tf_name, entry), emulation
    else:
        arguments, constructor = _keras_arguments(call, tf_name, entry)[0], f"tf.keras.optimizers.{entry['keras']}"
    if fed_rate:
        arguments = ["learning_rate=0.0" if a.startswith("learning_rate=") else a for a in arguments]
    return f"{constructor}({', '.join(arguments)})", emulation


def _tf1_arguments(call: cst.Call, tf_name: str, entry: dict) -> list[str]:
    """The call's arguments by their TF1 keywords: an emulating class takes TF1's parameters and defaults."""
    bound = bind_arguments(call, entry["signature"], tf_name)
    return [f"{parameter}={code(bound[parameter])}" for parameter in entry["signature"]
            if parameter in bound and parameter not in entry["drop"]]


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
    if var_list is not None and not _is_variable_list(var_list):
        raise Refusal(var_list, "minimize(var_list=...) must be a list of variable names")
    unused = set(bound) - _MINIMIZE_IGNORED - {"loss", "global_step", "var_list"}
    if unused:
        raise Refusal(call, f"minimize({', '.join(sorted(unused))}=...) is not modelled")
    return TrainOp(name, optimizer, bound["loss"], step.value if step is not None else None, var_list, call)


_CREATE_TRAIN_OP_SIGNATURE = ["total_loss", "optimizer", "global_step", "update_ops", "variables_to_train",
                              "clip_gradient_norm", "summarize_gradients", "gate_gradients", "aggregation_method",
                              "colocate_gradients_with_ops", "gradient_multipliers", "check_numerics"]


def read_create_train_op(call: cst.Call, name: str, optimizer: str, global_steps: set[str]) -> TrainOp:
    """`slim.learning.create_train_op(total_loss, optimizer, ...)` as a TrainOp. slim computes the
    gradients of every trainable variable (or `variables_to_train`), clips each to
    `clip_gradient_norm` on its own, applies them after the UPDATE_OPS (batch-norm statistics),
    increments the global step (the program's own, created by default), and the op evaluates to the
    loss, checked for inf / nan."""
    bound = bind_arguments(call, _CREATE_TRAIN_OP_SIGNATURE, "create_train_op")
    for parameter in ("aggregation_method", "gradient_multipliers", "summarize_gradients"):
        if parameter in bound and code(bound[parameter]) not in ("None", "False"):
            raise Refusal(bound[parameter], f"create_train_op({parameter}=...) is not modelled")
    if code(bound.get("update_ops", cst.Name("None"))) != "None":
        raise Refusal(bound["update_ops"], "create_train_op(update_ops=...) other than the UPDATE_OPS collection")
    if code(bound.get("check_numerics", cst.Name("True"))) not in ("True", "False"):
        raise Refusal(bound["check_numerics"], "create_train_op(check_numerics=...) must be True or False")
    step = bound.get("global_step")
    if step is None:  # slim's default: the graph's global step, which it creates when there is none
        step_name = next(iter(global_steps)) if len(global_steps) == 1 else None
        if len(global_steps) > 1:
            raise Refusal(call, "create_train_op with several global steps in the program")
    elif isinstance(step, cst.Name):
        step_name = None if step.value == "None" else step.value
    else:
        raise Refusal(step, "create_train_op(global_step=...) must name a variable")
    var_list = bound.get("variables_to_train")
    if var_list is not None and not _is_variable_list(var_list):
        raise Refusal(var_list, "create_train_op(variables_to_train=...) must be a list of variable names")
    clip = bound.get("clip_gradient_norm")
    if clip is not None and not is_literal(clip):
        raise Refusal(clip, "create_train_op(clip_gradient_norm=...) must be a number")
    clip = clip if clip is not None and code(clip) not in ("0", "0.0") else None
    return TrainOp(name, optimizer, bound["total_loss"], step_name, var_list, call, runs_update_ops=True,
                   clip_norm=clip, returns_loss=True,
                   check_numerics=code(bound.get("check_numerics", cst.Name("True"))) == "True")


def create_train_op_call(value: cst.BaseExpression, category) -> cst.Call | None:
    """The call when `value` is slim's `create_train_op(...)` (`category` resolves a callee's TF name)."""
    if isinstance(value, cst.Call) and category(value.func)[0] in _CREATE_TRAIN_OPS:
        return value
    return None


_CREATE_TRAIN_OPS = ("tf.contrib.slim.learning.create_train_op",)


def _is_variable_list(node: cst.BaseExpression) -> bool:
    """A list display of variable names, a name holding a list of variables, or lists of those
    concatenated (`theta_G + theta_Q`): the train_ops reader checks what each name holds."""
    return all(_is_name_list(part) or isinstance(part, cst.Name) for part in concatenated_lists(node))


def concatenated_lists(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `a + b + ...` in order (just `node` when it is not such a sum)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return [*concatenated_lists(node.left), *concatenated_lists(node.right)]
    return [node]


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
