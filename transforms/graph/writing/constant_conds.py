"""`tf.cond` on a placeholder that a step function's runs always feed one literal, e.g. dropout switched
by `is_training`, fed True by the training run and False by the evaluation run:

    hidden = tf.cond(is_training, lambda: tf.nn.dropout(hidden, 0.8), lambda: hidden)

The placeholder becomes that literal in the step function (plan.py), and TF2's `cond` refuses a Python
bool. TF1 ran only the branch the predicate chose, so the step function holds that branch alone: its
lambda's body, or a call of the function named. The untaken branch is dropped only when it calls no
layer and no converted helper, since TF1 built both branches and their variables; otherwise the cond
stays, on the literal as a constant tensor."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import Refusal, bind_arguments, calls_under

_SIGNATURE = ["pred", "true_fn", "false_fn", "strict", "name", "fn1", "fn2"]
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BaseNumber, cst.BaseString)
_BRANCHES = {True: ("true_fn", "fn1"), False: ("false_fn", "fn2")}


def cond_calls(resolver, nodes) -> list[cst.Call]:
    """The `tf.cond` calls under `nodes` whose predicate is a plain name."""
    found = []
    for node in nodes:
        for call in calls_under(node):
            if resolver.tf_name(call.func) == "tf.cond" and isinstance(_argument(call, "pred"), cst.Name):
                found.append(call)
    return found


def predicate_name(call: cst.Call) -> str:
    return _argument(call, "pred").value


def resolved_cond(call: cst.Call, taken: bool, creates_state) -> object | None:
    """Replacement maker for `call`, whose predicate is the literal `taken`; `creates_state(call)` says
    whether a call makes variables (a layer's or a converted helper's first call)."""
    taken_branch, untaken = _branch(call, taken), _branch(call, not taken)
    if taken_branch is None or untaken is None:
        return None
    if any(creates_state(node) for node in calls_under(untaken)):
        return lambda updated: _on_constant(updated, _position(call, _argument(call, "pred")), taken)
    position = _position(call, taken_branch)

    def make(updated: cst.Call) -> cst.BaseExpression:
        branch = updated.args[position].value
        if isinstance(branch, cst.Lambda) and not branch.params.params:
            return _as_operand(branch.body)
        return cst.Call(func=branch)
    return make


def is_self_assignment(statement: cst.BaseStatement) -> bool:
    """`hidden = hidden`, what the cond of a branch returning its input leaves."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    assign = statement.body[0]
    return (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and isinstance(assign.value, cst.Name)
            and assign.targets[0].target.value == assign.value.value
            and not any(line.comment for line in statement.leading_lines))


def _on_constant(updated: cst.Call, position: int, taken: bool) -> cst.Call:
    """`updated` with its predicate, argument `position`, the constant tensor of `taken`."""
    args = list(updated.args)
    args[position] = args[position].with_changes(value=cst.parse_expression(f"tf.constant({taken})"))
    return updated.with_changes(args=args)


def _argument(call: cst.Call, name: str) -> cst.BaseExpression | None:
    try:
        return bind_arguments(call, _SIGNATURE, "tf.cond").get(name)
    except Refusal:  # *args or unknown keywords: not a cond this module resolves
        return None


def _branch(call: cst.Call, taken: bool) -> cst.BaseExpression | None:
    for name in _BRANCHES[taken]:
        branch = _argument(call, name)
        if branch is not None:
            return branch
    return None


def _position(call: cst.Call, value: cst.BaseExpression) -> int:
    return next(index for index, arg in enumerate(call.args) if arg.value is value)


def _as_operand(expression: cst.BaseExpression) -> cst.BaseExpression:
    """`expression` safe where the call stood: an operator's operand keeps its parentheses."""
    if expression.lpar or isinstance(expression, _ATOMS):
        return expression
    return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
