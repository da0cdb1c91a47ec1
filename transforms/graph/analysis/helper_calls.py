"""Calls of the program's own functions from graph statements: a function that creates variables
becomes a tf.Module instance (transforms/graph/structure/modules.py), one that calls such functions
gets an instance for each of its calls of them (transforms/graph/structure/module_composites.py), one
that builds layers gets its layers built once (transforms/graph/layers/model_functions.py,
transforms/graph/rnn/model_functions.py for RNNs), one that only computes is simply called from the
step functions."""
from __future__ import annotations

from transforms.graph.layers.model_functions import convert_layer_helper, is_layer_helper
from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.rnn.model_functions import convert_rnn_helper, is_rnn_helper
from transforms.graph.analysis.model import Item
from transforms.common.syntax import Refusal
from transforms.graph.structure.module_composites import convert_module_composite, variable_functions_called
from transforms.graph.structure.modules import instantiate, is_variable_helper, plan_module


def helper_layer_uses(scanner, item: Item, facts) -> list[LayerUse]:
    """The Keras objects / modules built at `item` for the helpers its statement calls. Layers of a
    module-level model function are noted for module level instead (they are not returned)."""
    uses = []
    for call in facts.helper_call_nodes:
        helper = scanner.helper_defs[call.func.value]
        name = helper.name.value
        factories = scanner.state.factories
        if is_variable_helper(helper, scanner.analyzer, factories) and name not in factories:
            if name not in scanner.module_helpers:
                scanner.module_helpers[name] = plan_module(helper, call, scanner.analyzer, scanner.names,
                                                           scanner.initializer_code, factories)
            uses.append(instantiate(scanner.module_helpers[name], call, scanner.analyzer, scanner.names,
                                    item.scopes.prefix(True), item.scopes.reuse, factories))
            scanner.module_calls.append(call)
            facts.helper_calls.discard(name)  # no longer a helper that must only compute
        elif inner_calls := variable_functions_called(helper, scanner):
            converted = convert_module_composite(scanner, helper, call, inner_calls, item.scopes.prefix(True),
                                                 item.scopes.reuse)
            uses += _model_function_uses(scanner, item, helper, converted)
        elif is_layer_helper(helper, scanner.analyzer) or is_rnn_helper(helper, scanner.analyzer):
            if item.scopes.reuse:
                raise Refusal(call, f"'{name}' builds layers after `reuse_variables()`; reusing layers this way "
                                    "is not modelled")
            runs_rnns = is_rnn_helper(helper, scanner.analyzer)
            if runs_rnns and name in scanner.converted_helpers:
                raise Refusal(call, f"'{name}' runs RNNs and is called more than once (each call built new ones)")
            converted = convert_layer_helper(scanner, helper, call)
            converted += convert_rnn_helper(scanner, helper) if runs_rnns else []
            uses += _model_function_uses(scanner, item, helper, converted)
    return uses


def _model_function_uses(scanner, item: Item, helper, converted: list[LayerUse]) -> list[LayerUse]:
    """The objects a model function's call converted: built at `item` when the function is one of the
    graph statements, else noted for module level (none returned)."""
    scanner.helper_layer_uses += converted
    if helper in scanner.block.statements:
        return converted
    layers = scanner.module_layers.setdefault(helper.name.value, converted)  # a reusing call converts none
    item.layers += [use.object_name for use in layers]
    scanner.block.layer_objects.update(use.object_name for use in converted if use.has_weights)
    return []
