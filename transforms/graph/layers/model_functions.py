"""Model functions that build layers (`def inference(images): net = tf.layers.conv2d(images, ...)`):
when graph code calls one exactly once, its layers become Keras objects built once beside the other
state, and the function itself stays, now calling those objects: a forward pass the step functions
call. A second call built a second set of layers in TF1 and is refused, unless the layers sit in
`with tf.variable_scope(<name>, reuse=<parameter>):` and the call passes True (or tf.AUTO_REUSE) for
it, with the same layer settings: TF1 handed back the same variables, as calling the same Keras
objects does (a GAN's discriminator on real, then generated images)."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from transforms.common.graph_symbols import Category
from transforms.graph.layers.keras_layers import LayerUse
from transforms.common.syntax import Refusal, bind_arguments, code, is_literal, load_names, replace_nodes, walk
from transforms.graph.structure.scope_reuse import reuse_mode, reuse_parameter

# tf.variable_scope's parameters; tf.name_scope(name, default_name, values) binds the same first three.
_SCOPE_PARAMETERS = ["name_or_scope", "default_name", "values", "initializer", "regularizer", "caching_device",
                     "partitioner", "custom_getter", "reuse", "dtype", "use_resource", "constraint",
                     "auxiliary_name_scope"]


def is_layer_helper(helper: cst.FunctionDef, analyzer) -> bool:
    return any(isinstance(node, cst.Call) and analyzer.category(node.func)[1] is Category.LAYER
               for node in walk(helper.body))


def convert_layer_helper(scanner, helper: cst.FunctionDef, call: cst.Call) -> list[LayerUse]:
    """The Keras objects for the layers `helper` builds, checked to depend on nothing local to it;
    none for a call that reuses the layers an earlier call built."""
    name = helper.name.value
    reuse = reuse_parameter(helper, scanner.analyzer, Category.LAYER)
    arguments = call_site_arguments(helper, call)
    mode = reuse_mode(helper, reuse, arguments, scanner.analyzer, call)
    constants = literal_parameters(helper, arguments, module_constants(scanner.resolver.module, helper))
    if name in scanner.converted_helpers:
        _check_reusing_call(scanner, helper, call, mode, _settings(helper, arguments, constants, reuse))
        return []
    if mode == "True":
        raise Refusal(call, f"'{name}' is called with reuse=True before a call built its layers (TF1 raises here)")
    scanner.converted_helpers.add(name)
    scanner.helper_scope_blocks += scope_blocks(scanner, helper, reuse)
    uses = []
    for node in walk(helper.body):
        if isinstance(node, cst.Call) and scanner.analyzer.category(node.func)[1] is Category.LAYER:
            use = scanner.layers.convert(node, scanner.analyzer.category(node.func)[0])
            _check_construction(scanner, helper, node, use, constants)
            use.construction = _substituted(use.construction, constants)
            use.check_arguments = {key: arguments.get(value.value, value) if isinstance(value, cst.Name) else value
                                   for key, value in use.call_arguments.items()}
            uses.append(use)
    scanner.layer_helper_settings[name] = _settings(helper, arguments, constants, reuse, uses)
    return uses


def _settings(helper: cst.FunctionDef, arguments: dict[str, cst.BaseExpression],
              constants: dict[str, cst.BaseExpression], reuse: str | None,
              uses: list[LayerUse] | None = None) -> dict[str, str]:
    """What a call passes for the parameters that configure the layers (literal settings, and the
    parameters the layers are called with, such as `training=`): parameter -> code. Without `uses`,
    every parameter but the reuse one (a reusing call is compared on the building call's keys)."""
    parameters = {param.name.value: param.default for param in helper.params.params}
    if uses is None:
        keys = set(parameters) - {reuse}
    else:
        keys = (set(constants) | {name.value for use in uses for value in use.call_arguments.values()
                                  for name in load_names(value) if name.value in parameters}) - {reuse}
    values = {key: arguments.get(key, parameters.get(key)) for key in keys}
    return {key: code(value) for key, value in values.items() if value is not None}


def _check_reusing_call(scanner, helper: cst.FunctionDef, call: cst.Call, mode: str, settings: dict[str, str]) -> None:
    name = helper.name.value
    if mode == "False":
        raise Refusal(call, f"'{name}' builds layers and is called more than once without reusing them "
                            "(each call built new ones)")
    built = scanner.layer_helper_settings[name]
    changed = sorted(key for key, value in built.items() if settings.get(key) != value)
    if changed:
        raise Refusal(call, f"'{name}' reuses its layers with another '{changed[0]}' than the call that built them")
    for use in scanner.module_layers.get(name, []):
        _check_settings_without_calls(scanner, helper, use)


def _check_settings_without_calls(scanner, helper: cst.FunctionDef, use: LayerUse) -> None:
    """A reusing call evaluated the layer's settings again in TF1, only to ignore them: a call of the
    program's own there (`kernel_initializer=init(3, 4)` drawing from a NumPy RandomState) ran once
    more, which the layer built once does not repeat."""
    for setting in _settings_arguments(use.call, use):
        for node in walk(setting):
            if isinstance(node, cst.Call) and scanner.analyzer.category(node.func)[0] is None:
                raise Refusal(node, f"'{helper.name.value}' is called again, and its layer settings call "
                                    f"'{code(node.func)}' at each call (TF1 evaluated them again)")


def scope_blocks(scanner, helper: cst.FunctionDef, reuse: str | None) -> list[cst.With]:
    """`with tf.variable_scope("LeNet"):` / `tf.name_scope` blocks in a model function: they only named
    the variables and ops, and the variables are now the layers' own, built outside the function, so
    the blocks are unwrapped (scopes that change what is built, such as `initializer`, are refused;
    `reuse=<the reuse parameter>` is what calling the same layers again does)."""
    blocks = []
    items = {id(item.item): node for node in walk(helper.body) if isinstance(node, cst.With) for item in node.items}
    for node in walk(helper.body):
        if not (isinstance(node, cst.Call) and scanner.analyzer.category(node.func)[1] is Category.SCOPE):
            continue
        block = items.get(id(node))
        if block is None or len(block.items) != 1 or block.items[0].asname is not None:
            raise Refusal(node, f"a scope in '{helper.name.value}' that is not the only item of its `with`")
        bound = bind_arguments(node, _SCOPE_PARAMETERS, "scope")
        extra = set(bound) - {"name_or_scope", "default_name", "values"}
        if reuse is not None and isinstance(bound.get("reuse"), cst.Name) and bound["reuse"].value == reuse:
            extra.discard("reuse")
        if extra:
            raise Refusal(node, f"a scope with {sorted(extra)[0]}= in '{helper.name.value}' changes the layers "
                                "it builds")
        blocks.append(block)
    return blocks


def call_site_arguments(helper: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression]:
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


def literal_parameters(helper: cst.FunctionDef, arguments: dict, module_constants: set[str]) -> dict[str, cst.BaseExpression]:
    """Parameters that hold a constant at the one call (a literal, passed or left at its default, or a
    module-level constant defined before the function) and that the function never rebinds: layer
    settings may read them, as that constant."""
    rebound = {name.value for node in walk(helper.body) if isinstance(node, (cst.AssignTarget, cst.AugAssign))
               for name in walk(node.target) if isinstance(name, cst.Name)}
    constants = {}
    for param in helper.params.params:
        value = arguments.get(param.name.value, param.default)
        constant = value is not None and (is_literal(value) or (isinstance(value, cst.Name) and value.value in module_constants))
        if constant and param.name.value not in rebound:
            constants[param.name.value] = value
    return constants


def module_constants(module: cst.Module, helper: cst.FunctionDef) -> set[str]:
    """Names bound once in the whole module, to a literal, by a module-level statement before `helper`."""
    counts: dict[str, int] = {}
    for node in walk(module):
        targets = [node.target] if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)) else []
        for target in targets:
            for name in walk(target):
                if isinstance(name, cst.Name):
                    counts[name.value] = counts.get(name.value, 0) + 1
    constants = set()
    for statement in module.body:
        if statement is helper:
            break
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (isinstance(small, cst.Assign) and len(small.targets) == 1 and is_literal(small.value)
                        and isinstance(small.targets[0].target, cst.Name)):
                    constants.add(small.targets[0].target.value)
    return {name for name in constants if counts.get(name) == 1}


def _substituted(construction: str, constants: dict[str, cst.BaseExpression]) -> str:
    """A layer construction with the function's literal parameters replaced by their values."""
    tree = cst.parse_expression(construction)
    replacements = {id(name): (lambda _, value=constants[name.value]: value)
                    for name in load_names(tree) if name.value in constants}
    return code(replace_nodes(tree, replacements))


def _check_construction(scanner, helper: cst.FunctionDef, call: cst.Call, use: LayerUse,
                        constants: dict[str, cst.BaseExpression]) -> None:
    """Layer settings are evaluated once, outside the function: they must not read its locals (other
    than parameters holding a literal at the one call)."""
    for setting in _settings_arguments(call, use):
        for name in load_names(setting):
            scope = scanner.resolver.transform.get_metadata(ScopeProvider, name, None)
            if name.value in constants and _is_parameter(helper, name.value):
                continue
            if scope is not None and getattr(scope, "node", None) is helper and name.value in scope.assignments:
                raise Refusal(name, f"layer settings in '{helper.name.value}' depend on its local '{name.value}'")


def _settings_arguments(call: cst.Call, use: LayerUse) -> list[cst.BaseExpression]:
    """The arguments of a layer call that configure the layer: not its inputs, nor what it is called with."""
    passed = {id(node) for node in [*use.inputs, *use.call_arguments.values()]}
    return [arg.value for arg in call.args if id(arg.value) not in passed]


def _is_parameter(helper: cst.FunctionDef, name: str) -> bool:
    return any(param.name.value == name for param in helper.params.params)
