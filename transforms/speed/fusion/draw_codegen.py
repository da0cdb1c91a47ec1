"""The code a step loop drawing its batches with `next_batch` becomes (TFM301, `fusion/draws.py`):
chunks of steps, each drawing its batches first, then running its steps in one call, then replaying
the loop's other Python work step by step over the stacked outputs.

    for train_step_first in range(0, STEPS, 100):
        train_step_stop = min(train_step_first + 100, STEPS)
        batch_x_values, batch_y_values = [], []
        for i in range(train_step_first, train_step_stop):
            batch_x, batch_y = mnist.train.next_batch(BATCH)
            batch_x_values.append(batch_x)
            batch_y_values.append(batch_y)
        train_step_outputs = train_step_loop(train_step_first, train_step_stop,
                                             numpy.stack(batch_x_values), numpy.stack(batch_y_values))
        train_step_rows = tf.unstack(train_step_outputs)
        for i in range(train_step_first, train_step_stop):
            loss = train_step_rows[i - train_step_first]
            total += loss

The multi-step function reads each step's batch as `batch_x_values[step - first]`.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import load_names
from transforms.speed.fusion.codegen import (body_with_rows, chunk_start_name, chunk_stop_name, code,
                                            evaluates_first, reads_rows, rows_binding)
from transforms.speed.fusion.draws import STEPS_PER_DRAW
from transforms.speed.fusion.names import loop_function_name, outputs_name
from transforms.speed.fusion.params import values_name
from transforms.speed.fusion.plan import Plan


def drawn_chunks(plan: Plan, loop: cst.For, np: str) -> cst.For:
    """The loop as chunks of at most STEPS_PER_DRAW steps (see the module's docstring); `np`: how the
    module spells NumPy."""
    first, stop = chunk_start_name(plan), chunk_stop_name(plan)
    start, end = _bounds(loop)
    stacked = _stacked(plan)
    lists = [values_name(name) for name in stacked]
    header = [
        f"{stop} = min({first} + {STEPS_PER_DRAW}, {end})\n",
        f"{', '.join(lists)} = {', '.join('[]' for _ in lists)}\n",
    ]
    appends = [cst.parse_statement(f"{values_name(name)}.append({name})\n") for name in stacked]
    draws = [draw.statement for draw in plan.drawn]
    draw_loop = loop.with_changes(body=loop.body.with_changes(body=[*draws, *appends]), leading_lines=[],
                                  iter=cst.parse_expression(f"range({first}, {stop})"))
    body = [*(cst.parse_statement(line) for line in header), draw_loop, *_steps_and_replay(plan, loop, stop, np)]
    chunks = cst.parse_statement(f"for {first} in range({start}, {end}, {STEPS_PER_DRAW}):\n    pass\n")
    return chunks.with_changes(body=chunks.body.with_changes(body=body))


def drawn_chunks_with_evaluation(plan: Plan, loop: cst.For, updated: cst.For, np: str) -> list[cst.BaseStatement]:
    """A loop drawing its batches that evaluates: the loop keeps its draws and its evaluation; the
    steps drawn so far run, and their Python work is replayed, before each evaluation, after each
    step numbered a multiple of STEPS_PER_DRAW less one (chunks end where `drawn_chunks`' do) and at
    the last step. The evaluation then sees the weights, the outputs and the draws (their random
    state included) as the loop left them.

        train_step_first = 0
        batch_x_values = []
        for i in range(STEPS):
            batch_x, _ = mnist.train.next_batch(BATCH)
            batch_x_values.append(batch_x)
            if i % 1000 == 0 or (i + 1) % 100 == 0 or i == STEPS - 1:
                ...the steps train_step_first..i in one call, their work replayed
                train_step_first = i + 1
                batch_x_values = []
            if i % 1000 == 0:
                print(evaluate(batch_x))

    An evaluation that comes first in the loop (before the draws) stays first; the steps drawn so far
    then run at the end of the step before it, where its test holds for the next step number:
    `if (i + 1) % 100 == 0 or i == STEPS - 1 or (i + 1) % 1000 == 0:`.
    """
    first, variable = chunk_start_name(plan), code(loop.target)
    start, end = _bounds(loop)
    lists = [values_name(name) for name in _stacked(plan)]
    empty = f"{', '.join(lists)} = {', '.join('[]' for _ in lists)}\n"
    evaluation = plan.evaluations[0]
    ahead = evaluates_first(plan, loop)
    test = _read_at_next_step(evaluation.test, variable) if ahead else evaluation.test
    test = f"({code(test)})" if isinstance(test, cst.BooleanOperation) else code(test)
    chunk_ends = f"({variable} + 1) % {STEPS_PER_DRAW} == 0 or {variable} == {end} - 1"
    condition = f"{chunk_ends} or {test}" if ahead else f"{test} or {chunk_ends}"
    flush = cst.parse_statement(f"if {condition}:\n    pass\n")
    steps = [*_steps_and_replay(plan, loop, f"{variable} + 1", np), cst.parse_statement(f"{first} = {variable} + 1\n"),
             cst.parse_statement(empty)]
    flush = flush.with_changes(body=flush.body.with_changes(body=steps))
    draws = [draw.statement for draw in plan.drawn]
    appends = [cst.parse_statement(f"{values_name(name)}.append({name})\n") for name in _stacked(plan)]
    body = list(loop.body.body)
    kept = updated.body.body[body.index(evaluation)]  # nested rewrites kept
    after_draws = any(body.index(draw) < body.index(evaluation) for draw in draws if draw in body)
    if not ahead:
        body = [*draws, *appends, flush, kept]
    else:  # the steps drawn so far ran at the end of the step before (the flush's test reads the next step)
        body = [*draws, *appends, kept, flush] if after_draws else [kept, *draws, *appends, flush]
    chunked = loop.with_changes(body=loop.body.with_changes(body=body), leading_lines=[])
    return [cst.parse_statement(f"{first} = {start}\n"), cst.parse_statement(empty), chunked]


def _read_at_next_step(test: cst.BaseExpression, variable: str) -> cst.BaseExpression:
    """`test` (on the loop variable and invariants) as it reads for the next step number."""
    targets = {id(name) for name in load_names(test) if name.value == variable}

    class NextStep(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return cst.parse_expression(f"({variable} + 1)") if id(original) in targets else updated

    return test.visit(NextStep())


def _bounds(loop: cst.For) -> tuple[str, str]:
    """The first step and the end of `range(<n>)` or `range(<a>, <b>)`: steps are numbered by the
    loop's own values, in the chunks' bounds, the multi-step calls and the replay."""
    args = [code(arg.value) for arg in loop.iter.args]
    return ("0", args[0]) if len(args) == 1 else (args[0], args[1])


def _stacked(plan: Plan) -> list[str]:
    """The drawn names the multi-step function takes stacked (those the steps are fed)."""
    params = {name for name, _ in plan.params}
    return [name for name in plan.drawn_names() if values_name(name) in params]


def _steps_and_replay(plan: Plan, loop: cst.For, stop: str, np: str) -> list[cst.BaseStatement]:
    """The chunk's one multi-step call, then the loop's other Python work over its steps' outputs."""
    first, variable = chunk_start_name(plan), code(loop.target)
    stacks = {values_name(name) for name in plan.drawn_names()}
    args = "".join(f", {np}.stack({param})" if param in stacks else f", {param}" for param, _ in plan.params)
    call = f"{loop_function_name(plan.step.name)}({first}, {stop}{args})"
    rows = reads_rows(plan, loop)
    lines = [cst.parse_statement((f"{outputs_name(plan.step.name)} = {call}" if rows else call) + "\n")]
    if rows:
        lines.append(cst.parse_statement(rows_binding(plan, "tf") + "\n"))
    body = _replayed_body(plan, loop, f"{variable} - {first}")
    if not body:
        return lines
    replay = loop.with_changes(body=loop.body.with_changes(body=body), leading_lines=[],
                               iter=cst.parse_expression(f"range({first}, {stop})"))
    return [*lines, replay]


def _replayed_body(plan: Plan, loop: cst.For, row: str) -> list[cst.BaseStatement]:
    """The loop's Python work replayed after a chunk's steps, their outputs read at row `row`: its
    body without the draws, the evaluation, the bindings run once and the calls whose outputs
    nothing reads; no blank lines before it."""
    drawn = [draw.statement for draw in plan.drawn]
    body = [s for s in body_with_rows(plan, loop, row)
            if s is not None and s not in [*plan.run_once, *drawn, *plan.evaluations]]
    if body:
        body[0] = body[0].with_changes(leading_lines=[line for line in body[0].leading_lines if line.comment is not None])
    return body


def replays_drawn_work(plan: Plan, loop: cst.For) -> bool:
    """Whether a loop drawing its batches has Python work left to replay after each chunk's steps."""
    return bool(_replayed_body(plan, loop, "0"))


def is_drawn_chunks(loop: cst.For, steps) -> bool:
    """Whether `loop` is the chunk loop `drawn_chunks` wrote for one of `steps` (not an epoch loop)."""
    target = loop.target.value if isinstance(loop.target, cst.Name) else ""
    return target.endswith("_first") and target[: -len("_first")] in steps and \
        isinstance(loop.iter, cst.Call) and code(loop.iter).endswith(f", {STEPS_PER_DRAW})")
