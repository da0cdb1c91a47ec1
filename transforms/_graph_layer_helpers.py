"""Model functions that build layers (`def inference(images): net = tf.layers.conv2d(images, ...)`):
when graph code calls one exactly once, its layers become Keras objects built once beside the other
state, and the function itself stays, now calling those objects: a forward pass the step functions
call. (A second call would have built a second set of layers in TF1: that is refused.)"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from transforms._graph_api import Category
from transforms._graph_layers import LayerUse
from transforms._graph_syntax import Refusal, load_names, walk


def is_layer_helper(helper: cst.FunctionDef, analyzer) -> bool:
    return any(isinstance(node, cst.Call) and analyzer.category(node.func)[1] is Category.LAYER
               for node in walk(helper.body))


def convert_layer_helper(scanner, helper: cst.FunctionDef, call: cst.Call) -> list[LayerUse]:
    """The Keras objects for the layers `helper` builds, checked to depend on nothing local to it."""
    name = helper.name.value
    if name in scanner.converted_helpers:
        raise Refusal(call, f"'{name}' builds layers and is called more than once (each call built new ones)")
    scanner.converted_helpers.add(name)
    arguments = _call_site_arguments(helper, call)
    uses = []
    for node in walk(helper.body):
        if isinstance(node, cst.Call) and scanner.analyzer.category(node.func)[1] is Category.LAYER:
            use = scanner.layers.convert(node, scanner.analyzer.category(node.func)[0])
            _check_construction(scanner, helper, node, use)
            use.check_arguments = {key: arguments.get(value.value, value) if isinstance(value, cst.Name) else value
                                   for key, value in use.call_arguments.items()}
            uses.append(use)
    return uses


def _call_site_arguments(helper: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """Helper parameter -> the expression the call passes for it."""
    params = [param.name.value for param in helper.params.params]
    bound = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise Refusal(arg, f"*args/**kwargs in a call of '{helper.name.value}'")
        key = arg.keyword.value if arg.keyword else (params[index] if index < len(params) else None)
        if key is None:
            raise Refusal(arg, f"too many arguments for '{helper.name.value}'")
        bound[key] = arg.value
    return bound


def _check_construction(scanner, helper: cst.FunctionDef, call: cst.Call, use: LayerUse) -> None:
    """Layer settings are evaluated once, outside the function: they must not read its locals."""
    passed = {id(node) for node in [*use.inputs, *use.call_arguments.values()]}
    for arg in call.args:
        if id(arg.value) in passed:
            continue
        for name in load_names(arg.value):
            scope = scanner.resolver.transform.get_metadata(ScopeProvider, name, None)
            if scope is not None and getattr(scope, "node", None) is helper and name.value in scope.assignments:
                raise Refusal(name, f"layer settings in '{helper.name.value}' depend on its local '{name.value}'")
