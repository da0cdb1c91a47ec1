"""Batches a step loop draws in Python from TF1's tutorial MNIST loader, and noise it draws from
NumPy's random functions (TFM301).

    for _ in range(STEPS):
        batch_x, batch_y = mnist.train.next_batch(BATCH)
        batch_x = batch_x.reshape((BATCH, 28, 28))  # a drawn batch reshaped: part of its draw
        z = sample_z(BATCH, NOISE)  # returns np.random.uniform(-1., 1., size=[m, n])
        train_step(batch_x, batch_y, z)

`next_batch` moves a cursor and reshuffles with NumPy's global random state at each epoch's end, so
its batches cannot be computed in the graph. They can be drawn ahead, in the same order: a chunk of
steps draws its batches first (the same statements, step by step), then runs its steps in one graph
call fed the stacked batches, then replays the loop's other Python work step by step. That is the
same program when nothing else in the loop touches what the draws touch: the draws read only
invariants, the other work reads neither the dataset nor the drawn batches and draws no random
numbers, and the step (a tf.function) changes no Python value. The loader's `next_batch` always
returns `batch_size` rows (TFM601 writes that loader into the file; TF1's behaved the same), and the
shape of what a NumPy distribution returns depends on its arguments alone, so the draws of a chunk
stack into one array each.

One difference remains, stated in the finding: should drawing a batch raise (an interrupt, a failing
data set), the steps drawn before it in its chunk have not run, where the loop had run them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import libcst as cst

from transforms.speed.fusion.body import bound_count, plain_targets, used_beyond_shape
from transforms.common.syntax import only_small_statement
from transforms.speed.fusion.scan import calls_in, names_read

SPLITS = frozenset({"train", "validation", "test"})
LOADER_OPTIONS = ("fake_data", "shuffle")
STEPS_PER_DRAW = 100  # steps whose batches are drawn, stacked and run per call: 31 MB of MNIST at 100 a batch


@dataclass(frozen=True)
class Draw:
    statement: cst.SimpleStatementLine
    names: tuple[str, ...]  # the names it binds, in order (`_` included)
    dataset: str | None  # the name bound to the loader's result; None for NumPy random numbers
    hoisted: bool = False  # an argument of a step call (`step(x, sample_z(n, dim))`), given a name of its own
    reshapes: str | None = None  # `x = x.reshape(shape)` after the draw binding `x`: the name reshaped
    shaped: bool = True  # whether the batches' shapes are known to be the same (the loader's, NumPy's)

    def label(self) -> str:
        """How a finding names the draw."""
        return self.names[0] if self.names else self.reshapes or cst.Module([]).code_for_node(self.statement).strip()


def batch_draw(statement: cst.BaseStatement, datasets: frozenset[str], sources: frozenset[str]) -> Draw | None:
    """`x, y = data.train.next_batch(n)` (or `batch = ...`) on a name of `datasets` (the loader's
    `fake_data` and `shuffle` may follow `n`), or `x, y = source.next_batch(...)` on a name of
    `sources` (objects of the program's data-set classes, fusion/batch_sources.py), its arguments
    calling nothing; None for anything else."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return None
    call, names = small.value, tuple(plain_targets(small.targets[0].target))
    func = call.func
    owner = func.value if isinstance(func, cst.Attribute) and func.attr.value == "next_batch" else None
    if not names or any(arg.star or calls_in(arg.value) for arg in call.args):
        return None
    if isinstance(owner, cst.Name) and owner.value in sources:
        return Draw(statement, names, owner.value, shaped=False)
    if not (isinstance(owner, cst.Attribute) and owner.attr.value in SPLITS
            and isinstance(owner.value, cst.Name) and owner.value.value in datasets):
        return None
    if not call.args or call.args[0].keyword or not _loader_options(call.args[1:]):
        return None
    return Draw(statement, names, owner.value.value)


def _loader_options(args) -> bool:
    """`fake_data` and `shuffle` after the batch size, positionally or by keyword: they change which
    rows a batch takes, not how many."""
    return len(args) <= 2 and all(arg.keyword is None and not any(a.keyword for a in args[:index])
                                  or arg.keyword is not None and arg.keyword.value in LOADER_OPTIONS
                                  for index, arg in enumerate(args))


def random_draw(statement: cst.BaseStatement, fixed_shape_draw) -> Draw | None:
    """`z = sample_z(BATCH, DIM)`: one name bound to NumPy random numbers whose shape the call's
    arguments fix (`fixed_shape_draw(call)`), so that a chunk's draws stack; or such a call as a
    statement (numbers drawn and thrown away, as TFM201 keeps a value fed to nothing). None for
    anything else."""
    small = only_small_statement(statement)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and fixed_shape_draw(small.value):
        return Draw(statement, (), None)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Call) and fixed_shape_draw(small.value)):
        return None
    return Draw(statement, (small.targets[0].target.value,), None)


def reshaped_draw(statement: cst.BaseStatement, drawn: set[str]) -> Draw | None:
    """`x = x.reshape(shape)` on a name of `drawn` (bound by an earlier draw of the loop: a NumPy
    array), `shape` passed positionally: part of the draw, run with it step by step; the reshaped
    batches stack when `shape` reads only invariants, which `draws_problem` checks. None otherwise."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute)):
        return None
    name, func = small.targets[0].target.value, small.value.func
    if not (name in drawn and func.attr.value == "reshape" and isinstance(func.value, cst.Name)
            and func.value.value == name and small.value.args
            and not any(arg.keyword or arg.star for arg in small.value.args)):
        return None
    return Draw(statement, (), None, reshapes=name)


def hoisted_draws(calls, fixed_shape_draw, batches: dict[str, Draw]) -> tuple[list[cst.Call], list[list[Draw]]]:
    """Arguments of the step calls drawing NumPy random numbers of a fixed shape (`fixed_shape_draw`),
    or reading an item of a batch drawn whole (`batch[0]` of `batch = mnist.train.next_batch(50)`,
    TF's mnist_deep.py; `batches`: the draws binding one name, by that name), each given a name of its
    own (`<parameter>_drawn`) by a draw statement: the calls reading those names instead, and each
    call's draws, in the order Python evaluated its arguments. `calls`: (call, step function) of each
    step call, in body order."""
    rewritten, draws, used = [], [], Counter()
    for call, step in calls:
        args, draws_of_call = [], []
        draws.append(draws_of_call)
        for position, arg in enumerate(call.args):
            slot = step.params.index(arg.keyword.value) if arg.keyword and arg.keyword.value in step.params \
                else None if arg.keyword else position
            source = _drawn_item_source(arg.value, batches)
            if not arg.star and slot is not None and slot < len(step.params) and (
                    source is not None or isinstance(arg.value, cst.Call) and fixed_shape_draw(arg.value)):
                base = f"{step.params[slot]}_drawn"
                used[base] += 1
                name = base if used[base] == 1 else f"{base}_{used[base]}"
                value = cst.Module([]).code_for_node(arg.value)
                draws_of_call.append(Draw(cst.parse_statement(f"{name} = {value}\n"), (name,), None, hoisted=True,
                                          shaped=source is None or source.shaped))
                arg = arg.with_changes(value=cst.Name(name))
            args.append(arg)
        rewritten.append(call.with_changes(args=args))
    return rewritten, draws


def _drawn_item_source(node: cst.BaseExpression, batches: dict[str, Draw]) -> Draw | None:
    """The batch draw `node` reads an item of by a literal index (`batch[0]`), or None."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in batches
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return None
    index = node.slice[0].slice.value
    return batches[node.value.value] if isinstance(index, cst.Integer) else None


def draws_problem(draws: list[Draw], body: list[cst.BaseStatement], work: list[cst.BaseStatement],
                  changing: set[str], random_calls) -> str | None:
    """Why the loop's batches cannot be drawn ahead of its steps, or None. `work`: the Python work
    replayed after the steps; `changing`: the loop variable and the other names the loop body binds;
    `random_calls(statements)`: the first call in them that may draw random numbers, or None."""
    drawn = [name for draw in draws for name in draw.names if name != "_"]
    reshaped = Counter(draw.reshapes for draw in draws if draw.reshapes)
    if any(bound_count(body, name) != (0 if draw.hoisted else 1) + reshaped[name]
           for draw in draws for name in draw.names):
        return "a batch it draws is bound more than once in the loop body"
    for draw in draws:
        changed = sorted((set(names_read(draw.statement.body[0].value)) - {draw.reshapes}) & changing)
        if changed and draw.dataset is None:
            return f"`{draw.label()}` is drawn with `{changed[0]}`, which changes in the loop"
        if changed:
            return f"the batch size `{changed[0]}` changes in the loop"
    read = {name for statement in work for name in names_read(statement)}
    touched = sorted(read & {*drawn, *(draw.dataset for draw in draws if draw.dataset)})
    if touched:
        return f"the loop's other work reads `{touched[0]}`, which the batches drawn ahead would change"
    call = random_calls(work)
    if call is not None:
        return (f"the loop's other work calls `{cst.Module([]).code_for_node(call.func)}`, which may draw "
                "random numbers between the batches")
    arguments = {name for draw in draws for name in _names_drawn_with(draw.statement.body[0].value)}
    touched = used_beyond_shape(work, arguments)
    if touched:
        return f"the loop's other work uses `{touched}`, which the draws read, and might change it between them"
    return None


def _names_drawn_with(value: cst.BaseExpression) -> set[str]:
    """The names a draw reads: its call's arguments (not the function it calls), or an item's batch."""
    if isinstance(value, cst.Call):
        return {name for arg in value.args for name in names_read(arg.value)}
    return set(names_read(value))
