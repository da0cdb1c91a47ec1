"""The body of a function that becomes a tf.Module (see transforms/graph/structure/modules.py), split in two: the
statements that create its variables (and the values they need) go to `__init__`, inside the name
scopes they sat in; the statements that compute go to `__call__`, reading the variables (and the
Python parameters they use) as attributes.

Python control flow that only computes (`if activation_function is None: ... else: ...`, a loop over
layers' outputs) goes to `__call__` whole: TF1 ran it once per call while it built the graph, and
`__call__` runs it once per trace, on the same Python values. Control flow that creates variables, or
binds a value a variable needs, is refused."""
from __future__ import annotations

import builtins

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.analysis.model import Scopes
from transforms.graph.bridge.bindings import bound_names
from transforms.graph.bridge.region import program_imports
from transforms.graph.writing.state import convert_get_variable, convert_variable
from transforms.common.syntax import Refusal, code, leftmost_name, load_names, replace_nodes, walk

# tf.Module attributes that an instance attribute must not replace.
_MODULE_ATTRIBUTES = {"name", "name_scope", "variables", "trainable_variables", "non_trainable_variables",
                      "submodules", "with_name_scope"}
# Control flow that may go to __call__ whole, and what it must not call there (state built on every trace).
_COMPUTING_BLOCKS = (cst.If, cst.For, cst.While)
_STATE_CATEGORIES = frozenset({Category.VARIABLE, Category.SCOPE, Category.LAYER, Category.RNN_CELL})
# What a function that becomes a module may call.
_MODULE_CALLS = frozenset({None, Category.OP, Category.PYTHON, Category.INITIALIZER, Category.VARIABLE, Category.SCOPE})


def attribute_of(name: str) -> str:
    """The attribute a parameter or variable of the function is kept in."""
    return f"self._{name}" if name in _MODULE_ATTRIBUTES else f"self.{name}"



def split_body(helper, analyzer, initializer_code, factories: dict[str, bool]) -> None:
    """Variable statements (and what they need) go to __init__, in their scopes; the rest to __call__."""
    entries = list(_flatten(helper, helper.function.body.body, [], analyzer))
    variables = {index: small for index, (statement, _) in enumerate(entries)
                 if (small := _variable_assignment(statement, analyzer, factories)) is not None}
    _check_calls(helper, analyzer, {id(small.value) for small in variables.values()})
    needed = {name.value for small in variables.values() for name in _value_reads(small.value)}
    needed |= {name.value for index in variables for scope in entries[index][1]
               for name in load_names(cst.parse_expression(scope))}  # `with tf.name_scope(layer_name):`
    setup = {index for index, (statement, _) in enumerate(entries)
             if index not in variables and _targets(statement) & needed}
    for index in setup:
        if isinstance(entries[index][0], _COMPUTING_BLOCKS):
            raise Refusal(entries[index][0], f"'{helper.function.name.value}' sets up a value of its variables "
                                             "under control flow; it is not turned into a module")
    initializers = {target for index in setup for target in _targets(entries[index][0])
                    if initializer_code(entries[index][0].body[0].value) is not None}
    computed = {name for index, (statement, _) in enumerate(entries) if index not in variables
                and index not in setup for name in _targets(statement)}  # what __call__ computes
    if _reads_input_shapes(helper, entries, variables, setup, computed):
        _created_at_first_call(helper, entries, variables, setup, analyzer, initializer_code, initializers,
                               factories)
        return
    state: dict[str, str] = {}
    for index, (statement, scopes) in enumerate(entries):
        reads = {name.value for name in load_names(statement)}
        if index in variables or index in setup:
            if (reads - _targets(statement)) & (set(helper.tensor_params) | set(state) | computed):
                raise Refusal(statement, f"a variable of '{helper.function.name.value}' depends on its tensors")
        if index in variables:
            small = variables[index]
            target = small.targets[0].target.value
            converted, trainable = _variable(small.value, analyzer, initializer_code, initializers, factories)
            attribute = _new_attribute(helper, target)
            helper.init_entries.append((tuple(scopes), f"{attribute} = {converted}"))
            helper.variables.append((attribute.removeprefix("self."), trainable))
            state[target] = attribute
        elif index in setup:
            helper.init_entries += [((), line) for line in _render(statement, _initializer_replacements(
                statement, initializer_code))]
        else:
            if reads & {t for i in setup for t in _targets(entries[i][0])}:
                raise Refusal(statement, f"'{helper.function.name.value}' computes with a value it set up for "
                                         "its variables")
            helper.call_lines += _computation(helper, statement, state)
            _forget_rebound(helper, statement, state)


def _new_attribute(helper, target: str) -> str:
    """The attribute a variable bound to `target` becomes: `self.weights`, then `self.weights_1` for the
    next variable bound to the same name (TF's mnist `inference` binds `weights` in each name scope)."""
    taken = {attribute for attribute, _ in helper.variables} | set(helper.config_params)
    attribute, number = attribute_of(target), 0
    while attribute.removeprefix("self.") in taken:
        number += 1
        attribute = attribute_of(f"{target}_{number}")
    return attribute


def _forget_rebound(helper, statement: cst.BaseStatement, state: dict[str, str]) -> None:
    """After `w = tf.nn.dropout(w)` in `__call__`, `w` is that local, no longer the variable."""
    parameters = sorted(_targets(statement) & set(helper.config_params))
    if parameters:
        raise Refusal(statement, f"'{helper.function.name.value}' rebinds its parameter '{parameters[0]}' after "
                                 "making its variables; it is not turned into a module")
    rebound = _targets(statement) & set(state)
    if rebound and not isinstance(statement, cst.SimpleStatementLine):
        raise Refusal(statement, f"'{helper.function.name.value}' rebinds {sorted(rebound)[0]}, which holds a "
                                 "variable, under control flow; it is not turned into a module")
    for name in rebound:
        del state[name]


def _reads_input_shapes(helper, entries, variables: dict, setup: set[int], computed: set[str]) -> bool:
    """Whether a variable (or a value set up for one) reads the static shape of what the function is
    given or computes (`tf.get_variable("w", [x.get_shape()[1], 256])`): its variables can then only be
    created at the first call. Refuses any other read of those values, or of another variable."""
    inputs = set(helper.tensor_params) | computed
    variable_names = {small.targets[0].target.value for small in variables.values()}
    shapes = False
    for index in sorted({*variables, *setup}):
        statement = entries[index][0]
        reads = {name.value for name in load_names(statement)} - _targets(statement)
        if reads & variable_names or not reads & inputs:
            if reads & (inputs | variable_names):
                raise Refusal(statement, f"a variable of '{helper.function.name.value}' depends on its tensors")
            continue
        if {name.value for name in _value_reads(statement)} & inputs:  # read beyond its static shape
            raise Refusal(statement, f"a variable of '{helper.function.name.value}' depends on its tensors")
        shapes = True
    return shapes


def _value_reads(node: cst.CSTNode) -> list[cst.Name]:
    """The names `node` reads, less those it reads only the static shape of (`x.get_shape()[1]`)."""
    in_shapes = _shape_receivers(node)
    return [name for name in load_names(node) if id(name) not in in_shapes]


def _shape_receivers(node: cst.CSTNode) -> set[int]:
    return {id(child.value) for child in walk(node) if isinstance(child, cst.Attribute)
            and isinstance(child.value, cst.Name) and child.attr.value in ("shape", "get_shape")}


def _created_at_first_call(helper, entries, variables: dict, setup: set[int], analyzer, initializer_code,
                           initializers: set[str], factories: dict[str, bool]) -> None:
    """The whole function in `__call__`, its variables created where they were, on the first call only
    and outside any function graph (`tf.init_scope()`, as Keras builds its layers)."""
    helper.built_at_first_call = True
    helper.init_entries.append(((), "self.built = False"))
    state: dict[str, str] = {}
    pending: list[tuple[tuple[str, ...], str]] = []
    returns: list[cst.Return] = []
    for index, (statement, scopes) in enumerate(entries):
        if index in variables:
            small = variables[index]
            target = small.targets[0].target.value
            converted, trainable = _variable(small.value, analyzer, initializer_code, initializers, factories)
            attribute = _new_attribute(helper, target)
            line = cst.parse_statement(f"{attribute} = {converted}\n")
            scopes = tuple(_in_call(helper, scope) for scope in scopes)
            created = [(scopes, text) for text in _computation(helper, line, {})]
            pending += created
            helper.first_call_entries += created
            helper.variables.append((attribute.removeprefix("self."), trainable))
            state[target] = attribute
            continue
        helper.call_lines += _creation_block(pending)
        pending = []
        returns = [node for node in walk(statement) if isinstance(node, cst.Return)]
        if returns and index != len(entries) - 1:
            raise Refusal(returns[0], f"'{helper.function.name.value}' returns before its end; its variables "
                                      "are not created at its first call")
        if returns:
            helper.call_lines.append("self.built = True")
        extra = _initializer_replacements(statement, initializer_code) if index in setup else None
        helper.call_lines += _computation(helper, statement, state, extra)
        _forget_rebound(helper, statement, state)
    helper.call_lines += _creation_block(pending)
    if not returns:  # the last statement did not return: the first call ends here
        helper.call_lines.append("self.built = True")


def _in_call(helper, expression: str) -> str:
    """`expression` as `__call__` reads it: the function's Python parameters as attributes."""
    return _computation(helper, cst.parse_statement(f"{expression}\n"), {})[0]


def _creation_block(lines: list[tuple[tuple[str, ...], str]]) -> list[str]:
    if not lines:
        return []
    body = ["        " + line for line in grouped(lines)]
    return ["if not self.built:", "    with tf.init_scope():  # created once, outside any function graph", *body]


def _check_calls(helper, analyzer, variable_calls: set[int]) -> None:
    """Only variables, their scopes and initializers, ops and plain Python: anything else a module would
    build differently (a summary op in `__call__` is not merged by tf.summary.merge_all's conversion),
    and code of the program that may create variables would create them at every call."""
    label = f"'{helper.function.name.value}'"
    module = analyzer.resolver.module
    program, builders = program_imports(module), _state_builders(module, analyzer)
    known = {*_names_bound_in(helper.function), *dir(builtins)}
    for node in walk(helper.function.body):
        if not isinstance(node, cst.Call) or id(node) in variable_calls:
            continue
        name, category, _ = analyzer.category(node.func)
        if category not in _MODULE_CALLS:
            raise Refusal(node, f"{label} calls {name} ({category.value}); it is not turned into a module")
        if category is not None:
            continue
        root = getattr(leftmost_name(node.func), "value", None)
        if root in program or root in builders or (isinstance(node.func, cst.Name) and root not in known
                                                   and root not in _module_functions_and_imports(module)):
            raise Refusal(node, f"{label} calls {code(node.func)}, which may create variables at every call; it "
                                "is not turned into a module")


def _names_bound_in(function: cst.FunctionDef) -> set[str]:
    """Its parameters and the names its body binds."""
    return {p.name.value for p in function.params.params} | bound_names(function.body.body)


def _module_functions_and_imports(module: cst.Module) -> set[str]:
    """The names the module binds by `def` or by an import (`from math import sqrt`)."""
    imports = [s for s in module.body if isinstance(s, cst.SimpleStatementLine)
               and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body)]
    return {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)} | bound_names(imports)


def _state_builders(module: cst.Module, analyzer) -> set[str]:
    """The module's functions and classes that create variables, layers or cells when called."""
    found = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and any(
                isinstance(node, cst.Call) and analyzer.category(node.func)[1] in _STATE_CATEGORIES
                for node in walk(statement.body)):
            found.add(statement.name.value)
    return found


def _variable_assignment(statement: cst.BaseStatement, analyzer, factories: dict[str, bool]) -> cst.Assign | None:
    """`name = tf.Variable(...)` / `tf.get_variable(...)` / `<factory>(...)`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Call) and (analyzer.category(small.value.func)[1] is Category.VARIABLE
                                                       or _factory(small.value, factories) is not None)):
        return small
    return None


def _factory(call: cst.Call, factories: dict[str, bool]) -> str | None:
    return call.func.value if isinstance(call.func, cst.Name) and call.func.value in factories else None


def _targets(statement: cst.BaseStatement) -> set[str]:
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if isinstance(small, cst.Assign):
        return {n.value for t in small.targets for n in walk(t.target) if isinstance(n, cst.Name)}
    return bound_names([statement]) if isinstance(statement, _COMPUTING_BLOCKS) else set()


def _flatten(helper, statements, scopes: list[str], analyzer):
    for statement in statements:
        call = statement.items[0].item if isinstance(statement, cst.With) and len(statement.items) == 1 else None
        if isinstance(call, cst.Call) and not statement.items[0].asname:
            if analyzer.category(call.func)[1] is Category.SCOPE and _only_a_name(call, helper.reuse_param):
                yield from _flatten(helper, statement.body.body, scopes + [code(call.args[0].value)], analyzer)
                continue
        if not isinstance(statement, cst.SimpleStatementLine) and not _only_computes(statement, analyzer):
            raise Refusal(statement, f"'{helper.function.name.value}' has control flow; it is not turned into a module")
        yield statement, scopes


def _only_computes(statement: cst.BaseStatement, analyzer) -> bool:
    """An `if` / `for` / `while` block that creates no variables (nor scopes, layers or cells) and
    defines nothing: it can run in `__call__` as it ran while TF1 built the graph."""
    if not isinstance(statement, _COMPUTING_BLOCKS):
        return False
    for node in walk(statement):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal, cst.With)):
            return False
        if isinstance(node, cst.Call) and analyzer.category(node.func)[1] in _STATE_CATEGORIES:
            return False
    return True


def _only_a_name(call: cst.Call, reuse_param: str | None) -> bool:
    """A scope given only its name (and the reuse parameter, which the instances stand for)."""
    rest = [a for a in call.args[1:] if not (a.keyword and a.keyword.value == "reuse" and reuse_param
                                              and isinstance(a.value, cst.Name) and a.value.value == reuse_param)]
    return bool(call.args) and not call.args[0].keyword and not rest


def _variable(call: cst.Call, analyzer, initializer_code, initializer_locals: set[str],
              factories: dict[str, bool]) -> tuple[str, bool]:
    factory = _factory(call, factories)
    if factory is not None:
        return code(call), factories[factory]  # the factory creates it, now eagerly
    if analyzer.category(call.func)[0] == "tf.Variable":
        return convert_variable(call, Scopes())
    initializer = next((a.value for i, a in enumerate(call.args)
                        if (a.keyword and a.keyword.value == "initializer") or (not a.keyword and i == 3)), None)
    if isinstance(initializer, cst.Name) and initializer.value in initializer_locals:
        known = initializer.value
    else:
        known = initializer_code(initializer) if initializer is not None else None
    return convert_get_variable(call, Scopes(), known)


def _initializer_replacements(statement: cst.BaseStatement, initializer_code) -> dict:
    return {id(node): (lambda _, text=initializer_code(node): cst.parse_expression(text))
            for node in walk(statement) if isinstance(node, cst.Call) and initializer_code(node) is not None}


def _render(statement: cst.BaseStatement, replacements: dict) -> list[str]:
    """A statement as source lines (its comments kept), with the replacements applied."""
    comments = [line for line in statement.leading_lines if line.comment]
    rendered = replace_nodes(statement.with_changes(leading_lines=comments), replacements)
    return cst.Module(body=[rendered]).code.rstrip("\n").split("\n")


def _computation(helper, statement: cst.BaseStatement, state: dict[str, str],
                 replacements: dict | None = None) -> list[str]:
    replacements = dict(replacements or {})
    targets = {id(n) for node in walk(statement) if isinstance(node, cst.AssignTarget) for n in walk(node.target)}
    for name in load_names(statement):
        if name.value in state and id(name) not in targets:  # `w = tf.clip_by_value(w, ...)` binds a local
            replacements[id(name)] = lambda _, text=state[name.value]: cst.parse_expression(text)
        elif name.value in helper.config_params:
            replacements[id(name)] = lambda _, text=attribute_of(name.value): cst.parse_expression(text)
            entry = ((), f"{attribute_of(name.value)} = {name.value}")
            if entry not in helper.init_entries:
                helper.init_entries.insert(0, entry)
    return _render(statement, replacements)


def grouped(entries: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """__init__ lines, consecutive ones in the same name scopes sharing one `with tf.name_scope(...)`
    (eager TF2 variables take the scope prefix, so names stay `hidden1/weights`)."""
    lines: list[str] = []
    open_scopes: tuple[str, ...] = ()
    for scopes, line in entries:
        common = 0
        while common < min(len(scopes), len(open_scopes)) and scopes[common] == open_scopes[common]:
            common += 1
        for depth in range(common, len(scopes)):
            lines.append("    " * depth + f"with tf.name_scope({scopes[depth]}):")
        lines += ["    " * len(scopes) + text for text in line.split("\n")]
        open_scopes = scopes
    return lines
