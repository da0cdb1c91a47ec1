"""`tf.trainable_variables()` read by the plain Python of the graph block, e.g.

    model = SiameseModel()
    print(len(tf.trainable_variables()))

TF1 returned the trainable variables created so far, in creation order. TF2 has no collection; the
call becomes the list of the program's own trainable state created before that statement, in the
same order: variables by name, a tf.Module made from a function as its variable attributes
(`tower_module.w1, tower_module.b1`; its `trainable_variables` would sort them by name), a dict of
variables as its values.

`tf.trainable_variables(scope="discriminator")`, or `tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
"discriminator")`, keeps those whose TF1 name starts with the scope (a GAN's `var_list`s); bound to a
name, that name may be a `minimize(var_list=...)`. So may a name bound to the list filtered by TF1
name, `d_vars = [var for var in t_vars if 'd_' in var.name]` (or `var.name.startswith('d_')`), over
`t_vars = tf.trainable_variables()` or the call itself: the comprehension becomes the variables TF1's
names selected, decided here from those names, since the TF2 variables' own names need not be TF1's.

In graph code the call may be what a comprehension iterates, its conditions tests of the TF1 name (the
L2 penalty of so many models, `tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables() if 'bias'
not in v.name])`): the comprehension then iterates the variables TF1's names selected, decided here,
and loses its conditions.

Keras layers make their weights at their first call, which has not happened yet where TF1 already had
the variables. A list holding the weights of layers converted from `tf.layers` calls is therefore
accepted only as a `minimize(var_list=...)`, where the name bound to it, read nowhere else, gives way to
the list itself in the train step, after the forward pass has built the layers (defer_layer_variable_lists;
their TF1 names are in transforms/graph/layers/layer_variables.py), and as what a comprehension of graph
code iterates, where each step function running it must have called those layers before it. There an
RNN layer's entries are the values of its TF1 cell's variables (transforms/graph/rnn/cell_variables.py),
and Python's `sum` may add up what the comprehension makes, as it does in TF1.

Refused: a scope that is not a plain string literal, the call elsewhere in graph code or in a session
run (it would be a tensor list there), outside the graph block, and Keras layers before it otherwise."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator

import libcst as cst

from transforms.common.syntax import Refusal, bind_arguments, code, load_names, only_small_statement, string_value, walk
from transforms.graph.analysis.model import Kind
from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.layers.layer_variables import LayerVariables, layer_variables, scopes_in_function
from transforms.graph.rnn.cell_variables import CellVariables, cell_variables

_TF1_NAME = re.compile(r'name=(["\'])([^"\']+)\1')


Selects = Callable[[str], bool]  # on a variable's TF1 name, without the ":0"


def variable_list_replacements(block, scanner) -> dict:
    """Replacements for the plain Python of the graph block: each call, and each name-filtered
    comprehension over it, becomes the list of variables TF1 returned."""
    calls = scanner.analyzer.variable_lists
    if not calls and not scanner.analyzer.filtered_lists:
        return {}
    filtered_calls = [call for _, call, _ in scanner.analyzer.filtered_lists.values()]
    listed = _lister(block, scanner, [*calls.values(), *filtered_calls], in_graph_code=False)
    replacements = {key: lambda _, text=listed(call): cst.parse_expression(text) for key, call in calls.items()}
    for key, (_, call, selects) in scanner.analyzer.filtered_lists.items():
        replacements[key] = lambda _, text=listed(call, selects): cst.parse_expression(text)
    return replacements


def variable_iteration_replacements(block, scanner, functions: list) -> dict:
    """Replacements for comprehensions iterating `tf.trainable_variables()`, in graph code as in plain
    Python: each iterates the variables TF1's names selected, without its conditions. In graph code
    the weights of Keras layers are listed too (an RNN's as the values of its TF1 variables,
    rnn/cell_variables.py), where every step function running the comprehension has called those
    layers before it."""
    iterations = scanner.analyzer.variable_iterations
    if not iterations:
        return {}
    layers = _layer_variables(block, scanner, cells=True)
    listed = _lister(block, scanner, [call for _, call, _ in iterations.values()], in_graph_code=True, layers=layers)
    built_later = objects_built_at_first_call(block, scanner)

    def iterating(node: cst.CSTNode, call: cst.Call, selects: Selects | None):
        variables = cst.parse_expression(listed(call, selects))
        _check_built_before(block, scanner, functions, node, call,
                            {name.value for name in load_names(variables)} & built_later)
        return lambda updated: updated.with_changes(for_in=updated.for_in.with_changes(iter=variables, ifs=[]))

    return {key: iterating(node, call, selects) for key, (node, call, selects) in iterations.items()}


def objects_built_at_first_call(block, scanner) -> set[str]:
    """The Keras layers and converted helpers' modules of the block that make their weights when first called."""
    return set(block.layer_objects) | _helper_modules_built_at_first_call(scanner)


def _helper_modules_built_at_first_call(scanner) -> set[str]:
    return {instance for helper in scanner.module_helpers.values() if helper.built_at_first_call
            for instance in helper.instances.values()}


def _check_built_before(block, scanner, functions: list, node: cst.CSTNode, call: cst.Call, objects: set[str]) -> None:
    """Refuses a comprehension listing the weights of `objects` in a step function that has not called
    them before it: Keras makes a layer's weights at its first call."""
    index = next((item.index for item in block.items if any(child is node for child in walk(item.node))), None)
    for function in functions:
        if index not in function.items:
            continue
        called = {layer for j in function.items if j < index for layer in block.items[j].layers}
        missing = sorted(objects - called)
        if missing:
            made = next((item.node for item in block.items if missing[0] in item.layers), None)
            where = f"the layer made on line {scanner.analyzer.resolver.line(made)}" if made is not None else f"'{missing[0]}'"
            raise Refusal(call, f"tf.trainable_variables() in graph code lists the weights of {where}, which "
                                f"{function.name} does not call before it (Keras makes them at the first call)")


def defer_layer_variable_lists(block, scanner) -> dict:
    """A `minimize(var_list=<name>)` whose name is bound once to `tf.trainable_variables(...)`, or a
    comprehension filtering it by name, and read nowhere else, gets the list itself when that list
    holds weights of Keras layers: they exist only once the layers were first called, which the
    train step does before it reads its var_list, while the statement binding the name ran before
    any step. That statement goes (so does `t_vars = tf.trainable_variables()` when only such
    statements read it); the replacements that remove them are returned."""
    analyzer = scanner.analyzer
    if not any(isinstance(train_op.var_list, cst.Name) for train_op in block.train_ops.values()):
        return {}
    layers = _layer_variables(block, scanner)
    built_at_first_call = _helper_modules_built_at_first_call(scanner)
    if not any(layers.values()) and not built_at_first_call:
        return {}
    module = scanner.resolver.module
    bindings = Counter(_bound_names(module))
    reads = Counter(name.value for name in load_names(module)) - bindings
    lister = _lister(block, scanner, [*analyzer.variable_lists.values()] +
                     [call for _, call, _ in analyzer.filtered_lists.values()], in_graph_code=False, layers=layers)
    removed: dict[int, cst.BaseStatement] = {}
    for train_op in block.train_ops.values():
        bound = _bound_list(block, analyzer, train_op.var_list, bindings)
        if bound is None or reads[train_op.var_list.value] != 1:
            continue
        item, value, call, selects = bound
        listed = cst.parse_expression(lister(call, selects))
        if not any(_is_layer_weight(element.value, layers, built_at_first_call) for element in listed.elements):
            continue
        train_op.var_list = listed
        removed[id(item.node)] = item.node
        analyzer.filtered_lists.pop(id(value), None)
        analyzer.variable_lists.pop(id(value), None)
        if any(node is call for node in walk(value)):  # `[v for v in tf.trainable_variables() if ...]`
            analyzer.variable_lists.pop(id(call), None)
    for name, call in list(analyzer.variable_list_calls.items()):
        read_in_removed = sum(1 for node in removed.values() for n in load_names(node) if n.value == name)
        item = _binding_item(block, name, bindings)
        if item is not None and read_in_removed and read_in_removed == reads[name]:
            removed[id(item.node)] = item.node
            analyzer.variable_lists.pop(id(call), None)
    return {key: (lambda _: cst.RemovalSentinel.REMOVE) for key in removed}


def _is_layer_weight(node: cst.BaseExpression, layers: dict, built_at_first_call: set[str]) -> bool:
    """`<layer>.<weight>` of a layer converted from a `tf.layers` call, or of a module that makes its
    variables at its first call."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and (
        layers.get(node.value.value) is not None or node.value.value in built_at_first_call)


def _bound_list(block, analyzer, var_list: cst.BaseExpression | None, bindings: Counter):
    """(its item, the value, the tf.trainable_variables() call, the name filter) of a var_list name
    bound once, by a statement of its own, to such a list; None otherwise."""
    item = _binding_item(block, var_list.value, bindings) if isinstance(var_list, cst.Name) else None
    if item is None:
        return None
    value = only_small_statement(item.node).value
    if id(value) in analyzer.filtered_lists:
        _, call, selects = analyzer.filtered_lists[id(value)]
        return item, value, call, selects
    if id(value) in analyzer.variable_lists:
        return item, value, value, None
    return None


def _binding_item(block, name: str, bindings: Counter):
    """The item of the block's one statement `name = <value>`, where the module binds `name` only there."""
    if bindings[name] != 1:
        return None
    for item in block.items:
        small = only_small_statement(item.node)
        if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
            return item
    return None


def _bound_names(node: cst.CSTNode) -> Iterator[str]:
    """Each name bound by an assignment, augmented assignment or `for` target, once per binding."""
    for child in walk(node):
        if isinstance(child, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            yield from (name.value for name in walk(child.target) if isinstance(name, cst.Name))


def _layer_variables(block, scanner, cells: bool = False) -> dict[str, LayerVariables | CellVariables | None]:
    """Layer object -> its TF1 variables (None for layers whose names are not modelled); with `cells`,
    an RNN layer's are the values of its cell's TF1 variables (for graph code only)."""
    analyzer = scanner.analyzer
    placed: dict[str, tuple[LayerUse, int]] = {}
    for index, uses in scanner.layer_uses.items():
        for use in uses:
            placed.setdefault(use.object_name, (use, index))
    helper_uses = {use.object_name: use for uses in scanner.module_layers.values() for use in uses}
    for item in block.items:
        for layer in item.layers:
            if layer in helper_uses:
                placed.setdefault(layer, (helper_uses[layer], item.index))
    owners = {id(node): function for function in scanner.helper_defs.values()
              for node in walk(function.body) if isinstance(node, cst.Call)}
    found = {}
    for layer, (use, index) in placed.items():
        if layer not in block.layer_objects:
            continue
        scope: str | None = block.items[index].scopes.prefix(True)
        helper = owners.get(id(use.call))
        if helper is not None:
            inner = scopes_in_function(helper, use.call, analyzer)
            scope = None if inner is None else scope + inner
        found[layer] = layer_variables(use, analyzer, scope)
        if found[layer] is None and cells:
            found[layer] = cell_variables(use, scope, scanner.cell_variable_functions)
    return found


def _lister(block, scanner, calls: list[cst.Call], in_graph_code: bool,
            layers: dict[str, LayerVariables | None] | None = None) -> Callable[..., str]:
    """The code of the list of variables one of `calls` (`tf.trainable_variables()`) returned in TF1
    (those `selects` keeps of them), where the program may read it. Weights of Keras layers are
    listed only given `layers` (see defer_layer_variable_lists)."""
    wanted = {id(call) for call in calls}
    holders = {id(node): item for item in block.items for node in walk(item.node) if id(node) in wanted}
    in_runs = {id(node) for _, run in scanner.run_calls for node in walk(run)}
    instances = {instance: (helper, key) for helper in scanner.module_helpers.values()
                 for key, instance in helper.instances.items()}

    def listed(call: cst.Call, selects: Selects | None = None) -> str:
        item = holders.get(id(call))
        readable = item is not None and id(call) not in in_runs and not isinstance(item.node, cst.FunctionDef) \
            and (in_graph_code or item.keeps_original)
        if not readable:
            raise Refusal(call, "tf.trainable_variables() is only converted in plain Python of the graph-building "
                                "code, outside session runs, and as what a comprehension in graph code iterates")
        collection = scanner.analyzer.category(call.func)[0] == "tf.get_collection"
        pieces = _created_before(block, item.index, instances, call, _both(_scope(call, collection), selects),
                                 layers or {}, deferred=layers is not None)
        return "[" + ", ".join(pieces) + "]"

    return listed


def fetched_variables(block, scanner) -> Callable[[str], list[str] | None]:
    """For `sess.run(tvars)`: the variables a name bound to a list of them holds (`tf.trainable_variables()`
    as TF1 returned it there, or a list display of variables), or None when that is not a list of plain
    variables by name (the fetch is then refused as before)."""
    def variables(name: str) -> list[str] | None:
        call = scanner.analyzer.variable_list_calls.get(name)
        if call is not None:
            try:
                listed = cst.parse_expression(_lister(block, scanner, [call], in_graph_code=False)(call))
            except Refusal:
                return None
        else:
            listed = _bound_value(block, name)
        if not isinstance(listed, (cst.List, cst.Tuple)) or not listed.elements:
            return None
        names = [element.value.value for element in listed.elements
                 if isinstance(element, cst.Element) and isinstance(element.value, cst.Name)]
        if len(names) != len(listed.elements) or any(block.kind(name) is not Kind.VARIABLE for name in names):
            return None
        return names

    return variables


def _bound_value(block, name: str) -> cst.BaseExpression | None:
    """The value of the one statement of the block binding `name` (None unless there is one)."""
    values = [small.value for item in block.items for small in [only_small_statement(item.node)]
              if isinstance(small, cst.Assign) and len(small.targets) == 1
              and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name]
    return values[0] if len(values) == 1 else None


def name_filtered(comprehension: cst.ListComp) -> tuple[cst.BaseExpression, Selects] | None:
    """(what it iterates, which TF1 names it keeps) of `[v for v in <source> if '<text>' in v.name]` or
    `... if v.name.startswith('<text>')`; None for any other comprehension."""
    if not (isinstance(comprehension.elt, cst.Name) and isinstance(comprehension.for_in.target, cst.Name)
            and comprehension.elt.value == comprehension.for_in.target.value and comprehension.for_in.ifs):
        return None
    return name_tested_iteration(comprehension)


def name_tested_iteration(comprehension: cst.ListComp | cst.GeneratorExp
                          ) -> tuple[cst.BaseExpression, Selects | None] | None:
    """(what it iterates, which TF1 names its conditions keep: None for all) of a comprehension with
    one `for v in <source>` whose conditions only test `v.name`; None for any other comprehension."""
    loop = comprehension.for_in
    if not isinstance(loop.target, cst.Name) or loop.inner_for_in is not None or loop.asynchronous:
        return None
    tests = [_name_test(condition.test, loop.target.value) for condition in loop.ifs]
    if None in tests:
        return None
    return loop.iter, (lambda name: all(test(name) for test in tests)) if tests else None


def _name_test(test: cst.BaseExpression, variable: str) -> Selects | None:
    """What `'<text>' in v.name`, `... not in v.name`, `v.name.startswith('<text>')`, and `not` / `and` /
    `or` of those, keep of TF1 names; None for any other condition."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _name_test(test.expression, variable)
        return (lambda name: not inner(name)) if inner else None
    if isinstance(test, cst.BooleanOperation):
        left, right = _name_test(test.left, variable), _name_test(test.right, variable)
        if left is None or right is None:
            return None
        if isinstance(test.operator, cst.And):
            return lambda name: left(name) and right(name)
        return lambda name: left(name) or right(name)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn)) \
            and _is_name_of(test.comparisons[0].comparator, variable):
        text, negated = string_value(test.left), isinstance(test.comparisons[0].operator, cst.NotIn)
        return (lambda name: (text in name + ":0") != negated) if text is not None else None
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "startswith" \
            and _is_name_of(test.func.value, variable) and len(test.args) == 1 and test.args[0].keyword is None:
        text = string_value(test.args[0].value)
        return (lambda name: (name + ":0").startswith(text)) if text is not None else None
    return None


def _is_name_of(node: cst.BaseExpression, variable: str) -> bool:
    """`<variable>.name`."""
    return isinstance(node, cst.Attribute) and node.attr.value == "name" and \
        isinstance(node.value, cst.Name) and node.value.value == variable


def lists_trainable_variables(node: cst.CSTNode, tf_name_of: Callable[[cst.BaseExpression], str | None]) -> bool:
    """`tf.trainable_variables(...)`, or `tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES[, scope])`,
    which TF1 answered with the same list."""
    if not isinstance(node, cst.Call):
        return False
    name = tf_name_of(node.func)
    if name == "tf.trainable_variables":
        return True
    bound = bind_arguments(node, ["key", "scope"], "tf.get_collection") if name == "tf.get_collection" else {}
    return "key" in bound and tf_name_of(bound["key"]) == "tf.GraphKeys.TRAINABLE_VARIABLES"


def _scope(call: cst.Call, collection: bool) -> Selects | None:
    """What `scope=` keeps of TF1 names (`collection`: the call is tf.get_collection's)."""
    parameters = ["key", "scope"] if collection else ["scope"]
    bound = bind_arguments(call, parameters, "tf.get_collection" if collection else "tf.trainable_variables")
    if "scope" not in bound:
        return None
    scope = string_value(bound["scope"])
    if scope is None or not re.fullmatch(r"[A-Za-z0-9_./-]+", scope) or "." in scope:
        raise Refusal(call, "tf.trainable_variables(scope) with a scope that is not a plain string literal")
    return lambda name: name.startswith(scope)  # TF1 matched the scope from the start (re.match)


def _both(first: Selects | None, second: Selects | None) -> Selects | None:
    if first is None or second is None:
        return first or second
    return lambda name: first(name) and second(name)


def _selected(tf1_name: str | None, selects: Selects | None, call: cst.Call, shared: set[str]) -> bool:
    if selects is None:
        return True
    if tf1_name is None:
        raise Refusal(call, "tf.trainable_variables() filtered by name: a variable's TF1 name is not known statically")
    if tf1_name in shared:
        raise Refusal(call, f"tf.trainable_variables() filtered by name: several variables are named '{tf1_name}', "
                            "which TF1 made unique ('_1', '_2', ...) and TF2 does not")
    return selects(tf1_name)


def _shared_names(block) -> set[str]:
    """TF1 names that several converted variables of the block would take (a class instantiated
    twice, a name scope entered twice)."""
    names = Counter(_variable_name(item) for item in block.items if item.kind.is_state and item.defines)
    return {name for name, count in names.items() if name is not None and count > 1}


def _instance_variables(helper, key) -> list[tuple[str, str | None]]:
    """(attribute, TF1 name) of a tf.Module instance's trainable variables, in creation order. `key`:
    the instance's construction arguments, as (parameter, code) pairs, and the variable-scope path
    of the call that made it ("D/")."""
    arguments, prefix, stored = helper.arguments(key[0]), key[1], helper.parameter_attributes()
    names = {}
    for scopes, line in helper.init_entries + helper.first_call_entries:
        attribute = re.match(r"self\.(\w+) = ", line)
        found = _TF1_NAME.search(line)
        labels = [_scope_label(cst.parse_expression(scope), arguments, stored) for scope in scopes]
        if attribute and found and None not in labels:
            names[attribute.group(1)] = prefix + "".join(label + "/" for label in labels) + found.group(2)
    return [(attribute, names.get(attribute)) for attribute, trainable in helper.variables if trainable]


def _scope_label(scope: cst.BaseExpression, arguments: dict[str, str], stored: dict[str, str]) -> str | None:
    """The name a scope of a module's `__init__` or first call gives, None when not known: a string
    literal, or what the instance was made with for the parameter it reads (`name`, or `self._name`
    set from it), or `<that> or "Linear"`."""
    if isinstance(scope, cst.BooleanOperation) and isinstance(scope.operator, cst.Or):
        left = _scope_value(scope.left, arguments, stored)
        if isinstance(left, cst.Name) and left.value == "None":
            return _scope_label(scope.right, arguments, stored)
        return string_value(left) if left is not None else None
    value = _scope_value(scope, arguments, stored)
    return string_value(value) if value is not None else None


def _scope_value(scope: cst.BaseExpression, arguments: dict[str, str], stored: dict[str, str]):
    """The expression a scope argument stands for in one instance; None when not known."""
    if isinstance(scope, cst.Attribute) and isinstance(scope.value, cst.Name) and scope.value.value == "self":
        if scope.attr.value not in stored:
            return None
        scope = cst.Name(stored[scope.attr.value])
    if isinstance(scope, cst.Name) and scope.value in arguments:
        return cst.parse_expression(arguments[scope.value])
    return None if isinstance(scope, cst.Name) and scope.value != "None" else scope


def _created_before(block, index: int, instances: dict, call: cst.Call, selects: Selects | None,
                    layers: dict[str, LayerVariables | None], deferred: bool) -> list[str]:
    """`deferred`: the list is read in a train step, after the forward pass made what is made at first call."""
    pieces: list[str] = []
    seen: set[str] = set()
    shared = _shared_names(block) if selects is not None else set()
    for item in block.items[:index]:
        names = list(item.defines) if item.kind.is_state else []
        for name in names + [layer for layer in item.layers if layer in block.layer_objects]:
            if name in seen:
                continue
            seen.add(name)
            if name in instances:
                if instances[name][0].built_at_first_call and not deferred:
                    raise Refusal(call, f"tf.trainable_variables() before the first call of '{name}', which creates "
                                        "its variables then")
                pieces += [f"{name}.{attribute}" for attribute, tf1_name in _instance_variables(*instances[name])
                           if _selected(tf1_name, selects, call, shared)]
            elif name in block.layer_objects:
                if layers.get(name) is None:
                    raise Refusal(call, f"tf.trainable_variables() after the Keras layer '{name}', which creates "
                                        "its weights only when first called")
                pieces += layers[name].attributes(selects, call)
            elif name in block.variable_dicts:
                if selects is not None:
                    raise Refusal(call, "tf.trainable_variables() filtered by scope or name after a dict of "
                                        "variables is not modelled")
                pieces.append(f"*{name}.values()")
            elif block.trainable_state.get(name) and _selected(_variable_name(item), selects, call, shared):
                pieces.append(name)
    return pieces


def _variable_name(item) -> str | None:
    """The TF1 name of a converted variable: its `tf.Variable(..., name=...)`."""
    found = _TF1_NAME.search(code(item.emit[0])) if item.emit else None
    return found.group(2) if found else None
