"""Model functions built from the program's variable-making functions, e.g.

    def conv_layer(bottom, shape, name):
        with tf.variable_scope(name):
            filt = tf.get_variable("filter", shape, ...)
            return tf.nn.relu(tf.nn.conv2d(bottom, filt, [1, 1, 1, 1], "SAME"))

    def vgg(images):
        conv1 = conv_layer(images, [3, 3, 3, 64], "conv1")
        ...

When graph code calls such a model function, each call it makes of a variable-making function becomes
a tf.Module instance (transforms/graph/structure/modules.py), created right after the model function
at module level, and the model function stays, now calling those instances: the forward pass the
step functions call. The arguments of the calls inside are sorted as for a call in graph code:
tensors (the model function's tensor parameters and what it computes from them) are the instance's
inputs; the others configure variables made once, so they must be known at the model function's call
(literals, passed or left at their defaults, and module-level constants).

`with tf.variable_scope("generator"):` / `tf.name_scope` blocks in the model function only named what
it built; they are unwrapped, and a variable scope's name goes into the TF1 names of the variables
of the instances made inside it (which name-filtered variable lists and checkpoints read).

A second call must reuse the first one's variables: `with tf.variable_scope("D", reuse=reuse):` around
the calls, given True (or tf.AUTO_REUSE) by the call, or the call made after `scope.reuse_variables()`,
with the same settings, and functions whose variables all come from tf.get_variable (tf.Variable
ignores reuse); it then calls the same instances, as TF1's scope handed back the same variables (a
GAN's discriminator on real, then generated data).

Refused: any other second call of the model function (TF1 made a second set of variables, or raised),
layers or RNNs built by the model function itself, scopes with other settings or a name that is not a
string literal, a variable-making function defined below it (its class would not exist yet where the
instances are made), and arguments that are neither tensors nor known."""
from __future__ import annotations

import libcst as cst

from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.layers.model_functions import call_site_arguments, literal_parameters, module_constants, scope_blocks
from transforms.graph.structure.modules import is_graph_expression, instantiate, is_variable_helper, plan_module
from transforms.graph.structure.scope_reuse import reuse_mode, reuse_parameter
from transforms.common.graph_symbols import Category
from transforms.common.syntax import Refusal, code, load_names, replace_nodes, string_value, walk


def variable_functions_called(helper: cst.FunctionDef, scanner) -> list[cst.Call]:
    """The calls `helper` makes of the program's functions that create variables."""
    factories = scanner.state.factories
    return [node for node in walk(helper.body)
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in scanner.helper_defs
            and node.func.value not in factories
            and is_variable_helper(scanner.helper_defs[node.func.value], scanner.analyzer, factories)]


def convert_module_composite(scanner, helper: cst.FunctionDef, call: cst.Call, inner_calls: list[cst.Call],
                             scope: str, reusing_scope: bool) -> list[LayerUse]:
    """The tf.Module instances `inner_calls` (its calls of variable-making functions) become, for the
    call `call` of `helper` from graph code; none for a call that reuses the variables of an earlier
    one. `scope`: the variable-scope path of the call; `reusing_scope`: whether that scope was told
    `reuse_variables()`."""
    name = helper.name.value
    reuse = reuse_parameter(helper, scanner.analyzer, Category.VARIABLE)
    arguments = call_site_arguments(helper, call)
    if reusing_scope and reuse is not None:
        raise Refusal(call, f"'{name}' sets its own reuse inside a scope told `reuse_variables()`")
    mode = "True" if reusing_scope else reuse_mode(helper, reuse, arguments, scanner.analyzer, call)
    reusing = name in scanner.converted_helpers
    if reusing and mode == "False":
        raise Refusal(call, f"'{name}' makes variables through '{inner_calls[0].func.value}' and is called again "
                            "without reusing them (each call made new ones)")
    if not reusing and mode == "True":
        raise Refusal(call, f"'{name}' is called with reuse=True before a call made its variables (TF1 raises here)")
    if not reusing:
        _check_builds_nothing_else(scanner, helper)
        scanner.converted_helpers.add(name)
        scanner.helper_scope_blocks += scope_blocks(scanner, helper, reuse)
    constants = literal_parameters(helper, arguments, module_constants(scanner.resolver.module, helper))
    scope_paths = _variable_scope_paths(scanner, helper, constants, helper.body, scope, {})
    tensors = _tensor_names(scanner, helper, arguments)
    local = {assignment.name for assignment in scanner.resolver.scope(helper.body.body[0]).assignments}

    def is_tensor(node: cst.BaseExpression) -> bool:
        return any(n.value in tensors for n in load_names(node))

    factories = scanner.state.factories
    uses = []
    for inner in inner_calls:
        function = scanner.helper_defs[inner.func.value]
        if scanner.resolver.line(function) > scanner.resolver.line(helper):
            raise Refusal(inner, f"'{function.name.value}' is defined below '{name}', which calls it: its tf.Module "
                                 "class would not exist yet where the instances are made")
        known = _with_known_values(inner, constants, local, is_tensor, name)
        try:
            if function.name.value not in scanner.module_helpers:
                scanner.module_helpers[function.name.value] = plan_module(
                    function, known, scanner.analyzer, scanner.names, scanner.initializer_code, factories, is_tensor)
            use = instantiate(scanner.module_helpers[function.name.value], known, scanner.analyzer, scanner.names,
                              scope_paths[id(inner)], reusing, factories, is_tensor)
        except Refusal as refusal:
            if refusal.node is known:  # the call as written, not its copy with known values
                raise Refusal(inner, refusal.message) from refusal
            raise
        if not reusing:
            use.call = inner
            scanner.module_calls.append(inner)
            uses.append(use)
    return uses


def _check_builds_nothing_else(scanner, helper: cst.FunctionDef) -> None:
    """Layers and RNNs built in the model function itself are not converted along with the instances."""
    for node in walk(helper.body):
        if isinstance(node, cst.Call):
            tf_name, category, _ = scanner.analyzer.category(node.func)
            if category in (Category.LAYER, Category.RNN_CELL, Category.RNN_RUN):
                raise Refusal(node, f"'{helper.name.value}' builds {category.value}s ({tf_name}) beside the functions "
                                    "it calls that make variables; this mix is not modelled")


def _variable_scope_paths(scanner, helper: cst.FunctionDef, constants: dict[str, cst.BaseExpression],
                          node: cst.CSTNode, path: str, paths: dict[int, str]) -> dict[int, str]:
    """id of each call in `node` -> the variable-scope path it sits in ("generator/")."""
    if isinstance(node, cst.Call):
        paths[id(node)] = path
    if isinstance(node, cst.With):
        path += _variable_scope_label(scanner, helper, constants, node.items[0].item)
    for child in node.children:
        _variable_scope_paths(scanner, helper, constants, child, path, paths)
    return paths


def _variable_scope_label(scanner, helper: cst.FunctionDef, constants: dict[str, cst.BaseExpression],
                          item: cst.BaseExpression) -> str:
    if not (isinstance(item, cst.Call) and scanner.analyzer.category(item.func)[0] == "tf.variable_scope"):
        return ""
    name = item.args[0].value if item.args else None
    if isinstance(name, cst.Name) and name.value in constants:
        name = constants[name.value]
    label = string_value(name) if name is not None else None
    if label is None:
        raise Refusal(item, f"a variable scope in '{helper.name.value}' whose name is not a string literal: the "
                            "TF1 names of the variables made in it are not known")
    return label + "/"


def _tensor_names(scanner, helper: cst.FunctionDef, arguments: dict[str, cst.BaseExpression]) -> set[str]:
    """The parameters `helper` is given tensors for, and its locals computed from them or from the
    functions it calls (which return tensors)."""
    tensors = {p for p, value in arguments.items() if is_graph_expression(scanner.analyzer, value)}
    assignments = [node for node in walk(helper.body) if isinstance(node, (cst.Assign, cst.AugAssign))]
    changed = True
    while changed:
        changed = False
        for node in assignments:
            value_names = {n.value for n in load_names(node.value)}
            calls = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in scanner.helper_defs
                        for n in walk(node.value))
            if not (value_names & tensors or calls):
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for name in (n.value for target in targets for n in walk(target) if isinstance(n, cst.Name)):
                if name not in tensors:
                    tensors.add(name)
                    changed = True
    return tensors


def _with_known_values(inner: cst.Call, constants: dict[str, cst.BaseExpression], local: set[str], is_tensor,
                       composite: str) -> cst.Call:
    """`inner` with the model function's parameters that hold a constant replaced by it, in the
    arguments that are not tensors; refused where such an argument reads another of its names."""
    args = []
    for arg in inner.args:
        if is_tensor(arg.value):
            args.append(arg)
            continue
        unknown = sorted({n.value for n in load_names(arg.value)} & local - set(constants))
        if unknown:
            raise Refusal(arg, f"'{inner.func.value}' is given '{code(arg.value)}' in '{composite}': "
                               f"'{unknown[0]}' is not known at its call, and it configures variables made once")
        replacements = {id(n): (lambda _, value=constants[n.value]: value)
                        for n in load_names(arg.value) if n.value in constants}
        args.append(arg.with_changes(value=replace_nodes(arg.value, replacements)))
    return inner.with_changes(args=args)
