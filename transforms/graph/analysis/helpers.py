"""Module-level functions that graph code calls: which build graph ops when called (graph helpers,
traced inside the step functions when they only compute) and which are variable factories (the
`weight_variable(shape)` idiom: they return a new tf.Variable and can keep creating it, eagerly)."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.common.syntax import Refusal, walk

_COMPUTING = (None, Category.OP, Category.PYTHON, Category.INITIALIZER)


def _categories(function: cst.FunctionDef, analyzer) -> list[tuple[cst.Call, Category | None]]:
    return [(node, analyzer.category(node.func)[1]) for node in walk(function.body) if isinstance(node, cst.Call)]


def graph_helpers(functions: list[cst.FunctionDef], analyzer) -> dict[str, cst.FunctionDef]:
    """The functions whose bodies call TensorFlow graph APIs (and do not run a session: those are
    plain Python that the run-site rewrite handles)."""
    helpers = {}
    for function in functions:
        categories = {category for _, category in _categories(function, analyzer)}
        if categories - {None, Category.PYTHON} and not categories & {Category.SESSION, Category.INIT_OP}:
            helpers[function.name.value] = function
    return helpers


def variable_factory(function: cst.FunctionDef, analyzer) -> bool | None:
    """For a function that creates exactly one tf.Variable, otherwise only computes its initial value
    and returns that variable: whether it is trainable. None for any other function (one returning
    what it computes with the variable is a module: transforms/graph/structure/modules.py)."""
    calls = _categories(function, analyzer)
    variables = [call for call, category in calls if category is Category.VARIABLE]
    others = [category for _, category in calls if category is not Category.VARIABLE]
    if len(variables) != 1 or any(category not in _COMPUTING for category in others):
        return None
    if analyzer.category(variables[0].func)[0] != "tf.Variable":
        return None
    call = variables[0]
    if not _returns_only(function, call):
        return None
    trainable = next((arg.value for index, arg in enumerate(call.args) if (arg.keyword is None and index == 1)
                      or (arg.keyword is not None and arg.keyword.value == "trainable")), None)
    if trainable is None:
        return True
    if isinstance(trainable, cst.Name) and trainable.value in ("True", "False"):
        return trainable.value == "True"
    raise Refusal(trainable, "trainable= must be a literal True or False")


def _returns_only(function: cst.FunctionDef, variable: cst.Call) -> bool:
    """Whether every `return` of `function` returns `variable`: the call itself, or the one name bound
    to it."""
    names = {small.targets[0].target.value for node in walk(function.body)
             if isinstance(node, cst.SimpleStatementLine) for small in node.body
             if isinstance(small, cst.Assign) and small.value is variable and len(small.targets) == 1
             and isinstance(small.targets[0].target, cst.Name)}
    returns = [node for node in walk(function.body) if isinstance(node, cst.Return)]
    return bool(returns) and all(node.value is variable or (isinstance(node.value, cst.Name)
                                                           and node.value.value in names) for node in returns)
