"""`tf.trainable_variables()` read by the plain Python of the graph block, e.g.

    model = SiameseModel()
    print(len(tf.trainable_variables()))

TF1 returned the trainable variables created so far, in creation order. TF2 has no collection; the
call becomes the list of the program's own trainable state created before that statement, in the
same order: variables by name, a tf.Module made from a function as its variable attributes
(`tower_module.w1, tower_module.b1`; its `trainable_variables` would sort them by name), a dict of
variables as its values.

Refused: a scope argument, the call inside graph code or a session run (it would be a tensor list
there), outside the graph block, and Keras layers created before it (they make their weights at
their first call, which has not happened yet where TF1 already had the variables)."""
from __future__ import annotations

import libcst as cst

from transforms._graph_syntax import Refusal, walk


def variable_list_replacements(block, scanner) -> dict:
    calls = scanner.analyzer.variable_lists
    if not calls:
        return {}
    holders = {id(node): item for item in block.items for node in walk(item.node) if id(node) in calls}
    in_runs = {id(node) for _, run in scanner.run_calls for node in walk(run)}
    instances = {instance: helper for helper in scanner.module_helpers.values()
                 for instance in helper.instances.values()}
    replacements = {}
    for key, call in calls.items():
        item = holders.get(key)
        if call.args:
            raise Refusal(call, "tf.trainable_variables(scope) is not modelled")
        if item is None or not item.keeps_original or key in in_runs or isinstance(item.node, cst.FunctionDef):
            raise Refusal(call, "tf.trainable_variables() is only converted in plain Python of the graph-building "
                                "code, outside session runs")
        text = "[" + ", ".join(_created_before(block, item.index, instances, call)) + "]"
        replacements[key] = lambda _, text=text: cst.parse_expression(text)
    return replacements


def _created_before(block, index: int, instances: dict, call: cst.Call) -> list[str]:
    pieces: list[str] = []
    seen: set[str] = set()
    for item in block.items[:index]:
        names = list(item.defines) if item.kind.is_state else []
        for name in names + [layer for layer in item.layers if layer in block.layer_objects]:
            if name in seen:
                continue
            seen.add(name)
            if name in instances:
                pieces += [f"{name}.{attribute}" for attribute, trainable in instances[name].variables if trainable]
            elif name in block.layer_objects:
                raise Refusal(call, f"tf.trainable_variables() after the Keras layer '{name}', which creates its "
                                    "weights only when first called")
            elif name in block.variable_dicts:
                pieces.append(f"*{name}.values()")
            elif block.trainable_state.get(name):
                pieces.append(name)
    return pieces
