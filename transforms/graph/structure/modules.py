"""Functions that create variables and compute with them, e.g.

    def dense(x, n_in, n_out, name):
        with tf.name_scope(name):
            w = tf.Variable(tf.truncated_normal([n_in, n_out]), name="weights")
            return tf.matmul(x, w)

become `tf.Module` classes: `__init__` takes the parameters the callers pass Python values for and
creates the variables once (inside the same name scopes, so they keep their TF1 names), `__call__`
takes the tensor parameters and computes. Each call in graph code becomes an instance, created where
the call was, and the step functions call the instance. The function's own name goes with it.

Variable-scope reuse: when the variables sit in `with tf.variable_scope(<name>, reuse=<parameter>):`,
a call with that parameter True (or tf.AUTO_REUSE, once an instance exists) gets the instance an
earlier call created with the same other arguments in the same scope, as TF1's `get_variable` handed
back the same variables: one object, called twice. Refused where TF1 raised: reuse=True before the
variables exist, reuse=False when they do; and a reuse value that is not a literal at the call. A call
after `scope.reuse_variables()` (transforms/graph/analysis/flatten.py) reuses the same way, for
functions whose variables all come from tf.get_variable."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.structure.module_body import attribute_of, grouped, split_body
from transforms.graph.structure.scope_reuse import reuse_mode, reuse_parameter
from transforms.common.syntax import Refusal, code, string_value, walk

_NAME_PARAMETERS = ("name", "scope", "layer_name", "name_scope")
@dataclass
class ModuleHelper:
    function: cst.FunctionDef
    class_name: str
    tensor_params: list[str]
    config_params: list[str]
    init_signature: list[str]
    init_entries: list[tuple[tuple[str, ...], str]] = field(default_factory=list)  # (name scopes, line)
    call_lines: list[str] = field(default_factory=list)
    reuse_param: str | None = None          # the parameter passed as variable_scope(reuse=...)
    instances: dict[tuple, str] = field(default_factory=dict)  # (arguments, call scope) -> instance
    variables: list[tuple[str, bool]] = field(default_factory=list)  # (attribute, trainable), in creation order
    built_at_first_call: bool = False       # its variables' shapes come from what it is given
    first_call_entries: list[tuple[tuple[str, ...], str]] = field(default_factory=list)  # variables made there

    def arguments(self, passed: tuple[tuple[str, str], ...]) -> dict[str, str]:
        """Parameter -> code of what an instance was made with: `passed` (an instance key's first part),
        the function's defaults for the rest."""
        return {**_defaults(self.function), **dict(passed)}

    def parameter_attributes(self) -> dict[str, str]:
        """Attribute (`_name`) -> the parameter that configures the variables it holds (`name`)."""
        return {attribute_of(parameter).removeprefix("self."): parameter for parameter in self.config_params}

    def class_code(self) -> str:
        created = "created at its first call from its inputs' shapes" if self.built_at_first_call \
            else "created once"
        docstring = f'    """The variables of `{self.function.name.value}`, {created}, and what it computed."""\n\n'
        init = f"    def __init__(self, {', '.join(self.init_signature)}):\n" if self.config_params else \
            "    def __init__(self):\n"
        body = "".join(f"        {line}\n" for line in ["super().__init__()", *grouped(self.init_entries)])
        call = f"\n    def __call__({', '.join(['self', *self.tensor_params])}):\n"
        call += "".join(f"        {line}\n" for line in self.call_lines)
        return f"class {self.class_name}(tf.Module):\n{docstring}{init}{body}{call}"


def is_variable_helper(function: cst.FunctionDef, analyzer, factories=()) -> bool:
    """Whether `function` creates variables: itself, or through a variable factory (`weight_variable(shape)`)."""
    calls = [n for n in walk(function.body) if isinstance(n, cst.Call)]
    return any(analyzer.category(n.func)[1] is Category.VARIABLE
               or (isinstance(n.func, cst.Name) and n.func.value in factories) for n in calls)


def plan_module(function: cst.FunctionDef, call: cst.Call, analyzer, names, initializer_code,
                factories: dict[str, bool], is_tensor=None) -> ModuleHelper:
    """`factories`: the program's variable factories, by name, with whether their variable trains;
    `is_tensor`: which arguments are tensors, for a call that graph code does not make itself."""
    is_tensor = is_tensor or (lambda node: is_graph_expression(analyzer, node))
    params = _parameters(function)
    bound = _bind(function, call, params)
    reuse = reuse_parameter(function, analyzer, Category.VARIABLE)
    params = [p for p in params if p != reuse]
    tensor = [p for p in params if p in bound and is_tensor(bound[p])]
    if set(tensor) & set(_defaults(function)):
        raise Refusal(function, f"'{function.name.value}' has a tensor parameter with a default")
    defaults = _defaults(function)
    config = [p for p in params if p not in tensor]
    helper = ModuleHelper(function, names.fresh(_camel(function.name.value)), tensor, config,
                          [f"{p}={defaults[p]}" if p in defaults else p for p in config], reuse_param=reuse)
    split_body(helper, analyzer, initializer_code, factories)
    return helper


def instantiate(helper: ModuleHelper, call: cst.Call, analyzer, names, scope: str = "",
                reusing_scope: bool = False, factories=(), is_tensor=None) -> LayerUse:
    """The instance one call of the function becomes, as a LayerUse (built once, called in steps);
    a reusing call gets an existing instance (its construction is then empty). `scope` is the
    variable-scope path the call sits in; `reusing_scope`, whether it was told `reuse_variables()`."""
    is_tensor = is_tensor or (lambda node: is_graph_expression(analyzer, node))
    bound = _bind(helper.function, call, _parameters(helper.function))
    reuse = _scope_reuse(helper, analyzer, call, factories) if reusing_scope else \
        reuse_mode(helper.function, helper.reuse_param, bound, analyzer, call)
    bound.pop(helper.reuse_param, None)
    if [p for p in bound if is_tensor(bound[p])] != [p for p in helper.tensor_params if p in bound]:
        raise Refusal(call, f"'{helper.function.name.value}' is called with tensors in other places")
    inputs = [bound[p] for p in helper.tensor_params]
    key = (tuple((p, code(bound[p])) for p in helper.config_params if p in bound), scope)
    existing = helper.instances.get(key)
    if reuse == "True" or (reuse == "AUTO_REUSE" and existing):
        if existing is None:
            raise Refusal(call, f"'{helper.function.name.value}' is called with reuse=True before a call with the "
                                "same arguments created its variables (TF1 raises here)")
        return LayerUse(call, existing, "", inputs, {}, True, "Module")
    if existing and helper.reuse_param:
        raise Refusal(call, f"'{helper.function.name.value}' is called again without reuse for variables that exist "
                            "(TF1 raises here)")
    label = next((string_value(bound[p]) for p in _NAME_PARAMETERS if p in bound and string_value(bound[p])), None)
    base = label if label and label.isidentifier() else helper.function.name.value
    instance = names.fresh(base if base not in names.taken else f"{base}_module")
    helper.instances[key] = instance
    config = ", ".join(f"{p}={code(bound[p])}" for p in helper.config_params if p in bound)
    return LayerUse(call, instance, f"{helper.class_name}({config})", inputs, {}, True, "Module")


def _scope_reuse(helper: ModuleHelper, analyzer, call: cst.Call, factories) -> str:
    """A call after `scope.reuse_variables()` gets back the variables `tf.get_variable` made; a function
    that also makes variables another way (tf.Variable ignores reuse) or sets reuse itself is refused."""
    name = helper.function.name.value
    if helper.reuse_param:
        raise Refusal(call, f"'{name}' sets its own reuse inside a scope told `reuse_variables()`")
    calls = [n for n in walk(helper.function.body) if isinstance(n, cst.Call)]
    if any((isinstance(n.func, cst.Name) and n.func.value in factories)
           or _creates_variable_ignoring_reuse(analyzer.category(n.func)) for n in calls):
        raise Refusal(call, f"'{name}' makes variables other than with tf.get_variable, which ignore "
                            "`reuse_variables()`; this mix is not modelled")
    return "True"


def _creates_variable_ignoring_reuse(category) -> bool:
    name, kind, _ = category
    return kind is Category.VARIABLE and name != "tf.get_variable"


def _parameters(function: cst.FunctionDef) -> list[str]:
    parameters = function.params
    if isinstance(parameters.star_arg, cst.Param) or parameters.star_kwarg or parameters.kwonly_params \
            or parameters.posonly_params:
        raise Refusal(function, f"'{function.name.value}' has */** or keyword-only parameters")
    return [p.name.value for p in parameters.params]


def _defaults(function: cst.FunctionDef) -> dict[str, str]:
    return {p.name.value: code(p.default) for p in function.params.params if p.default is not None}


def _bind(function: cst.FunctionDef, call: cst.Call, params: list[str]) -> dict[str, cst.BaseExpression]:
    bound = {}
    for index, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword else (params[index] if index < len(params) else None)
        if arg.star or key not in params:
            raise Refusal(arg, f"an argument of '{function.name.value}' that cannot be matched to a parameter")
        bound[key] = arg.value
    if set(params) - set(bound) - set(_defaults(function)):
        raise Refusal(call, f"'{function.name.value}' called without all its arguments")
    return bound


def is_graph_expression(analyzer, node: cst.BaseExpression) -> bool:
    facts = analyzer.analyze(node)
    return bool(facts.reads or facts.builds_ops)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Module"
