"""Variable-scope reuse in the program's own functions: `with tf.variable_scope(<name>, reuse=<parameter>):`
around everything the function creates, and what a call passes for that parameter. Functions that
create variables (transforms/graph/structure/modules.py) and functions that build layers
(transforms/graph/layers/model_functions.py) share one object between a creating call and the calls
that reuse it, as TF1's scope handed back the same variables."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.common.syntax import Refusal, load_names, walk


def reuse_parameter(function: cst.FunctionDef, analyzer, creates: Category) -> str | None:
    """The parameter the function passes as `variable_scope(..., reuse=<it>)` around all the calls of
    category `creates` it makes (None when it does not take reuse); refused for other uses of reuse."""
    scopes = [node for node in walk(function.body) if isinstance(node, cst.With) and len(node.items) == 1
              and isinstance(call := node.items[0].item, cst.Call) and any(
                  a.keyword and a.keyword.value == "reuse" for a in call.args)]
    if not scopes:
        return None
    name = function.name.value
    reuse = next(a.value for a in scopes[0].items[0].item.args if a.keyword and a.keyword.value == "reuse")
    parameters = [p.name.value for p in function.params.params]
    if len(scopes) > 1 or not isinstance(reuse, cst.Name) or reuse.value not in parameters:
        raise Refusal(scopes[-1], f"'{name}' sets variable-scope reuse other than from one parameter")
    if sum(1 for n in load_names(function.body) if n.value == reuse.value) != 1:
        raise Refusal(reuse, f"'{name}' uses its reuse parameter '{reuse.value}' for more than the variable scope")
    if _calls_of(function, analyzer, creates) != _calls_of(scopes[0].body, analyzer, creates):
        what = "variables" if creates is Category.VARIABLE else "layers"
        raise Refusal(scopes[0], f"'{name}' creates {what} outside its reusing variable scope")
    return reuse.value


def reuse_mode(function: cst.FunctionDef, reuse_param: str | None, bound: dict[str, cst.BaseExpression],
               analyzer, call: cst.Call) -> str:
    """"False", "True" or "AUTO_REUSE": what the call passes for reuse (False when it cannot)."""
    if reuse_param is None:
        return "False"
    value = bound.get(reuse_param)
    if value is None:
        value = next((p.default for p in function.params.params if p.name.value == reuse_param), None)
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return "False" if value.value == "None" else value.value
    if value is not None and analyzer.category(value)[0] == "tf.AUTO_REUSE":
        return "AUTO_REUSE"
    raise Refusal(value or call, f"'{function.name.value}' is called without a literal reuse value "
                                 "(True, False, None or tf.AUTO_REUSE)")


def _calls_of(node: cst.CSTNode, analyzer, category: Category) -> set[int]:
    return {id(n) for n in walk(node) if isinstance(n, cst.Call) and analyzer.category(n.func)[1] is category}
