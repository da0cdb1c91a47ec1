"""The loop body around a fused step call (TFM301): which statements the graph loop repeats
(index arithmetic feeding the call), which per-step numbers are computed in Python first (a
learning-rate schedule), and whether the rest is plain Python on the step's outputs."""
from __future__ import annotations

from collections import Counter

import libcst as cst

from transforms.speed.fusion.args import IndexChecker
from transforms.speed.fusion.scan import calls_in, names_bound, names_read
from transforms.common.syntax import only_small_statement, scan


TWICE_PER_STEP = "loop body calls tf.functions twice per step (e.g. an evaluation reading the weights mid-training)"

def scheduled_values(checker: IndexChecker, copied, calls) -> dict[str, cst.BaseExpression]:
    """Copied values that are not index arithmetic but plain Python numbers of the step (a learning
    rate schedule), fed to a step (`calls`: the step calls) whole and read by nothing else the graph repeats."""
    fed = {a.value.value for call in calls for a in call.args if isinstance(a.value, cst.Name)}
    found = {}
    for statement in copied:
        pairs = assigned_pairs(statement)
        if len(pairs) != 1 or isinstance(statement.body[0].targets[0].target, cst.Tuple):
            continue
        name, value = pairs[0]
        others = [s.body[0].value for s in copied if s is not statement]
        if name in fed and not any(name in names_read(o) for o in others) and \
                IndexChecker(checker.loop_var, {}, checker.forbidden).integer(value) is not None and \
                checker.schedule(value):
            found[name] = value
    return found


def invariant_bindings(before, loop_var: str, body, state: set[str]) -> list[cst.SimpleStatementLine]:
    """Statements before the call that bind the same values at every step: `a, b = pairs`, with
    `pairs` neither bound nor otherwise read by the loop (nor TensorFlow state), each name bound once.
    They run once, before the steps, instead (their names are then invariants the step is fed)."""
    found, reads = [], Counter(name for statement in body for name in names_read(statement))
    for statement in before:
        small = only_small_statement(statement)
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name)):
            continue
        source, targets = small.value.value, plain_targets(small.targets[0].target)
        if targets and source != loop_var and source not in state and bound_count(body, source) == 0 \
                and reads[source] == 1 and loop_var not in targets \
                and all(bound_count(body, name) == 1 for name in targets):
            found.append(statement)
    return found


def plain_targets(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds when it is a name or a flat tuple/list of names."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and target.elements and \
            all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
        return [e.value.value for e in target.elements]
    return []


def assigned_pairs(statement) -> list[tuple[str, cst.BaseExpression]]:
    """(name, value) bound by a single-name assignment (`start = ...`), or by a tuple assignment whose
    targets are distinct names and whose value is a tuple of as many values, none reading those names
    (`batch_x, batch_y = x[a:b], y[a:b]`: element-wise, the same as one assignment each); else []."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return []
    target, value = small.targets[0].target, small.value
    if isinstance(target, cst.Name):
        return [(target.value, value)]
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return []
    if not target.elements or len(target.elements) != len(value.elements) or not all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements) or \
            not all(isinstance(e, cst.Element) for e in value.elements):
        return []
    names = [e.value.value for e in target.elements]
    if len(set(names)) != len(names) or any(set(names_read(e.value)) & set(names) for e in value.elements):
        return []
    return [(name, e.value) for name, e in zip(names, value.elements)]


def assigned_names(statement) -> list[str]:
    return [name for name, _ in assigned_pairs(statement)]


def copied_statements(before, calls) -> list[cst.SimpleStatementLine]:
    """Assignments before the first step call (of one name, or element-wise of a tuple of names)
    binding names the step calls read, directly or not."""
    needed = set().union(*(names_read(call) for call in calls))
    chosen = []
    for statement in reversed(before):
        pairs = assigned_pairs(statement)
        if pairs and any(name in needed for name, _ in pairs):
            chosen.append(statement)
            needed |= set(names_read(statement.body[0].value))
    return chosen[::-1]


def named_problem(name: str, problem: str | None) -> str | None:
    return problem and f"`{name}`, fed to the step, {problem}"


def bound_count(body, name: str) -> int:
    return sum(name in names_bound([statement]) for statement in body)


def plain_python_problem(statements, state: set[str], call_problem, logs=lambda call: False) -> str | None:
    """Why the statements around the step call are not plain Python on its outputs, or None (the
    index statements copied into the graph are checked as such, by `IndexChecker`). The names of a
    logging function (`tf.logging.info`: `logs(call)`) are no state read; its arguments are checked."""
    for statement in statements:
        touched = sorted(set(names_read(statement, skip=logs)) & state)
        if touched:
            return f"loop body also reads `{touched[0]}` (TensorFlow state or another function) mid-loop"
        for call in calls_in(statement):
            problem = call_problem(call)
            if problem:
                return problem
    return None


# What Python work may do with an array the step is fed: it runs after the steps now, so it must not
# be able to change the array in place (`a[0] = 1`, `np.random.shuffle(a)`, `a.sort()`).
HARMLESS_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size"})


def fed_arrays_problem(statements, fed: set[str]) -> str | None:
    """Why the statements around the step call might change what it is fed, or None: they may use a
    fed name only as `len(name)` or `name.shape` (`dtype`, `ndim`, `size`)."""
    touched = used_beyond_shape(statements, fed)
    return touched and f"loop body also uses `{touched}`, which the step is fed, and might change it mid-loop"


def used_beyond_shape(statements, names: set[str]) -> str | None:
    """The first of `names` the statements use other than as `len(name)` or `name.shape` (`dtype`,
    `ndim`, `size`): a use that might change it in place."""
    touched: list[str] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> bool:
            return not (isinstance(call.func, cst.Name) and call.func.value == "len" and len(call.args) == 1
                        and isinstance(call.args[0].value, cst.Name) and not call.args[0].star)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            if not (isinstance(attribute.value, cst.Name) and attribute.attr.value in HARMLESS_ATTRIBUTES):
                attribute.value.visit(self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            if name.value in names:
                touched.append(name.value)

    for statement in statements:
        scan(statement, Finder())
    return touched[0] if touched else None


def evaluation_blocks(body, state: set[str], call_problem, logs=lambda call: False) -> list[cst.If]:
    """`if` statements (without else) of the loop body that do more than plain Python: an evaluation
    that calls other TensorFlow functions or reads state (logging the step's outputs does not)."""
    return [s for s in body if isinstance(s, cst.If) and s.orelse is None
            and plain_python_problem([s], state, call_problem, logs) is not None]


def replayed_work(body, index: int, copied, evaluations) -> list:
    """The loop body's plain Python work besides the step call, its index statements and its
    evaluation: run in chunks, it is replayed step by step after each chunk, before the evaluation."""
    return [s for s in body if s is not body[index] and s not in evaluations and s not in copied]


def evaluation_first(body, index: int, copied, evaluation: cst.If) -> bool:
    """Whether the evaluation runs before the step call, as the first thing each step does (after
    the index statements the graph computes): it then sees the model before that step."""
    position = body.index(evaluation)
    return position < index and all(s in copied for s in body[:position])


def evaluation_problem(body, index: int, copied, evaluations, checker: IndexChecker,
                       opaque: set[str]) -> str | None:
    """Why the steps cannot run in chunks up to each step where the evaluation runs, or None.

    The evaluation must be one `if` on a test of the loop variable and invariants alone, so that it
    can be told before the steps run (`opaque` names, which may hold TensorFlow objects, are not
    invariants). It comes after the step call, the loop's other Python work before it (replayed step
    by step after each chunk, then the evaluation runs, as in the original order), or first in the
    body, before the step call (the chunk then stops before the evaluation's own step). The index
    values exist only in the graph: an evaluation reading them gets them recomputed in Python for its
    step (they are plain functions of the loop variable and invariants), unless Python work is
    replayed step by step."""
    if len(evaluations) != 1:
        return TWICE_PER_STEP
    evaluation = evaluations[0]
    first = evaluation_first(body, index, copied, evaluation)
    if body.index(evaluation) < index and not first:
        return "loop body does Python work before an evaluation that precedes the step call"
    if not first and replayed_work(body, index, copied, evaluations) and body[-1] is not evaluation:
        return "loop body does Python work after its evaluation"
    if not checker.condition(evaluation.test) or set(names_read(evaluation.test)) & opaque:
        return "the evaluation runs on a test of more than the loop variable and invariants"
    index_names = sorted(set(names_read(evaluation)) & set(checker.per_step))
    if index_names and replayed_work(body, index, copied, evaluations):
        return f"the evaluation reads `{index_names[0]}`, which only the graph loop computes"
    return None
