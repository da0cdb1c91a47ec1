"""Graph builders: module-level functions whose bodies TFM201 reads where they are called.

- The function creating the placeholders, returning them with the tensors it built as a dict literal
  with string keys (`return {"x": x, "loss": loss}`), a tuple of names or one value, called once by
  the code that runs the session (`model = build_model(5)`).
- Functions building the training or summary ops, which a helper or a tf.Module cannot hold (TF's
  tutorial: `train_op = training(loss, rate)` making the summary, the optimizer and the global step),
  called once that way; called otherwise, they are left to the graph helpers' own rules.

The call may stand in graph-context blocks (`with tf.Graph().as_default():`, scopes), which TFM201
reads as flat. Its body is read as if it stood at the call: that statement becomes the builder's
parameters bound to the call's arguments followed by the builder's body, `model["loss"]` becomes
`loss` (also inside session helpers the dict is passed to, see transforms/graph/sessions/session_helpers.py),
a tuple result's names become the builder's, a returned expression is bound to the call's target,
and the function goes. The whole graph is then in one block, as TFM201 reads it.
Names of the builder that the calling code (or another builder written out there) also uses take the
name `<result>_<name>`; a parameter passed the caller's variable of its own name reads that variable;
a default that is not a literal stays where the function was defined, bound to a module name (TF
initializers aside, see _evaluated_defaults).

Refused, because the substitution could change the program: a placeholder builder called more than
once or other than as `name = builder(...)` at the top level of a block, any return but the last
statement, keys that are not string literals, a key the dict lacks, the dict mutated or passed to
code other than session helpers, and names the builder reads that the calling code binds to
something else."""
from __future__ import annotations

from dataclasses import dataclass, field
from keyword import iskeyword

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.graph.sessions.session_helpers import SessionHelper, bound_argument, owner_of, plain_parameters
from transforms.common.syntax import (Refusal, binding_names, code, is_constant, is_target, load_names, replace_nodes, statement,
                                      string_value, walk, walk_outside_functions)

@dataclass
class Builder:
    function: cst.FunctionDef
    call: cst.Call
    line: cst.SimpleStatementLine           # `model = build(...)`
    caller: cst.CSTNode                     # the Module or FunctionDef holding that line
    outputs: dict[str, str]                 # dict key (or tuple target name) -> the builder's name
    result: cst.Name | None                 # the name bound to the dict (None for a tuple)
    hoisted: dict[str, cst.BaseExpression] = field(default_factory=dict)  # new name -> a returned expression
    renames: dict[int, str] = field(default_factory=dict)  # id of a Name of the builder's -> the name it takes
    local_names: dict[str, str] = field(default_factory=dict)  # the builder's names renamed -> their new names
    passed_through: set[str] = field(default_factory=set)  # parameters given the caller's name of their own
    default_names: dict[str, str] = field(default_factory=dict)  # parameter -> the module name of its default

    def renamed(self, name: str) -> str:
        return self.local_names.get(name, name)


# What a function may build only where its graph is written out: as a helper or a tf.Module it is refused.
TRAINING_CATEGORIES = (Category.OPTIMIZER, Category.REFUSED_OPTIMIZER, Category.SUMMARY, Category.GLOBAL_STEP)


def find_builders(resolver) -> list[Builder]:
    """The program's graph builders: the function creating its placeholders, if one separate function
    does, and the functions building its training or summary ops that are called once in a way that
    can be written out (the tutorial's `train_op = training(loss, rate)`)."""
    functions = [s for s in resolver.module.body if isinstance(s, cst.FunctionDef)]
    writable = [function for function in functions if not _creates(resolver, function, Category.SESSION)
                and _session_elsewhere(resolver, function)]
    # the code running the session may make placeholders of its own (TF's mnist_deep.py: `x` in main(),
    # `keep_prob` in `deepnn(x)`)
    placeholder_makers = [function for function in writable if _creates(resolver, function)]
    builders = []
    if len(placeholder_makers) == 1:
        builders.append(_read_builder(resolver, placeholder_makers[0]))
    for function in writable:
        if function not in placeholder_makers and any(_creates(resolver, function, c) for c in TRAINING_CATEGORIES):
            try:
                builders.append(_read_builder(resolver, function))
            except Refusal:
                continue  # called otherwise: the graph helpers' own rules judge it
    return builders


def _creates(resolver, node: cst.CSTNode, category: Category = Category.PLACEHOLDER) -> bool:
    for child in walk(node):
        if isinstance(child, cst.Call):
            name = resolver.tf_name(child.func)
            if name and categorize(name)[0] is category:
                return True
    return False


def _session_elsewhere(resolver, function: cst.FunctionDef) -> bool:
    return any(_creates(resolver, s, Category.SESSION) for s in resolver.module.body if s is not function)


def _read_builder(resolver, function: cst.FunctionDef) -> Builder:
    name = function.name.value
    line, call = _the_call(resolver, function)
    returned = _returned(function)
    target = line.body[0].targets[0].target
    if isinstance(returned, cst.Dict):
        if not isinstance(target, cst.Name):
            raise Refusal(target, f"the dict '{name}' returns is unpacked; bind it to one name")
        builder = Builder(function, call, line, owner_of(resolver, line), {}, target)
        own = {assignment.name for assignment in resolver.scope(function.body.body[0]).assignments}
        for element in returned.elements:
            key = string_value(element.key)
            if isinstance(element.value, cst.Name):
                builder.outputs[key] = element.value.value
                continue
            if not key.isidentifier() or iskeyword(key) or key in own or key in builder.hoisted:
                raise Refusal(element.value, f"graph builder '{name}' returns an expression under "
                                             f"{code(element.key)}; bind it to a name first")
            builder.outputs[key] = key
            builder.hoisted[key] = element.value
        return builder
    if not isinstance(returned, cst.Tuple):
        return _single_result_builder(resolver, function, call, line, target, returned)
    if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(returned.elements)
            and all(isinstance(e.value, cst.Name) for e in target.elements)):
        raise Refusal(target, f"the tuple '{name}' returns must be unpacked into as many names")
    outputs = {t.value.value: r.value.value for t, r in zip(target.elements, returned.elements)}
    return Builder(function, call, line, owner_of(resolver, line), outputs, None)


def _single_result_builder(resolver, function: cst.FunctionDef, call: cst.Call, line: cst.SimpleStatementLine,
                           target: cst.BaseAssignTargetExpression, returned: cst.BaseExpression) -> Builder:
    """`train_op = training(loss, rate)` over `return train_op` (the caller's name becomes the builder's)
    or over `return <expression>` (bound to the caller's name at the end of the written-out body)."""
    name = function.name.value
    if not isinstance(target, cst.Name):
        raise Refusal(target, f"the value '{name}' returns must be bound to one name")
    builder = Builder(function, call, line, owner_of(resolver, line), {}, None)
    if isinstance(returned, cst.Name):
        builder.outputs[target.value] = returned.value
        return builder
    own = {assignment.name for assignment in resolver.scope(function.body.body[0]).assignments}
    if target.value in own:
        raise Refusal(returned, f"graph builder '{name}' returns an expression and has a name of its own "
                                f"'{target.value}'; bind the expression to a name first")
    builder.outputs[target.value] = target.value
    builder.hoisted[target.value] = returned
    return builder


def _the_call(resolver, function: cst.FunctionDef) -> tuple[cst.SimpleStatementLine, cst.Call]:
    name = function.name.value
    accesses = [access for assignment in resolver.scope(function).assignments[name]
                for access in assignment.references]
    if len(accesses) != 1:
        raise Refusal(function, f"graph builder '{name}' must be called exactly once (each call builds "
                                "the graph again)")
    call = resolver.parent(accesses[0].node)
    assign = resolver.parent(call) if isinstance(call, cst.Call) else None
    line = resolver.parent(assign) if isinstance(assign, cst.Assign) else None
    at_top = isinstance(line, cst.SimpleStatementLine) and _at_top_of_code(resolver, line)
    if not (at_top and len(line.body) == 1 and len(assign.targets) == 1 and call.func is accesses[0].node):
        raise Refusal(accesses[0].node, f"graph builder '{name}' must be called as `result = {name}(...)` at "
                                        "the top level of the code that runs the session")
    return line, call


def _at_top_of_code(resolver, line: cst.SimpleStatementLine) -> bool:
    """Whether `line` is a statement of the module or of a module-level function, directly or inside
    graph-context blocks (`with tf.Graph().as_default():`, scopes), which TFM201 reads as flat."""
    holder = resolver.parent(line)
    while isinstance(holder, cst.IndentedBlock) and isinstance(block := resolver.parent(holder), cst.With) \
            and all(is_graph_context(resolver, item.item) for item in block.items):
        holder = resolver.parent(block)
    if isinstance(holder, cst.Module):
        return True
    return isinstance(holder, cst.IndentedBlock) and isinstance(resolver.parent(holder), cst.FunctionDef) \
        and isinstance(resolver.parent(resolver.parent(holder)), cst.Module)


def is_graph_context(resolver, node: cst.BaseExpression) -> bool:
    """`tf.Graph().as_default()`, `graph.as_default()`, `tf.name_scope(...)` / `tf.variable_scope(...)`,
    `tf.device(...)`: contexts that only name ops or choose where they go."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "as_default" and not node.args:
        return True
    name = resolver.tf_name(node.func)
    return name is not None and categorize(name)[0] in (Category.GRAPH_CONTEXT, Category.SCOPE)


def _returned(function: cst.FunctionDef) -> cst.BaseExpression:
    name = function.name.value
    body = list(function.body.body)
    last = body[-1]
    small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
    if not isinstance(small, cst.Return):
        raise Refusal(last, f"graph builder '{name}' must end with `return {{...}}`, `return a, b` or `return a`")
    for node in walk_outside_functions(function.body):  # a function defined there returns for itself
        if isinstance(node, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal)) and node is not small:
            raise Refusal(node, f"graph builder '{name}' returns, yields or declares names before its end")
        if isinstance(node, (cst.ClassDef, cst.Lambda)):
            raise Refusal(node, f"graph builder '{name}' defines classes or lambdas")
    value = small.value
    if isinstance(value, cst.Dict):
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or string_value(element.key) is None:
                raise Refusal(element, f"graph builder '{name}' returns a dict whose keys are not string literals")
        return value
    if isinstance(value, cst.Tuple) and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                                            for e in value.elements):
        return value
    if value is None or isinstance(value, cst.Tuple):
        raise Refusal(small, f"graph builder '{name}' must return a dict literal with string keys, a tuple of "
                             "names or one value")
    return value


# -- the substitution --------------------------------------------------------------------------------

def inline_builder(resolver, builder: Builder, helpers: dict[str, SessionHelper], others: list[Builder]) -> dict:
    """Replacements (by id of original nodes) that inline the builder (`others`: the program's other
    builders, written out beside it); checks names first."""
    _check_names(resolver, builder, helpers, others)
    defaults = _evaluated_defaults(resolver, builder)
    replacements = {id(builder.function): lambda _: cst.FlattenSentinel(defaults) if defaults
                    else cst.RemovalSentinel.REMOVE}
    _inlined_body(builder, builder.call)  # refuses now, not in the middle of the rewrite
    # The call as rewritten: its arguments may read names another builder's results were renamed to.
    replacements[id(builder.line)] = lambda updated: cst.FlattenSentinel(_inlined_body(builder, updated.body[0].value))
    if builder.result is None:
        replacements.update(_tuple_renames(resolver, builder))
    else:
        replacements.update(_dict_subscripts(resolver, builder, builder.result, builder.caller, helpers))
    return replacements


def _inlined_body(builder: Builder, call: cst.Call) -> list[cst.BaseStatement]:
    function, params = builder.function, plain_parameters(builder.function)
    bound = {p: arg.value for p in params if (arg := bound_argument(call, params, p)) is not None}
    defaults = {p.name.value: p.default for p in function.params.params if p.default is not None}
    bindings = []
    for param in params:
        value = bound.get(param, defaults.get(param))
        if value is None:
            raise Refusal(builder.call, f"graph builder '{function.name.value}' is called without '{param}'")
        if param not in bound and param in builder.default_names:
            value = cst.Name(builder.default_names[param])
        if param in builder.passed_through:
            continue
        bindings.append(statement(f"{builder.renamed(param)} = {code(value)}"))
    body = list(function.body.body)[:-1]
    if body and _is_docstring(body[0]):
        body = body[1:]
    renames = {identity: (lambda _, name=name: cst.Name(name)) for identity, name in builder.renames.items()}
    body = [replace_nodes(s, renames) for s in body]
    hoisted = [statement(f"{builder.renamed(name)} = {code(replace_nodes(value, renames))}")
               for name, value in builder.hoisted.items()]
    statements = bindings + body + hoisted
    if statements:
        statements[0] = statements[0].with_changes(leading_lines=builder.line.leading_lines)
    return statements


def _is_docstring(node: cst.BaseStatement) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Expr) \
        and isinstance(node.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _check_names(resolver, builder: Builder, helpers: dict[str, SessionHelper], others: list[Builder]) -> None:
    """The builder's names that the code it moves into also uses (other builders written out there
    included) take the name `<result>_<name>`, and the names it reads there must mean what they meant
    at module level."""
    function = builder.function
    scope = resolver.scope(function.body.body[0])
    own = {assignment.name for assignment in scope.assignments} | set(builder.hoisted)
    free = {n.value for n in load_names(function.body)} - own
    moving = [h.function for h in helpers.values() if h.moves]
    if isinstance(builder.caller, cst.Module):
        elsewhere = [s for s in builder.caller.body if s is not function]
    else:
        elsewhere = [builder.caller, *moving, *(other.function for other in others if other.caller is builder.caller)]
    used = {n.value for node in elsewhere for n in load_names(node, parameters=True)}
    used -= set(builder.outputs) if builder.result is None else set()
    builder.passed_through = _passed_through(resolver, builder, scope)
    clash = sorted((own - builder.passed_through) & used)
    if clash:
        _rename_locals(builder, scope, clash, used | own | free)
    if not isinstance(builder.caller, cst.Module):
        caller_scope = resolver.scope(builder.caller.body.body[0])
        shadowed = sorted(name for name in free if name in caller_scope.assignments)
        if shadowed:
            raise Refusal(builder.line, f"graph builder '{function.name.value}' reads {', '.join(shadowed)}, "
                                        "which the calling code binds to something else")


def _evaluated_defaults(resolver, builder: Builder) -> list[cst.SimpleStatementLine]:
    """A default that is not a literal was evaluated once, where the function was defined: it stays
    there, bound to a module name of its own (`build_loss_weights = np.ones(3)`), which the written-out
    parameter is given. A TF initializer (`tf.random_normal_initializer(stddev=0.1)`) is only the
    configuration of the ops it makes when a variable uses it: made at the call instead, it makes the
    same ops, and the block's variables can read it."""
    function, params = builder.function, plain_parameters(builder.function)
    taken = {n.value for n in load_names(resolver.module, parameters=True)}
    statements = []
    for param in function.params.params:
        name = param.name.value
        if param.default is None or is_constant(param.default) or bound_argument(builder.call, params, name) \
                or _is_initializer(resolver, param.default):
            continue
        if not isinstance(resolver.parent(function), cst.Module):
            raise Refusal(param.default, f"graph builder '{function.name.value}' has a default that is not a "
                                         "constant and is not defined at module level")
        fresh = f"{function.name.value}_{name}"
        if fresh in taken:
            raise Refusal(param.default, f"graph builder '{function.name.value}' has a default that is not a "
                                         f"literal, and '{fresh}' is taken")
        builder.default_names[name] = fresh
        statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(fresh))], param.default)],
                                                  leading_lines=function.leading_lines if not statements else ()))
    return statements


def _is_initializer(resolver, node: cst.BaseExpression) -> bool:
    name = resolver.tf_name(node.func) if isinstance(node, cst.Call) else None
    return name is not None and categorize(name)[0] is Category.INITIALIZER


def _passed_through(resolver, builder: Builder, scope) -> set[str]:
    """Parameters passed the caller's variable of the same name (`Model(rate)` for `def Model(rate)`),
    never rebound by the builder, where the caller binds that name once: written out, the builder can
    read the caller's variable itself."""
    params = plain_parameters(builder.function)
    caller_scope = resolver.scope(builder.line)
    through = set()
    for param in params:
        argument = bound_argument(builder.call, params, param)
        if argument is None or not (isinstance(argument.value, cst.Name) and argument.value.value == param):
            continue
        if len(scope.assignments[param]) == 1 and caller_scope is not None \
                and len(caller_scope.assignments[param]) == 1:
            through.add(param)
    return through


def _rename_locals(builder: Builder, scope, names: list[str], taken: set[str]) -> None:
    """Give the builder's `names` (its locals, parameters and hoisted results) names of their own."""
    prefix = builder.result.value if builder.result is not None else builder.function.name.value
    allocate = NameAllocator(taken)
    for name in names:
        fresh = allocate.fresh(f"{prefix}_{name}")
        builder.local_names[name] = fresh
        builder.renames.update((id(node), fresh) for node in binding_names(scope, name))
    builder.outputs = {key: builder.renamed(own) for key, own in builder.outputs.items()}


def _tuple_renames(resolver, builder: Builder) -> dict:
    """`a, b = build()`: the calling code's `a`, `b` become the builder's own names."""
    replacements = {}
    scope = resolver.scope(builder.line)
    for target, own in builder.outputs.items():
        assignments = scope.assignments[target]
        if len(assignments) != 1:
            raise Refusal(builder.line, f"'{target}', bound to a result of the graph builder, is rebound")
        if target != own:
            for access in next(iter(assignments)).references:
                replacements[id(access.node)] = lambda _, own=own: cst.Name(own)
    return replacements


def _dict_subscripts(resolver, builder: Builder, result: cst.Name, owner, helpers) -> dict:
    """`model["key"]` -> the builder's name for it, in the calling code and in the session helpers it
    is passed to (whose parameter for it goes)."""
    replacements = {}
    assignments = resolver.scope(result).assignments[result.value]
    if len(assignments) != 1:
        raise Refusal(builder.line, f"'{result.value}', the graph builder's dict, is rebound")
    for access in next(iter(assignments)).references:
        node = access.node
        arg = resolver.parent(node)
        if isinstance(arg, cst.Arg) and arg.value is node:
            _passed_to_helper(resolver, builder, arg, helpers, replacements)
        else:
            replacements[id(resolver.parent(node))] = _subscript(resolver, builder, node)
    return replacements


def _subscript(resolver, builder: Builder, node: cst.Name):
    subscript = resolver.parent(node)
    label = f"the graph dict '{node.value}'"
    if not (isinstance(subscript, cst.Subscript) and subscript.value is node):
        raise Refusal(node, f"{label} is used other than as `{node.value}[\"key\"]` (it no longer exists in TF2)")
    elements = subscript.slice
    key = string_value(elements[0].slice.value) if len(elements) == 1 and isinstance(elements[0].slice, cst.Index) \
        else None
    if key is None:
        raise Refusal(subscript, f"{label} is read with a key that is not a string literal")
    if key not in builder.outputs:
        raise Refusal(subscript, f"{label} has no key '{key}'")
    if is_target(resolver, subscript):
        raise Refusal(subscript, f"{label} is changed here")
    return lambda _, name=builder.outputs[key]: cst.Name(name)


def _passed_to_helper(resolver, builder: Builder, arg: cst.Arg, helpers, replacements: dict) -> None:
    call = resolver.parent(arg)
    name = builder.result.value
    helper = helpers.get(call.func.value) if isinstance(call.func, cst.Name) else None
    if helper is None or call not in helper.calls:
        raise Refusal(arg, f"the graph dict '{name}' is passed to '{code(call.func)}', which does not only run "
                           "the session with it")
    parameter = next((p for p in helper.params if bound_argument(call, helper.params, p) is arg), None)
    if parameter is None:
        raise Refusal(arg, f"the graph dict '{name}' is passed to an unknown parameter")
    for other in helper.calls:
        passed = bound_argument(other, helper.params, parameter)
        if not (passed is not None and isinstance(passed.value, cst.Name) and passed.value.value == name):
            raise Refusal(other, f"'{helper.function.name.value}' is not always passed the graph dict '{name}'")
    if parameter in helper.removed:
        return
    helper.removed.add(parameter)
    scope = resolver.scope(helper.function.body.body[0])
    for assignment in scope.assignments[parameter]:
        if not isinstance(assignment.node, cst.Param):
            raise Refusal(assignment.node, f"'{helper.function.name.value}' rebinds '{parameter}'")
        for access in assignment.references:
            replacements[id(resolver.parent(access.node))] = _subscript(resolver, builder, access.node)
    own = {a.name for a in scope.assignments} - {parameter}
    clash = sorted(own & set(builder.outputs.values()))
    if clash:
        raise Refusal(helper.function, f"'{helper.function.name.value}' has its own {', '.join(clash)}, "
                                       "names the graph dict's values take")
