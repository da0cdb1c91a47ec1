"""TF1 functional layers (`tf.layers.dense(x, ...)`, `tf.contrib.layers.fully_connected`) -> Keras layer
objects built once next to the other state and called inside the step functions. Parameters follow
transforms/data/layers.json; TF1 defaults are written out where Keras differs, and `training`
(False by default in TF1, as in Keras) is passed explicitly at the call."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import layer_table
from transforms.common.syntax import Refusal, bind_arguments, code, fresh_name, is_literal, string_value


class NameAllocator:
    """Fresh Python names that collide with nothing the file already uses."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def release(self, name: str) -> None:
        """Let a name that the rewrite removes from the program be used again."""
        self.taken.discard(name)

    def fresh(self, base: str) -> str:
        return fresh_name(base, self.taken)


@dataclass
class LayerUse:
    """One layer call: the object it becomes and how the step functions call it."""

    call: cst.Call
    object_name: str
    construction: str
    inputs: list[cst.BaseExpression]
    call_arguments: dict[str, cst.BaseExpression] = field(default_factory=dict)
    has_weights: bool = True
    keras: str = ""
    check_arguments: dict[str, cst.BaseExpression] = field(default_factory=dict)  # call args as the caller sees them
    regularized: bool = False  # built with a regularizer: its `losses` hold TF1's regularization losses

    def __post_init__(self) -> None:
        self.check_arguments = self.check_arguments or dict(self.call_arguments)

    def call_code(self, render: Callable[[cst.BaseExpression], str] = code) -> str:
        arguments = [render(node) for node in self.inputs]
        arguments += [f"{key}={render(value)}" for key, value in self.call_arguments.items()]
        return f"{self.object_name}({', '.join(arguments)})"


class LayerConverter:
    def __init__(self, names: NameAllocator, initializer_code: Callable[[cst.BaseExpression], str | None]) -> None:
        self.names = names
        self.initializer_code = initializer_code
        self.auto_counts: dict[str, int] = {}

    def convert(self, call: cst.Call, tf_name: str) -> LayerUse:
        entry = layer_table()[tf_name]
        bound = bind_arguments(call, entry["signature"], tf_name)
        for parameter in entry["refuse"]:
            if parameter in bound:
                raise Refusal(bound[parameter], f"{tf_name}({parameter}=...) is not modelled")
        count = entry.get("inputs", 1)
        inputs = [bound.pop(parameter, None) for parameter in entry["signature"][:count]]
        if any(node is None for node in inputs):
            raise Refusal(call, f"{tf_name} without all of its inputs")
        call_arguments = {p: bound.pop(p) for p in entry["call"] if p in bound}
        for parameter, default in entry["call"].items():
            call_arguments.setdefault(parameter, cst.parse_expression(default))
        call_renames = entry.get("call_renames", {})
        call_arguments = {call_renames.get(p, p): value for p, value in call_arguments.items()}
        layer_name = self._layer_name(call, bound, entry, tf_name)
        construction = self._construction(call, bound, entry, layer_name, count)
        base = layer_name or self._auto_name(tf_name)
        object_name = self.names.fresh(base if base not in self.names.taken else f"{base}_layer")
        regularized = any(entry["renames"].get(p, p).endswith("_regularizer") and code(value) != "None"
                          for p, value in bound.items())
        return LayerUse(call, object_name, construction, inputs, call_arguments, entry["weights"], entry["keras"],
                        regularized=regularized)

    def _layer_name(self, call: cst.Call, bound: dict, entry: dict, tf_name: str) -> str | None:
        key = "scope" if "scope" in entry["renames"] else "name"
        if key not in bound:
            return None
        literal = string_value(bound[key])
        if literal is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", literal):
            raise Refusal(bound[key], f"{tf_name} name must be a plain string literal (Keras names cannot hold '/')")
        return literal

    def _auto_name(self, tf_name: str) -> str:
        """TF1's own default scope name for the layer (dense, dense_1, ...), which Keras also uses."""
        base = tf_name.rsplit(".", 1)[-1]
        count = self.auto_counts.get(base, 0)
        self.auto_counts[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def _construction(self, call: cst.Call, bound: dict, entry: dict, layer_name: str | None, count: int) -> str:
        first_parameter = entry["signature"][count] if len(entry["signature"]) > count else None
        positional_first = len(call.args) > count and call.args[count].keyword is None
        arguments = []
        for parameter in entry["signature"][count:]:
            if parameter in entry["drop"] or parameter in entry["call"]:
                continue
            keras_name = entry["renames"].get(parameter, entry.get("complements", {}).get(parameter, parameter))
            if keras_name == "name" and layer_name is not None:
                arguments.append(f"name={layer_name!r}")
            elif parameter in entry.get("none", {}) and code(bound.get(parameter, cst.Name("_"))) == "None":
                arguments.append(entry["none"][parameter])
            elif parameter in bound:
                value = self.initializer_code(bound[parameter]) or code(bound[parameter])
                if parameter in entry.get("complements", {}):
                    atomic = is_literal(bound[parameter]) or isinstance(bound[parameter], (cst.Name, cst.Attribute, cst.Call))
                    value = f"1 - {value}" if atomic else f"1 - ({value})"
                plain = parameter == first_parameter and positional_first
                arguments.append(value if plain else f"{keras_name}={value}")
            elif keras_name in entry["defaults"]:
                arguments.append(f"{keras_name}={entry['defaults'][keras_name]}")
        complements = entry.get("complements", {})
        known = {entry["renames"].get(p, complements.get(p, p)) for p in entry["signature"]}
        arguments += [f"{key}={value}" for key, value in entry["defaults"].items() if key not in known]
        return f"tf.keras.{entry.get('module', 'layers')}.{entry['keras']}({', '.join(arguments)})"
