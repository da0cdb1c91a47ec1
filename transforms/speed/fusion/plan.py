"""Deciding whether a Python step loop can run in one graph (TFM301), and how.

`plan_fusion` returns a `Plan`, or the reason (a string) why the loop must stay as it is. The loop
must be `for v in range(...)` without `else`, call one step function once per iteration as a
statement of its own (or several different step functions, each once, run in that order in the graph
loop: without an evaluation, or drawing its batches ahead and evaluating after the steps or first), feed it
invariant values, batches of invariant arrays (`_fusion_args`) or batches drawn ahead (`fusion/draws.py`),
and otherwise do plain Python: no other TensorFlow function or state read, no early exit, no
rebinding of what the call reads (but for a binding of the same value at every step, `a, b = pairs`,
which then runs once, before the steps), no use of what it is fed that could change it in place.
The one exception is an evaluation (`_fusion_body`): an `if` on a test of the loop variable alone,
after the call, which then runs in the graph loop (`fusion/evaluation.py`) or between chunks of steps.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.speed.fusion.args import IndexChecker
from transforms.speed.fusion.body import (
    assigned_names,
    assigned_pairs,
    bound_count,
    copied_statements,
    evaluation_blocks,
    evaluation_first,
    evaluation_problem,
    fed_arrays_problem,
    invariant_bindings,
    named_problem,
    plain_python_problem,
    scheduled_values,
    TWICE_PER_STEP,
)
from transforms.speed.fusion.draws import Draw, batch_draw, draws_problem, hoisted_draws, random_draw, reshaped_draw
from transforms.speed.fusion.params import fixes_shape, loop_params, values_name
from transforms.speed.fusion.scan import callee_name, calls_in, leaving_statement, names_bound
from transforms.common.syntax import only_small_statement
from transforms.speed.fusion.state import ModuleFacts, StepFunction

NO_STEP_CALL = "loop body calls no step function"
REBOUND_LOOP_VARIABLE = "loop body rebinds the loop variable"
INDEX_SPEC = "tf.TensorSpec([None], tf.int64)"  # an index array (`order`, for `X[order[a:b]]`)


@dataclass(frozen=True)
class Plan:
    step: StepFunction
    call: cst.Call
    call_index: int  # position of the call's statement in the loop body
    copied: tuple[cst.SimpleStatementLine, ...]  # index statements the graph loop repeats
    scheduled: tuple[tuple[str, cst.BaseExpression], ...]  # per-step values computed in Python first
    params: tuple[tuple[str, cst.BaseExpression], ...]  # array/scalar name -> its TensorSpec
    uses_loop_var: bool
    evaluations: tuple[cst.If, ...] = ()  # `if <schedule>:` blocks run between chunks of steps
    run_once: tuple[cst.SimpleStatementLine, ...] = ()  # invariant bindings, run before the steps instead
    index_arrays: tuple[str, ...] = ()  # invariant integer arrays whose batches gather the step's batches
    more: tuple[tuple[StepFunction, cst.Call, int], ...] = ()  # further step calls, in order (no evaluation)
    in_graph: object = None  # the evaluation run in the graph loop (`fusion/evaluation.py`), else chunks
    outputs_read_after: bool = False  # run in chunks, the step's outputs are read after the loop too
    drawn: tuple[Draw, ...] = ()  # `next_batch` statements drawing the batches ahead, a chunk of steps at a time

    def drawn_names(self) -> list[str]:
        """The names the draws bind (`_` aside), in order."""
        return [name for draw in self.drawn for name in draw.names if name != "_"]

    def step_calls(self) -> list[tuple[StepFunction, cst.Call, int]]:
        """(step function, call, position of its statement) of every step call, in body order."""
        return [(self.step, self.call, self.call_index), *self.more]

    def functions_called(self) -> list[StepFunction]:
        """Every step function the multi-step function calls: the steps, then an in-graph evaluation's."""
        return [step for step, _, _ in self.step_calls()] + ([self.in_graph.step] if self.in_graph else [])


def calls_by_name(loop: cst.For, names: set[str]) -> bool:
    """Whether the loop's own statements (not loops nested in them) call one of `names` by name:
    plan_fusion's first test, with the module's steps."""
    return any(callee_name(call) in names for statement in loop.body.body for call in calls_in(statement, False))


def plan_fusion(loop: cst.For, facts: ModuleFacts) -> Plan | str:
    """The module's facts say which names are steps; `facts.state`: names of TensorFlow functions,
    variables and modules, which the loop must not read; `facts.opaque`: names that may hold such
    objects (results of calls that may return them, `self`), which the loop's Python work must not
    read unless the loop body binds them itself. (The step's arguments may: they replace feed_dict
    values, which TF1 required to be NumPy-convertible.) `facts.datasets`: names bound to TF1's
    tutorial MNIST loader, whose batches may be drawn ahead, like NumPy random numbers of a fixed
    shape (`fusion/draws.py`)."""
    steps, state, opaque, call_problem, logs = facts.steps, facts.state, facts.opaque, facts.call_problem, facts.logs
    body = list(loop.body.body)
    if not calls_by_name(loop, set(steps)):
        return NO_STEP_CALL
    if loop.orelse is not None or loop.asynchronous is not None or not isinstance(loop.target, cst.Name):
        return "loop has an else clause, is async or unpacks its target"
    if not _is_range(loop.iter):
        return "loop does not run over range(...)"
    leaving = leaving_statement(body)
    if leaving is not None:
        return f"loop body contains `{type(leaving).__name__}`; the steps could not all run first"
    evaluations = loop_evaluations(loop, facts)
    draws = _draws(body, facts)
    found = _step_calls([s for s in body if s not in evaluations], steps, not evaluations or bool(draws))
    if found == NO_STEP_CALL:  # the step is called only under an `if`: say so
        found = _step_calls(body, steps, False)
    if isinstance(found, str):
        return found
    whole = {draw.names[0]: draw for draw in draws if draw.dataset is not None and len(draw.names) == 1}
    calls, hoisted = hoisted_draws([(c, f_step) for _, c, f_step, _ in found], facts.fixed_shape_draw, whole)
    found = [(i, call, f_step, statement) for (i, _, f_step, statement), call in zip(found, calls)]
    _, call, step, statement = found[0]
    index = body.index(statement)
    calls = [c for _, c, _, _ in found]
    more = tuple((f_step, f_call, body.index(f_statement)) for _, f_call, f_step, f_statement in found[1:])
    call_statements = [f_statement for *_, f_statement in found]
    loop_var, bound = loop.target.value, names_bound(body)
    if loop_var in bound or loop_var in names_bound([loop.iter]):
        return REBOUND_LOOP_VARIABLE
    run_once = invariant_bindings(body[:index], loop_var, body, state)
    # Draws may come between step calls, whose arguments may draw too: the steps touch no NumPy value,
    # so drawing all of them ahead, in the order the body made them, draws the same numbers.
    last = body.index(call_statements[-1])
    placed = [(body.index(d.statement), d) for d in draws
              if body.index(d.statement) < last and d.statement not in run_once]
    placed += [(body.index(s), d) for s, call_draws in zip(call_statements, hoisted) for d in call_draws]
    draws = [d for _, d in sorted(placed, key=lambda pair: pair[0])]
    drawn_statements = [d.statement for d in draws]
    drawn = {name for d in draws for name in d.names}
    copied = copied_statements([s for s in body[:index] if s not in [*run_once, *drawn_statements]], calls)
    if draws and copied:
        return "loop draws its batches ahead and also computes batch indices"
    if draws and evaluations and body.index(evaluations[0]) < body.index(call_statements[-1]) and \
            not evaluation_first(body, index, [*copied, *run_once, *drawn_statements], evaluations[0]):
        return "loop draws its batches ahead and evaluates between its draws and its steps"
    if evaluations and more and not draws:
        return TWICE_PER_STEP
    per_step = {name: value for s in copied for name, value in assigned_pairs(s)}
    if any(bound_count(body, name) != 1 for name in per_step):
        return "a value the step call reads is bound more than once in the loop body"
    checker = IndexChecker(loop_var, per_step, (bound - set(per_step) - names_bound(run_once)) | state)
    for problem in _check_range(checker, loop.iter):
        return f"range {problem}"
    scheduled = scheduled_values(checker, copied, calls)
    copied = [s for s in copied if not set(assigned_names(s)) & set(scheduled)]
    problems = [named_problem(name, checker.copied_value(value)) for s in copied for name, value in assigned_pairs(s)]
    problems += [_argument_problem(checker, arg, f_step) for _, f_call, f_step, _ in found for arg in f_call.args
                 if not (isinstance(arg.value, cst.Name) and arg.value.value in {*scheduled, *drawn})]
    problems.append(evaluations and evaluation_problem(
        body, index, [*copied, *run_once, *drawn_statements, *call_statements[1:]], evaluations, checker, opaque - bound))
    python_work = [s for s in body if s not in [*call_statements, *copied, *run_once, *evaluations, *drawn_statements]]
    fed = {*checker.facts.sliced, *checker.facts.whole, *names_bound(run_once)}
    problem = next((p for p in problems if p), None) or plain_python_problem(
        python_work, state | (opaque - bound), call_problem, logs) or fed_arrays_problem(python_work, fed)
    if not problem and draws:
        # an evaluation may bind a name the draws bind (`z = sample_z(16, dim)` for its samples): it
        # comes before the draws or after the steps, which read what the draws appended
        problem = draws_problem(draws, [s for s in body if s not in evaluations], python_work,
                                (bound - drawn) | {loop_var}, facts.random_call)
    if problem:
        return problem
    params = ()
    for _, f_call, f_step, _ in found:
        more_params = loop_params(f_call, f_step, per_step, set(scheduled) | drawn)
        if isinstance(more_params, str):
            return more_params
        known = {name: cst.Module([]).code_for_node(spec) for name, spec in params}
        for name, spec in more_params:
            if known.setdefault(name, cst.Module([]).code_for_node(spec)) != cst.Module([]).code_for_node(spec):
                return f"`{name}` feeds parameters with different signatures"
        params += tuple((name, spec) for name, spec in more_params if name not in dict(params))
    indices = tuple(dict.fromkeys(checker.facts.indices))
    clash = sorted(set(indices) & {name for name, _ in params})
    if clash:
        return f"`{clash[0]}` is fed to the step and also indexes its batches"
    params += tuple((name, cst.parse_expression(INDEX_SPEC)) for name in indices)
    if draws and not {values_name(name) for name in drawn} & {name for name, _ in params}:
        return "loop draws batches ahead but feeds none of them to the step"
    unshaped = [name for draw in draws if not draw.shaped for name in draw.names if name != "_"]
    loose = [name for name in unshaped if not fixes_shape(dict(params).get(values_name(name), cst.Name("None")))]
    if loose:
        return (f"`{loose[0]}` comes from the program's own `next_batch`, and the step's input_signature does not "
                "fix its shape: its batches might not stack")
    return Plan(step, call, index, tuple(copied), tuple(scheduled.items()), params,
                checker.facts.uses_loop_var or bool(scheduled), tuple(evaluations), tuple(run_once), indices, more,
                drawn=tuple(draws))


def loop_evaluations(loop: cst.For, facts: ModuleFacts) -> list[cst.If]:
    """The `if` blocks of the loop body that evaluate (body.evaluation_blocks)."""
    body = list(loop.body.body)
    return evaluation_blocks(body, facts.state | (facts.opaque - names_bound(body)), facts.call_problem, facts.logs)


def _draws(body: list[cst.BaseStatement], facts: ModuleFacts) -> list[Draw]:
    """The draws among the loop body's statements, in order (a reshape of a drawn batch among them)."""
    found: list[Draw] = []
    for statement in body:
        drawn = {name for draw in found for name in draw.names}
        draw = batch_draw(statement, facts.datasets, facts.batch_sources) or \
            random_draw(statement, facts.fixed_shape_draw) or \
            reshaped_draw(statement, drawn)
        if draw is not None:
            found.append(draw)
    return found


def _is_range(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"
            and 1 <= len(node.args) <= 3 and not any(a.keyword or a.star for a in node.args))


def _check_range(checker: IndexChecker, node: cst.Call):
    for arg in node.args:
        problem = checker.integer(arg.value)
        if problem or checker.facts.uses_loop_var:
            yield problem or "uses the loop variable"


def _step_calls(body, steps, several: bool):
    """[(statement index, call, step function, statement)] of the step calls, in order, or why they
    cannot be fused: one call, or with `several`, calls of different step functions (each once per
    step, run in that order in the graph loop)."""
    calls = [(i, c) for i, s in enumerate(body) for c in calls_in(s, False) if callee_name(c) in steps]
    if not calls:
        return NO_STEP_CALL
    names = [callee_name(c) for _, c in calls]
    if len(calls) > 1 and (not several or len(set(names)) < len(names) or len({i for i, _ in calls}) < len(calls)):
        return TWICE_PER_STEP
    found = []
    for index, call in calls:
        statement = body[index]
        small = only_small_statement(statement)
        if not (isinstance(small, cst.Expr) or (isinstance(small, cst.Assign) and len(small.targets) == 1)) \
                or small.value is not call:
            return f"the call of `{callee_name(call)}` is not a statement of its own (`out = step(...)` or `step(...)`)"
        found.append((index, call, steps[callee_name(call)], statement))
    return found




def _argument_problem(checker: IndexChecker, arg: cst.Arg, step: StepFunction) -> str | None:
    if arg.star or (arg.keyword is not None and arg.keyword.value not in step.params):
        return "the step call unpacks arguments or names an unknown parameter"
    problem = checker.argument(arg.value)
    return f"argument {problem}" if problem else None
