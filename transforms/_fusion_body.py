"""The loop body around a fused step call (TFM301): which statements the graph loop repeats
(index arithmetic feeding the call), which per-step numbers are computed in Python first (a
learning-rate schedule), and whether the rest is plain Python on the step's outputs."""
from __future__ import annotations

import libcst as cst

from transforms._fusion_args import IndexChecker
from transforms._fusion_scan import calls_in, names_bound, names_read


def scheduled_values(checker: IndexChecker, copied, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """Copied values that are not index arithmetic but plain Python numbers of the step (a learning
    rate schedule), fed to the step whole and read by nothing else the graph repeats."""
    fed = {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
    found = {}
    for statement in copied:
        name, value = statement.body[0].targets[0].target.value, statement.body[0].value
        others = [s.body[0].value for s in copied if s is not statement]
        if name in fed and not any(name in names_read(o) for o in others) and \
                IndexChecker(checker.loop_var, {}, checker.forbidden).integer(value) is not None and \
                checker.schedule(value):
            found[name] = value
    return found


def copied_statements(before, call: cst.Call) -> list[cst.SimpleStatementLine]:
    """Single-name assignments before the call whose names the call reads, directly or not."""
    needed = set(names_read(call))
    chosen = []
    for statement in reversed(before):
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value in needed:
            chosen.append(statement)
            needed |= set(names_read(small.value))
    return chosen[::-1]


def named_problem(statement: cst.SimpleStatementLine, problem: str | None) -> str | None:
    return problem and f"`{statement.body[0].targets[0].target.value}`, fed to the step, {problem}"


def bound_count(body, name: str) -> int:
    return sum(name in names_bound([statement]) for statement in body)


def plain_python_problem(statements, state: set[str], call_problem) -> str | None:
    """Why the statements around the step call are not plain Python on its outputs, or None (the
    index statements copied into the graph are checked as such, by `IndexChecker`)."""
    for statement in statements:
        touched = sorted(set(names_read(statement)) & state)
        if touched:
            return f"loop body also reads `{touched[0]}` (TensorFlow state or another function) mid-loop"
        for call in calls_in(statement):
            problem = call_problem(call)
            if problem:
                return problem
    return None


def evaluation_blocks(body, state: set[str], call_problem) -> list[cst.If]:
    """`if` statements (without else) of the loop body that do more than plain Python: an evaluation
    or logging point that calls other TensorFlow functions or reads state."""
    return [s for s in body if isinstance(s, cst.If) and s.orelse is None
            and plain_python_problem([s], state, call_problem) is not None]


def evaluation_problem(body, index: int, copied, evaluations, checker: IndexChecker,
                       opaque: set[str]) -> str | None:
    """Why the steps cannot run in chunks up to each step where the evaluation runs, or None.

    The evaluation must be one `if` after the step call, on a test of the loop variable and
    invariants alone, so that it can be told before the steps run (`opaque` names, which may hold
    TensorFlow objects, are not invariants); the loop may do nothing else but index arithmetic for
    the call; the step's outputs may be read only by the evaluation, which sees those of its own
    step; the index values exist only in the graph, so the evaluation must not read them."""
    if len(evaluations) != 1 or body.index(evaluations[0]) < index:
        return "loop body calls tf.functions twice per step (e.g. an evaluation reading the weights mid-training)"
    evaluation = evaluations[0]
    if any(s is not body[index] and s is not evaluation and s not in copied for s in body):
        return "loop body does Python work besides the step call and its evaluation"
    if not checker.condition(evaluation.test) or set(names_read(evaluation.test)) & opaque:
        return "the evaluation runs on a test of more than the loop variable and invariants"
    index_names = sorted(set(names_read(evaluation)) & set(checker.per_step))
    if index_names:
        return f"the evaluation reads `{index_names[0]}`, which only the graph loop computes"
    return None
