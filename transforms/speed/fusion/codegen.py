"""The code a fused step loop becomes (TFM301): a multi-step `tf.function`, one call of it, and the
Python loop over its stacked outputs that keeps the per-step Python work.

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.int32), <the arrays' specs>])
    def train_step_loop(first, stop, x, y):
        '''Runs `train_step` for steps first..stop-1 in one graph; returns each step's `loss`, stacked.'''
        traced = train_step.get_concrete_function()
        loss_per_step = tf.TensorArray(traced.output_dtypes, size=stop - first, element_shape=traced.output_shapes)
        for step in tf.range(first, stop):
            loss = train_step(x, y)
            loss_per_step = loss_per_step.write(step - first, loss)
        return loss_per_step.stack()

    train_step_outputs = train_step_loop(0, STEPS, x, y)
    train_step_rows = tf.unstack(train_step_outputs)
    for step in range(STEPS):
        loss_value = train_step_rows[step]
        ...

A step function returning names (`return loss`, `return loss, accuracy`) gives the graph loop's
values and stacks those names (`per_step_names`); other outputs (`return [None, loss]`, a dict)
are held as `step_outputs` and `stacked_<key>`.

The rows are unstacked once (one op) rather than indexed per step (one op each, far slower).
"""
from __future__ import annotations

import re

import libcst as cst

from transforms.speed.fusion.names import loop_function_name, outputs_name, rows_name
from transforms.speed.fusion.params import values_name
from transforms.speed.fusion.body import assigned_names, assigned_pairs, evaluation_first, replayed_work
from transforms.speed.fusion.scan import names_read
from transforms.speed.fusion.plan import Plan

GRAPH_LOCALS = frozenset({"first", "stop", "index", "traced", "step_outputs",
                          "evaluates", "evaluated", "evaluation", "evaluations", "evaluation_outputs",
                          "stacked_evaluations"})
REPLAY_INDEX = "step_index"


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def leaves(plan: Plan, step=None, base: str = "stacked") -> list[tuple[str, str]]:
    """(key expression, TensorArray name) of each non-None output of `step` (the plan's first), in order."""
    outputs = (step or plan.step).outputs
    kind, keys = outputs.kind, outputs.keys
    if kind == "none":
        return []
    if kind == "single":
        return [("", base)]
    if kind == "dict":
        return [(f"[{key}]", f"{base}_" + (re.sub(r"\W", "_", key[1:-1]) or str(n))) for n, key in enumerate(keys)]
    return [(f"[{key}]", f"{base}_{key}") for key in keys]


def structure(plan: Plan, leaf, step=None, base: str = "stacked") -> str:
    """The step function's output structure with each non-None leaf written by `leaf(key, name)`."""
    step = step or plan.step
    outputs, pairs = step.outputs, leaves(plan, step, base)
    if outputs.kind == "none":
        return "None"
    if outputs.kind == "single":
        return leaf(*pairs[0])
    if outputs.kind == "dict":
        items = {key: f"{key}: {leaf(f'[{key}]', name)}" for (_, name), key in zip(pairs, outputs.keys)}
        items.update({key: f"{key}: None" for key in outputs.none_keys})
        return "{" + ", ".join(items[key] for key in sorted(items, key=_dict_order(outputs))) + "}"
    by_position = {int(key[1:-1]): leaf(key, name) for key, name in pairs}
    elements = [by_position.get(i, "None") for i in range(outputs.length)]
    text = ", ".join(elements) + ("," if outputs.kind == "tuple" and len(elements) == 1 else "")
    return f"[{text}]" if outputs.kind == "list" else f"({text})"


def _dict_order(outputs):
    order = list(outputs.keys) + list(outputs.none_keys)
    return order.index


def step_parts(plan: Plan) -> list[tuple[int | None, object, cst.Call, int, str, str]]:
    """(position among the outputs or None for a lone step, step function, call, statement position,
    TensorArray base name, structured-outputs name) of each step call: a loop calling several step
    functions returns one output structure per step function, in call order."""
    calls = plan.step_calls()
    if len(calls) == 1:
        return [(None, plan.step, plan.call, plan.call_index, "stacked", "traced")]
    return [(j, step, call, index, "stacked" if j == 0 else f"stacked{j + 1}", "traced" if j == 0 else f"traced_{j + 1}")
            for j, (step, call, index) in enumerate(calls)]


def has_outputs(plan: Plan) -> bool:
    return any(step.outputs.kind != "none" for step, _, _ in plan.step_calls())


def all_structure(plan: Plan, leaf) -> str:
    """Every step function's output structure (a tuple of them for several), leaves by `leaf(j, key, name)`."""
    parts = [structure(plan, lambda key, ta, j=j: leaf(j, key, ta), step, base) for j, step, _, _, base, _ in step_parts(plan)]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def output_at(j: int | None) -> str:
    """The index of step j's outputs among several step functions' ("" for a lone step)."""
    return "" if j is None else f"[{j}]"


def fused_function(plan: Plan, loop: cst.For, tf: str) -> str:
    """Source of the multi-step function."""
    step, name = plan.step.name, loop_function_name(plan.step.name)
    ev = plan.in_graph
    every = [*plan.params, *(ev.params if ev else ())]
    specs = "".join(f"    {code(spec)},\n" for _, spec in every)
    params = "".join(f", {param}" for param, _ in every)
    if ev:
        specs += f"    {tf}.TensorSpec([None], {tf}.bool),\n"
        params += ", evaluates"
    simple = len(loop.iter.args) == 1 and loop.target.value != "_"
    counter = loop.target.value if simple else "index"
    scalar = f"    {tf}.TensorSpec([], {tf}.int32),\n"
    lines = [f"@{tf}.function(input_signature=[\n{scalar}{scalar}{specs}])",
             f"def {name}(first, stop{params}):",
             f'    """Runs `{step}` for steps first..stop-1 in one graph; outputs stacked, one row per step."""']
    if plan.more:
        called = ", then ".join(f"`{part.name}`" for part, _, _ in plan.step_calls())
        lines[-1] = (f'    """Runs {called} for steps first..stop-1 in one graph; outputs stacked, one row per step, '
                     'one structure per step function."""')
    named = per_step_names(plan, _graph_loop_names(plan, every, counter))
    if named:
        lines[-1] = (f'    """Runs `{step}` for steps first..stop-1 in one graph; returns each step\'s '
                     f'{", ".join(f"`{name}`" for name in named)}, stacked."""')
    for _, part, _, _, base, traced in step_parts(plan):
        pairs = _named(leaves(plan, part, base), named)
        if pairs:
            lines.append(f"    {traced} = {part.name}.get_concrete_function()")
            lines += [f"    {ta} = {tf}.TensorArray({traced}.output_dtypes{key}, size=stop - first, "
                      f"element_shape={traced}.output_shapes{key})" for key, ta in pairs]
    if ev:
        lines[2] = lines[2][:-4] + (f"; `{ev.step.name}` too at the steps where `evaluates` holds, its outputs "
                                    'stacked for those steps only"""')
        if ev.step.outputs.kind != "none":
            lines.append(f"    evaluation = {tf}.nest.flatten({ev.step.name}.get_concrete_function().structured_outputs)")
            lines.append(f"    evaluated = [{tf}.TensorArray(e.dtype, size=0, dynamic_size=True, element_shape=e.shape) "
                         "for e in evaluation if e is not None]")
            lines.append(f"    evaluations = {tf}.constant(0)")
    lines.append(f"    for {counter} in {tf}.range(first, stop):")
    if plan.uses_loop_var and not simple:
        start, stride = _start_and_stride(loop.iter)
        offset = "" if start == "0" else f"{start} + "
        lines.append(f"        {loop.target.value} = {offset}index{stride}")
    lines += [f"        {name} = {values_name(name)}[{counter}]" for name, _ in plan.scheduled]
    lines += drawn_batch_lines(plan, counter)
    lines += ["        " + graph_code(plan, statement, tf).strip() for statement in plan.copied]
    if ev and ev.first:
        lines += _evaluation_lines(ev, counter, tf)
    for _, part, call, _, base, _ in step_parts(plan):
        pairs = _named(leaves(plan, part, base), named)
        if pairs and named:
            lines.append(f"        {', '.join(named)} = {graph_code(plan, call, tf)}")
            lines += [f"        {ta} = {ta}.write({counter} - first, {value})" for (_, ta), value in zip(pairs, named)]
        elif pairs:
            lines.append(f"        step_outputs = {graph_code(plan, call, tf)}")
            lines += [f"        {ta} = {ta}.write({counter} - first, step_outputs{key})" for key, ta in pairs]
        else:
            lines.append(f"        {graph_code(plan, call, tf)}")
    if ev and not ev.first:
        lines += _evaluation_lines(ev, counter, tf)
    stacked = _stacked_structure(plan, named)
    if ev:
        steps = stacked if has_outputs(plan) else "None"
        if ev.step.outputs.kind == "none":
            lines.append(f"    return ({steps}, None)")
        else:
            lines.append("    stacked_evaluations = iter([rows.stack() for rows in evaluated])")
            lines.append(f"    return ({steps}, {tf}.nest.pack_sequence_as({ev.step.name}.get_concrete_function()"
                         ".structured_outputs, [None if e is None else next(stacked_evaluations) for e in evaluation]))")
    elif has_outputs(plan):
        lines.append(f"    return {stacked}")
    return "\n".join(lines) + "\n"


def drawn_batch_lines(plan: Plan, counter: str) -> list[str]:
    """The multi-step function's lines binding each step's drawn batches from their stacks."""
    params = {name for name, _ in plan.params}
    return [f"        {name} = {values_name(name)}[{counter} - first]"
            for name in plan.drawn_names() if values_name(name) in params]


def per_step_names(plan: Plan, taken: set[str]) -> tuple[str, ...] | None:
    """The names a lone step function returns (`return loss, accuracy`), to name its values in the
    graph loop and their stacks `loss_per_step`...; None when they are not plain, distinct names
    free there (the loop then uses `step_outputs` and `stacked_<key>`)."""
    outputs = plan.step.outputs
    if plan.more or outputs.kind not in ("single", "list", "tuple") or outputs.none_keys:
        return None
    names = outputs.names
    if not names or "" in names or len(set(names)) != len(names):
        return None
    if ({*names, *(per_step(name) for name in names)}) & taken:
        return None
    return names


def per_step(name: str) -> str:
    return f"{name}_per_step"


def _graph_loop_names(plan: Plan, params, counter: str) -> set[str]:
    """Every name the multi-step function's body binds or reads besides the stacks of outputs."""
    statements = [call for _, call, _ in plan.step_calls()] + list(plan.copied)
    if plan.in_graph:
        statements.append(plan.in_graph.call)
    return {*GRAPH_LOCALS, counter, *(name for name, _ in params), *(name for name, _ in plan.scheduled),
            *plan.drawn_names(),
            *(name for s in statements for name in names_read(s)),
            *(name for s in plan.copied for name in assigned_names(s))}


def _named(pairs: list[tuple[str, str]], named: tuple[str, ...] | None) -> list[tuple[str, str]]:
    """(key, TensorArray name) pairs, the stacks named after the values they hold when they can be."""
    return [(key, per_step(name)) for (key, _), name in zip(pairs, named)] if named else pairs


def _stacked_structure(plan: Plan, named: tuple[str, ...] | None) -> str:
    """What the multi-step function returns: each output's stack, in the step's output structure."""
    renamed = {ta: name for (_, ta), (_, name) in zip(leaves(plan), _named(leaves(plan), named))}
    return all_structure(plan, lambda j, key, ta: renamed.get(ta, ta) + ".stack()")


def _evaluation_lines(ev, counter: str, tf: str) -> list[str]:
    """The in-graph evaluation (`fusion/evaluation.py`), at the steps where `evaluated` holds."""
    args = ", ".join((f"{keyword}=" if keyword else "") +
                     (f"{tf}.cast({counter}, {ev.step.name}.input_signature[{where}].dtype)" if name == counter else name)
                     for keyword, name, where in ev.arguments)
    lines = [f"        if evaluates[{counter}]:"]
    if ev.step.outputs.kind == "none":
        return lines + [f"            {ev.step.name}({args})"]
    lines.append(f"            evaluation_outputs = [e for e in {tf}.nest.flatten({ev.step.name}({args})) if e is not None]")
    lines.append("            evaluated = [rows.write(evaluations, e) for rows, e in zip(evaluated, evaluation_outputs)]")
    return lines + ["            evaluations += 1"]


def graph_code(plan: Plan, node: cst.CSTNode, tf: str) -> str:
    """`node` as the graph loop runs it: NumPy's integer-array indexing of a batch, `X[order[a:b]]`
    (or `X[batch]` after `batch = order[a:b]`), written `tf.gather(X, ...)` (tensors index only by slices)."""
    if not plan.index_arrays:
        return code(node)
    indices = set(plan.index_arrays)
    names = {name for s in plan.copied for name, value in assigned_pairs(s)
             if isinstance(value, cst.Subscript) and _slices_of(value, indices)}

    class Gathers(cst.CSTTransformer):
        def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
            if len(updated.slice) != 1 or not isinstance(updated.slice[0].slice, cst.Index):
                return updated
            index = updated.slice[0].slice.value
            if not ((isinstance(index, cst.Name) and index.value in names) or _slices_of(index, indices)):
                return updated
            return cst.parse_expression(f"{tf}.gather({code(updated.value)}, {code(index)})")

    return code(node.visit(Gathers()))


def _slices_of(node: cst.BaseExpression, arrays: set[str]) -> bool:
    return isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in arrays \
        and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)


def _start_and_stride(iterable: cst.Call) -> tuple[str, str]:
    args = [code(a.value) for a in iterable.args]
    if len(args) < 3:
        return args[0], ""
    simple = isinstance(iterable.args[2].value, (cst.Name, cst.Integer, cst.Attribute))
    return args[0], f" * {args[2]}" if simple else f" * ({args[2]})"


def step_count(loop: cst.For) -> str:
    args = loop.iter.args
    return code(args[0].value) if len(args) == 1 else f"len({code(loop.iter)})"


def steps_expression(loop: cst.For) -> str:
    return "0, " + step_count(loop)


def schedules(plan: Plan, loop: cst.For) -> list[str]:
    """Per-step Python numbers computed before the steps, as the loop would have computed them."""
    return [f"{values_name(name)} = [{code(value)} for {loop.target.value} in {code(loop.iter)}]"
            for name, value in plan.scheduled]


def fused_call(plan: Plan, loop: cst.For) -> str:
    args = "".join(f", {param}" for param, _ in plan.params)
    call = f"{loop_function_name(plan.step.name)}({steps_expression(loop)}{args})"
    return call if not has_outputs(plan) else f"{outputs_name(plan.step.name)} = {call}"


def reads_rows(plan: Plan, loop: cst.For) -> bool:
    """Whether the replay loop reads the step's outputs (the call's value is assigned)."""
    return any(step.outputs.kind != "none" and not isinstance(loop.body.body[index].body[0], cst.Expr)
               for step, _, index in plan.step_calls())


def rows_binding(plan: Plan, tf: str) -> str:
    """The stacked outputs unstacked into one tensor per step (structure kept, None stays None)."""
    outputs = outputs_name(plan.step.name)
    return f"{rows_name(plan.step.name)} = " + all_structure(
        plan, lambda j, key, ta: f"{tf}.unstack({outputs}{output_at(j)}{key})")


def body_with_rows(plan: Plan, loop: cst.For, row: str) -> list[cst.BaseStatement | None]:
    """The loop's body with each step call replaced by row `row` of its stacked outputs; None in
    place of a call made as a statement of its own, whose outputs nothing reads."""
    body: list[cst.BaseStatement | None] = list(loop.body.body)
    for j, part, _, index, base, _ in step_parts(plan):
        statement = body[index]
        if isinstance(statement.body[0], cst.Expr):
            body[index] = None
            continue
        value = structure(plan, lambda key, ta: f"{rows_name(plan.step.name)}{output_at(j)}{key}[{row}]", part, base)
        body[index] = statement.with_changes(body=[statement.body[0].with_changes(value=cst.parse_expression(value))])
    return body


def replay_loop(plan: Plan, loop: cst.For, unused: frozenset[str] = frozenset()) -> cst.For | None:
    """The original loop with the step call replaced by its stacked outputs' row (None if empty).
    Index statements the graph loop computed whose names are in `unused` (read nowhere outside the
    loop) are left out when nothing left in the loop reads them."""
    simple = len(loop.iter.args) == 1 and loop.target.value != "_"
    body = body_with_rows(plan, loop, loop.target.value if simple else REPLAY_INDEX)
    body = [s for s in body if s is not None and s not in plan.run_once]  # they ran once, before the steps
    while True:
        idle = [s for s in body if s in plan.copied and set(assigned_names(s)) <= unused
                and not any(set(assigned_names(s)) & set(names_read(other)) for other in body if other is not s)]
        if not idle:
            break
        body = [s for s in body if s not in idle]
    if not body:
        return None
    replay = loop.with_changes(body=loop.body.with_changes(body=body), leading_lines=[])
    if loop.target.value == "_" and len(loop.iter.args) == 1:  # `for _ in range(n)`: name the step
        replay = replay.with_changes(target=cst.Name(REPLAY_INDEX))
    elif not simple:
        header = cst.parse_expression(f"({REPLAY_INDEX}, {loop.target.value})")
        replay = replay.with_changes(target=header.with_changes(lpar=[], rpar=[]),
                                     iter=cst.parse_expression(f"enumerate({code(loop.iter)})"))
    return replay


def chunk_start_name(plan: Plan) -> str:
    """The first step of the next chunk, in a loop run in chunks between evaluations."""
    return plan.step.name + "_first"


def chunk_stop_name(plan: Plan) -> str:
    """The end of a chunk whose replay rebinds the loop variable before an evaluation that comes
    first in the loop body (the evaluation then sees the loop variable's value again)."""
    return plan.step.name + "_stop"


def evaluates_first(plan: Plan, loop: cst.For) -> bool:
    """Whether the loop's evaluation comes before its step call (see `evaluation_first`), after the
    batches a loop draws ahead, if any (TF's mnist_deep.py evaluates on the batch it just drew)."""
    return evaluation_first(list(loop.body.body), plan.call_index,
                            [*plan.copied, *plan.run_once, *(draw.statement for draw in plan.drawn)],
                            plan.evaluations[0])


def chunked_loop(plan: Plan, loop: cst.For, updated: cst.For) -> list[cst.BaseStatement]:
    """The loop with its steps run in chunks: at each step where the evaluation runs, the steps up
    to it first (one multi-step call), then the evaluation, seeing what it saw; the rest after.

        train_step_first = 0
        for i in range(30):
            if i % 10 == 0:
                train_step_loop(train_step_first, i + 1, x, y)
                train_step_first = i + 1
                print(compute_loss(x, y).numpy())
        train_step_loop(train_step_first, 30, x, y)

    An evaluation before the step call runs before its own step: its chunk stops there
    (`train_step_loop(train_step_first, i, x, y)`), and nothing binds the step's outputs for it.
    """
    if replays_work(plan, loop):
        return chunked_replay(plan, loop, updated)
    simple = len(loop.iter.args) == 1 and loop.target.value != "_"
    row, start = (loop.target.value if simple else REPLAY_INDEX), chunk_start_name(plan)
    args = "".join(f", {param}" for param, _ in plan.params)
    name = loop_function_name(plan.step.name)
    statement = loop.body.body[plan.call_index]
    first = evaluates_first(plan, loop)
    stop = row if first else f"{row} + 1"
    chunk = f"{name}({start}, {stop}{args})"
    bare = first or isinstance(statement.body[0], cst.Expr)
    lines = [chunk if bare else f"{outputs_name(plan.step.name)} = {chunk}", f"{start} = {stop}"]
    if not bare:  # the evaluation's step's own outputs: the last row
        lines.append(f"{code(statement.body[0].targets[0].target)} = {_last_row(plan)}")
    evaluation = updated.body.body[list(loop.body.body).index(plan.evaluations[0])]  # nested rewrites kept
    recomputed = _index_values_read(plan, evaluation)
    evaluation = _with_chunk(evaluation, [cst.parse_statement(line + "\n") for line in lines] + recomputed)
    chunked = updated.with_changes(body=updated.body.with_changes(body=[evaluation]), leading_lines=[])
    if not simple:
        header = cst.parse_expression(f"({REPLAY_INDEX}, {loop.target.value})")
        chunked = chunked.with_changes(target=header.with_changes(lpar=[], rpar=[]),
                                       iter=cst.parse_expression(f"enumerate({code(loop.iter)})"))
    last = f"{name}({start}, {step_count(loop)}{args})"
    return [cst.parse_statement(f"{start} = 0\n"), chunked, *_last_chunk(plan, statement, last, start, step_count(loop))]


def _last_chunk(plan: Plan, statement: cst.SimpleStatementLine, call: str, start: str, count: str
                ) -> list[cst.BaseStatement]:
    """The steps after the last evaluation; when code after the loop reads the step's outputs, bound
    from the last of them (if any ran: else the last evaluation bound them, or the loop ran no step)."""
    if not plan.outputs_read_after or isinstance(statement.body[0], cst.Expr):
        return [cst.parse_statement(call + "\n")]
    target = code(statement.body[0].targets[0].target)
    return [cst.parse_statement(f"{outputs_name(plan.step.name)} = {call}\n"),
            cst.parse_statement(f"if {start} < {count}:\n    {target} = {_last_row(plan)}\n")]


def _last_row(plan: Plan) -> str:
    """The step's outputs at the last step of the chunk just run (its multi-step call's `<outputs>`)."""
    if plan.step.outputs.kind == "none":
        return "None"
    return structure(plan, lambda key, ta: f"{outputs_name(plan.step.name)}{key}[-1]")


def _index_values_read(plan: Plan, evaluation: cst.If) -> list[cst.BaseStatement]:
    """The index statements (`start = ...`, `batch_x = x[start:...]`) the evaluation needs, run again in
    Python for its step: in chunks, only the graph loop computed them. (Plain functions of the loop
    variable and invariants: the same values the original loop computed at that step.)"""
    read = set(names_read(evaluation))
    if not read & {name for statement in plan.copied for name in assigned_names(statement)}:
        return []
    return [statement.with_changes(leading_lines=[]) for statement in plan.copied]


def _with_chunk(evaluation: cst.If, chunk: list[cst.BaseStatement]) -> cst.If:
    """The evaluation running `chunk` first; comment lines opening its body stay right after the `if`."""
    body = list(evaluation.body.body)
    if isinstance(body[0], (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and body[0].leading_lines:
        chunk = [chunk[0].with_changes(leading_lines=body[0].leading_lines), *chunk[1:]]
        body[0] = body[0].with_changes(leading_lines=[])
    return evaluation.with_changes(body=evaluation.body.with_changes(body=chunk + body))


def replays_work(plan: Plan, loop: cst.For) -> bool:
    """Whether a loop run in chunks has Python work to replay step by step (see chunked_replay)."""
    body = list(loop.body.body)
    return bool(replayed_work(body, plan.call_index, [*plan.copied, *plan.run_once], plan.evaluations))


def chunked_replay(plan: Plan, loop: cst.For, updated: cst.For) -> list[cst.BaseStatement]:
    """Chunks between evaluations, each followed by the loop's other Python work replayed over its
    steps' outputs (the loop variable taking each step's value), then the evaluation:

        train_step_first = 0
        for i in range(30):
            if i % 10 == 0:
                train_step_outputs = train_step_loop(train_step_first, i + 1, x, y)
                train_step_rows = [None, tf.unstack(train_step_outputs[1])]
                for i in range(train_step_first, i + 1):
                    _, loss = [None, train_step_rows[1][i - train_step_first]]
                    losses.append(float(loss))
                train_step_first = i + 1
                print(compute_loss(x, y).numpy())
        ...the same for the steps after the last evaluation

    An evaluation before the step call runs before its own step: the chunk stops there, and since
    the replay rebinds the loop variable, its value comes back from the chunk's end:

            if i % 10 == 0:
                train_step_stop = i
                train_step_outputs = train_step_loop(train_step_first, train_step_stop, x, y)
                ...replay over range(train_step_first, train_step_stop)
                i = train_step_first = train_step_stop
                print(compute_loss(x, y).numpy())
    """
    variable, start = loop.target.value, chunk_start_name(plan)
    evaluation = updated.body.body[list(loop.body.body).index(plan.evaluations[0])]  # nested rewrites kept
    if evaluates_first(plan, loop):
        stop = chunk_stop_name(plan)
        chunk = [cst.parse_statement(f"{stop} = {variable}\n"), *_chunk_with_replay(plan, loop, stop),
                 cst.parse_statement(f"{variable} = {start} = {stop}\n")]
    else:
        chunk = _chunk_with_replay(plan, loop, f"{variable} + 1") + [
            cst.parse_statement(f"{start} = {variable} + 1\n")]
    evaluation = _with_chunk(evaluation, chunk)
    chunked = updated.with_changes(body=updated.body.with_changes(body=[evaluation]), leading_lines=[])
    return [cst.parse_statement(f"{start} = 0\n"), chunked, *_chunk_with_replay(plan, loop, step_count(loop))]


def _chunk_with_replay(plan: Plan, loop: cst.For, stop: str) -> list[cst.BaseStatement]:
    start, variable = chunk_start_name(plan), loop.target.value
    args = "".join(f", {param}" for param, _ in plan.params)
    call = f"{loop_function_name(plan.step.name)}({start}, {stop}{args})"
    lines = [cst.parse_statement((call if plan.step.outputs.kind == "none" else
                                  f"{outputs_name(plan.step.name)} = {call}") + "\n")]
    if reads_rows(plan, loop):
        lines.append(cst.parse_statement(rows_binding(plan, "tf") + "\n"))
    body = body_with_rows(plan, loop, f"{variable} - {start}")
    body = [s for s in body if s is not None and s not in plan.run_once and s not in plan.evaluations]
    replay = loop.with_changes(body=loop.body.with_changes(body=body), leading_lines=[],
                               iter=cst.parse_expression(f"range({start}, {stop})"))
    return lines + [replay]


def in_graph_loop(plan: Plan, loop: cst.For, unused: frozenset[str], tf: str) -> list[cst.BaseStatement]:
    """The loop with its evaluation run in the graph loop (`fusion/evaluation.py`): the steps where it
    runs told first, one call of the multi-step function, then the Python loop replaying the
    per-step work over the stacked rows, the evaluation's over its own rows, counted as they come."""
    from transforms.speed.fusion.evaluation import flags_name, index_name
    ev, evaluation = plan.in_graph, plan.evaluations[0]
    step, outputs = plan.step.name, outputs_name(plan.step.name)
    flags, counter = flags_name(step), index_name(ev.step.name)
    args = "".join(f", {param}" for param, _ in [*plan.params, *ev.params])
    lines = [*schedules(plan, loop)]
    after_once = [f"{flags} = [{code(evaluation.test)} for {code(loop.target)} in {code(loop.iter)}]",
                  f"{outputs} = {loop_function_name(step)}({steps_expression(loop)}{args}, {flags})"]
    if reads_rows(plan, loop):
        after_once.append(f"{rows_name(step)} = " + all_structure(
            plan, lambda j, key, ta: f"{tf}.unstack({outputs}[0]{output_at(j)}{key})"))
    holder = ev.statement
    bare = isinstance(holder.body[0], cst.Expr) and holder.body[0].value is ev.call
    if ev.step.outputs.kind != "none" and not bare:  # one tensor per evaluation, per output (None stays None)
        after_once.append(f"{rows_name(ev.step.name)} = [None if rows is None else {tf}.unstack(rows) "
                          f"for rows in {tf}.nest.flatten({outputs}[1])]")
    after_once.append(f"{counter} = 0")
    replay = replay_loop(plan, loop, unused)
    row = (f"{tf}.nest.pack_sequence_as({outputs}[1], [None if rows is None else rows[{counter}] "
           f"for rows in {rows_name(ev.step.name)}])") if ev.step.outputs.kind != "none" else "None"
    count = cst.parse_statement(f"{counter} += 1\n")
    body = []
    for statement in evaluation.body.body:
        if statement is holder:
            body += [count] if bare else [statement.deep_replace(ev.call, cst.parse_expression(row)), count]
        else:
            body.append(statement)
    if bare and body[0] is count and evaluation.body.body[0].leading_lines:
        body[0] = count.with_changes(leading_lines=evaluation.body.body[0].leading_lines)
    replayed = evaluation.with_changes(body=evaluation.body.with_changes(body=body))
    replay = replay.with_changes(body=replay.body.with_changes(
        body=[replayed if s is evaluation else s for s in replay.body.body]))
    return [*(cst.parse_statement(line + "\n") for line in lines), *plan.run_once,
            *(cst.parse_statement(line + "\n") for line in after_once), replay]
