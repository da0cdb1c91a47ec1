"""`tf.trainable_variables()` read by the plain Python of the graph block, e.g.

    model = SiameseModel()
    print(len(tf.trainable_variables()))

TF1 returned the trainable variables created so far, in creation order. TF2 has no collection; the
call becomes the list of the program's own trainable state created before that statement, in the
same order: variables by name, a tf.Module made from a function as its variable attributes
(`tower_module.w1, tower_module.b1`; its `trainable_variables` would sort them by name), a dict of
variables as its values.

`tf.trainable_variables(scope="discriminator")` keeps those whose TF1 name starts with the scope (a
GAN's `var_list`s); bound to a name, that name may be a `minimize(var_list=...)`.

Refused: a scope that is not a plain string literal, the call inside graph code or a session run (it
would be a tensor list there), outside the graph block, and Keras layers created before it (they make
their weights at their first call, which has not happened yet where TF1 already had the variables)."""
from __future__ import annotations

import re

import libcst as cst

from transforms.common.syntax import Refusal, bind_arguments, code, string_value, walk

_TF1_NAME = re.compile(r'name="([^"]+)"')


def variable_list_replacements(block, scanner) -> dict:
    calls = scanner.analyzer.variable_lists
    if not calls:
        return {}
    holders = {id(node): item for item in block.items for node in walk(item.node) if id(node) in calls}
    in_runs = {id(node) for _, run in scanner.run_calls for node in walk(run)}
    instances = {instance: (helper, key[1]) for helper in scanner.module_helpers.values()
                 for key, instance in helper.instances.items()}
    replacements = {}
    for key, call in calls.items():
        item = holders.get(key)
        if item is None or not item.keeps_original or key in in_runs or isinstance(item.node, cst.FunctionDef):
            raise Refusal(call, "tf.trainable_variables() is only converted in plain Python of the graph-building "
                                "code, outside session runs")
        text = "[" + ", ".join(_created_before(block, item.index, instances, call, _scope(call))) + "]"
        replacements[key] = lambda _, text=text: cst.parse_expression(text)
    return replacements


def _scope(call: cst.Call) -> str | None:
    bound = bind_arguments(call, ["scope"], "tf.trainable_variables")
    if "scope" not in bound:
        return None
    scope = string_value(bound["scope"])
    if scope is None or not re.fullmatch(r"[A-Za-z0-9_./-]+", scope) or "." in scope:
        raise Refusal(call, "tf.trainable_variables(scope) with a scope that is not a plain string literal")
    return scope


def _in_scope(tf1_name: str | None, scope: str | None, call: cst.Call) -> bool:
    """TF1 kept the variables whose name matched the scope from the start (re.match)."""
    if scope is None:
        return True
    if tf1_name is None:
        raise Refusal(call, "tf.trainable_variables(scope): a variable's TF1 name is not known statically")
    return tf1_name.startswith(scope)


def _instance_variables(helper, call_scope) -> list[tuple[str, str | None]]:
    """(attribute, TF1 name) of a tf.Module instance's trainable variables, in creation order."""
    prefix = "".join(part + "/" for part in call_scope) if isinstance(call_scope, tuple) else ""
    names = {}
    for scopes, line in helper.init_entries:
        attribute = re.match(r"self\.(\w+) = ", line)
        found = _TF1_NAME.search(line)
        labels = [string_value(cst.parse_expression(scope)) for scope in scopes]  # name_scope("...") arguments
        if attribute and found and None not in labels:
            names[attribute.group(1)] = prefix + "".join(label + "/" for label in labels) + found.group(1)
    return [(attribute, names.get(attribute)) for attribute, trainable in helper.variables if trainable]


def _created_before(block, index: int, instances: dict, call: cst.Call, scope: str | None) -> list[str]:
    pieces: list[str] = []
    seen: set[str] = set()
    for item in block.items[:index]:
        names = list(item.defines) if item.kind.is_state else []
        for name in names + [layer for layer in item.layers if layer in block.layer_objects]:
            if name in seen:
                continue
            seen.add(name)
            if name in instances:
                pieces += [f"{name}.{attribute}" for attribute, tf1_name in _instance_variables(*instances[name])
                           if _in_scope(tf1_name, scope, call)]
            elif name in block.layer_objects:
                raise Refusal(call, f"tf.trainable_variables() after the Keras layer '{name}', which creates its "
                                    "weights only when first called")
            elif name in block.variable_dicts:
                if scope is not None:
                    raise Refusal(call, "tf.trainable_variables(scope) after a dict of variables is not modelled")
                pieces.append(f"*{name}.values()")
            elif block.trainable_state.get(name) and _in_scope(_variable_name(item), scope, call):
                pieces.append(name)
    return pieces


def _variable_name(item) -> str | None:
    """The TF1 name of a converted variable: its `tf.Variable(..., name=...)`."""
    found = _TF1_NAME.search(code(item.emit[0])) if item.emit else None
    return found.group(1) if found else None
