"""Rewrites outside the graph statements themselves: layers of a module-level model function built
right after it, functions that created variables replaced by their tf.Module classes, and TF1
initializer objects left in plain code replaced by the Keras initializers they stand for."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.writing.step_functions import layer_call
from transforms.graph.writing.state import convert_initializer
from transforms.common.syntax import Refusal, load_names, statement, walk


def outside_replacements(resolver, block, scanner) -> dict:
    replacements = {id(use.call): layer_call(use) for use in scanner.helper_layer_uses}
    replacements.update(scanner.helper_rewrites)
    replacements.update(_initializers(block, scanner))
    replacements.update(_module_layers(resolver, scanner))
    replacements.update(_module_classes(resolver, scanner))
    return replacements


def _module_layers(resolver, scanner) -> dict:
    """Layers of a module-level model function are built right after it, at module level."""
    replacements = {}
    global_scope = resolver.scope(resolver.module.body[0])
    for name, uses in scanner.module_layers.items():
        helper = scanner.helper_defs[name]
        statements = [statement(f"{use.object_name} = {use.construction}") for use in uses]
        created = {use.object_name for use in uses}
        for node in (n for s in statements for n in load_names(s) if n.value not in created):
            bound = [resolver.line(a.node) for a in global_scope.assignments[node.value]]
            if bound and min(bound) > resolver.line(helper):
                raise Refusal(helper, f"layers of '{name}' read '{node.value}', defined further down")
        statements[0] = statements[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)] * 2)
        replacements[id(helper)] = lambda updated, statements=statements: cst.FlattenSentinel([updated, *statements])
    return replacements


def _module_classes(resolver, scanner) -> dict:
    """Functions that created variables become their tf.Module classes; nothing but the converted
    calls may use them."""
    calls = {id(call.func) for call in scanner.module_calls}
    replacements = {}
    for helper in scanner.module_helpers.values():
        function = helper.function
        for assignment in resolver.assignments_of(function.name):
            for access in assignment.references:
                if id(access.node) not in calls:
                    raise Refusal(access.node, f"'{function.name.value}' creates variables and is used "
                                               "other than as a graph-building call")
        class_node = cst.parse_statement(helper.class_code())
        replacements[id(function)] = lambda _, node=class_node, old=function: node.with_changes(
            leading_lines=old.leading_lines)
    return replacements


def _initializers(block, scanner) -> dict:
    """TF1 initializer objects left in plain Python code (e.g. a helper returning
    `tf.constant_initializer(...)` for a layer) become the Keras initializers they stand for."""
    replacements = {}
    for item in block.items:
        if not item.keeps_original:
            continue
        for node in walk(item.node):
            if isinstance(node, cst.Call):
                name, category, _ = scanner.analyzer.category(node.func)
                if category is Category.INITIALIZER:
                    replacements[id(node)] = lambda updated, name=name: cst.parse_expression(
                        convert_initializer(updated, name))
    return replacements
