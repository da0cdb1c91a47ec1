"""An evaluation run inside a fused step loop (TFM301).

A loop that evaluates at some steps (`if step % 5 == 0: write(compute_values(x, y), step)`) would
otherwise run in chunks between its evaluations (`codegen.chunked_loop`): with a few steps
per chunk, the fixed cost of each call dominates. When the evaluation is itself a step function that
only reads the model (no update of any variable, no summary or print of its own), fed invariant
values or the loop variable alone, it runs in the graph loop at the same steps instead, before or
after the train step as the Python loop had it; its outputs are stacked for the evaluated steps
only, and the Python work around it is replayed in order over those rows with the rest of the loop's.

The steps where it runs are told in Python before the call (its test reads the loop variable and
invariants alone), as a list of booleans, one per step, the multi-step function's last argument:

    train_step_evaluated = [step % 3 == 0 for step in range(STEPS)]
    train_step_outputs = train_step_loop(0, STEPS, xs, ys, train_step_evaluated)
    train_step_rows = [tf.unstack(train_step_outputs[0][0]), None]
    compute_values_rows = {"loss": tf.unstack(train_step_outputs[1]["loss"])}
    compute_values_index = 0
    for step in range(STEPS):
        if step % 3 == 0:
            summary = {"loss": compute_values_rows["loss"][compute_values_index]}
            compute_values_index += 1
            write_summaries(writer, summary, step)
        loss_value, _ = [train_step_rows[0][step], None]
        ...

`in_graph_evaluation` says whether an evaluation qualifies, or why not (the loop then runs in chunks).
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.speed.fusion.body import fed_arrays_problem, plain_python_problem
from transforms.speed.fusion.scan import callee_name, calls_in, names_bound, names_read
from transforms.common.syntax import scan

# What a function that only reads the model never does: update a variable or a metric, apply
# gradients, write a summary or print from the graph (its order with the replayed Python work would change).
WRITING_ATTRIBUTES = frozenset({
    "assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub", "scatter_nd_update",
    "scatter_nd_add", "scatter_nd_sub", "apply_gradients", "minimize", "GradientTape", "update_state",
    "reset_states", "reset_state", "summary", "print", "save", "restore", "write", "py_function", "numpy_function",
})
# (Reading the next batch of a dataset iterator, as a step reading its data does, is no such change: in
# the graph loop the reads of one iterator keep the loop body's order, as the Python loop had them.)
FLAGS_SPEC = "tf.TensorSpec([None], tf.bool)"


@dataclass(frozen=True)
class InGraphEvaluation:
    step: object  # the evaluation's StepFunction
    call: cst.Call
    statement: cst.SimpleStatementLine  # the statement of the evaluation's body holding the call
    first: bool  # the evaluation comes before the train step call
    params: tuple  # (name, spec) the multi-step function must also take for it
    arguments: tuple  # (keyword or None, name, spec position) of each argument, in order


def flags_name(step: str) -> str:
    """The Python list telling, per step, whether the evaluation runs."""
    return step + "_evaluated"


def index_name(evaluation: str) -> str:
    """The replay's count of evaluations done so far (the row of the evaluation's outputs)."""
    return evaluation + "_index"


def in_graph_evaluation(plan, loop: cst.For, facts, module: cst.Module, first: bool) -> InGraphEvaluation | str:
    """The evaluation of `plan` run in the graph loop, or why it cannot be (it then runs between chunks)."""
    if plan.more:
        return "the loop calls several step functions"
    evaluation: cst.If = plan.evaluations[0]
    body = list(loop.body.body)
    state = facts.state | (facts.opaque - names_bound(body))
    called = [c for c in calls_in(evaluation) if isinstance(c.func, cst.Name) and c.func.value in facts.state]
    if len(called) != 1 or called[0].func.value not in facts.steps:
        return "the evaluation does not call exactly one step function (tf.function with an input_signature)"
    call = called[0]
    step = facts.steps[call.func.value]
    if step.name == plan.step.name:
        return "the evaluation calls the train step itself"
    holders = [s for s in evaluation.body.body if call in calls_in(s)]
    if not (len(holders) == 1 and isinstance(holders[0], cst.SimpleStatementLine) and len(holders[0].body) == 1):
        return "the evaluation's step call is not in a simple statement of the `if` body"
    statement = holders[0]
    definitions = [d for d in _function_defs(module) if d.name.value == step.name]
    if len(definitions) != 1:
        return f"`{step.name}` is defined more than once"
    problem = _writes_problem(definitions[0], facts)
    if problem:
        return f"`{step.name}` {problem}"  # e.g. "may change state (`assign`)"
    params, arguments, known = [], [], {name: _code(spec) for name, spec in plan.params}
    per_step = set(names_bound(body)) | {loop.target.value}
    for position, arg in enumerate(call.args):
        if arg.star or (arg.keyword is not None and arg.keyword.value not in step.params):
            return "the evaluation's step call unpacks arguments or names an unknown parameter"
        where = step.params.index(arg.keyword.value) if arg.keyword is not None else position
        if where >= len(step.specs) or not isinstance(arg.value, cst.Name):
            return "the evaluation's step is fed something other than a name"
        name = arg.value.value
        if name == loop.target.value:
            if len(loop.iter.args) != 1:
                return "the evaluation's step is fed the variable of a loop not over range(<n>)"
        elif name in per_step or name in facts.state:  # may hold TensorFlow objects (`opaque`): as the step's own
            return f"the evaluation's step is fed `{name}`, which is not the same at every step"
        else:
            spec = _code(step.specs[where])
            if known.setdefault(name, spec) != spec:
                return f"`{name}` feeds parameters with different signatures"
            if name not in {n for n, _ in plan.params} and name not in {n for n, _ in params}:
                params.append((name, step.specs[where]))
        arguments.append((arg.keyword.value if arg.keyword is not None else None, name, where))
    placeholder = statement.deep_replace(call, cst.Name("None"))
    rest = [placeholder if s is statement else s for s in evaluation.body.body]
    writers = _writers(module, facts)
    helpers = _summary_helpers(module, facts, writers)
    allowed = writers | set(helpers)
    problem = plain_python_problem(rest, state - allowed,
                                   lambda c: None if callee_name(c) in helpers else facts.call_problem(c), facts.logs)
    if problem:
        return f"the evaluation's Python work {problem.removeprefix('loop body ')}"
    problem = fed_arrays_problem(rest, {name for name, _ in params})
    if problem:
        return problem
    return InGraphEvaluation(step, call, statement, first, tuple(params), tuple(arguments))




def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _function_defs(module: cst.Module) -> list[cst.FunctionDef]:
    found: list[cst.FunctionDef] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

    scan(module, Finder())
    return found


def _writes_problem(function: cst.FunctionDef, facts, depth: int = 0) -> str | None:
    """Why `function` may do more than read the model (None if it only reads). It may call plain
    Python functions of the module that only read too (`leaky_relu`) and read-only Keras layers
    (`facts.read_only_layers`), but no other tf.function, layer or model (a layer may update
    statistics, a tf.function is checked no further)."""
    attributes: list[str] = []
    rebinds: list[bool] = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            attributes.append(node.attr.value)

        def visit_Global(self, node: cst.Global) -> None:
            rebinds.append(True)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            rebinds.append(True)

    scan(function.body, Finder())
    called = {c.func.value for c in calls_in(function.body) if isinstance(c.func, cst.Name)}
    writing = sorted((set(attributes) | called) & WRITING_ATTRIBUTES)
    if writing:
        return f"may change state (`{writing[0]}`)"
    if rebinds:
        return "rebinds globals"
    for name in sorted(called & set(facts.plain) - facts.state):
        problem = _writes_problem(facts.plain[name], facts, depth + 1) if depth < 3 else "is nested too deep"
        if problem:
            return f"calls `{name}`, which {problem}"
    functions = sorted(called & facts.state - {"tf"} - facts.read_only_layers)
    if functions:
        return f"calls `{functions[0]}`, which may change state"
    return None


def _writers(module: cst.Module, facts) -> set[str]:
    """Names bound only to `tf.summary.create_file_writer(...)`: summary writers, not model state."""
    bound: dict[str, list[bool]] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            writer = isinstance(node.value, cst.Call) and \
                "tf.summary.create_file_writer" in facts.tf_names(node.value.func)
            for name in names_bound([node]):
                bound.setdefault(name, []).append(writer and len(node.targets) == 1
                                                  and isinstance(node.targets[0].target, cst.Name))

    scan(module, Finder())
    return {name for name, kinds in bound.items() if all(kinds)}


def _summary_helpers(module: cst.Module, facts, writers: set[str]) -> dict[str, cst.FunctionDef]:
    """Functions that only write summaries of their arguments: every TensorFlow name they use is
    `tf.summary.*` (or casts their step), their other state names are writers and other such
    functions, their calls are those, plain Python, or methods of their parameters
    (`writer.as_default()`, `values.items()`). They may be tf.functions: TFM201's `write_summaries`
    calls `write_summary_ops`, which runs the summary ops in one graph."""
    candidates = [f for f in _function_defs(module) if _undecorated_or_tf_function(f, facts)]
    found: dict[str, cst.FunctionDef] = {}
    while True:
        more = {f.name.value: f for f in candidates
                if f.name.value not in found and _writes_summaries_only(f, facts, writers | set(found))}
        if not more:
            return found
        found.update(more)


def _undecorated_or_tf_function(function: cst.FunctionDef, facts) -> bool:
    targets = [d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in function.decorators]
    return all(facts.tf_names(target) == {"tf.function"} for target in targets)


#: The TensorFlow names a summary helper may use besides `tf.summary.*`: those of `tf.cast(step, tf.int64)`.
STEP_CAST = frozenset({"tf.cast", "tf.int64"})


def _summary_api(names: set[str]) -> bool:
    return bool(names) and all(n.startswith("tf.summary.") or n in STEP_CAST for n in names)


def _writes_summaries_only(function: cst.FunctionDef, facts, allowed: set[str]) -> bool:
    """Whether `function` only writes summaries, calling only `allowed` (writers, summary helpers)
    besides the summary API, plain Python and its parameters' methods."""
    params = {p.name.value for p in function.params.params}
    tf_used: list[set[str]] = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            names = facts.tf_names(node)
            if names:
                tf_used.append(names)
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            names = facts.tf_names(node)
            if names:
                tf_used.append(names)

    scan(function.body, Finder())
    if not all(_summary_api(names) for names in tf_used):
        return False
    reads = set(names_read(function.body)) - params - names_bound([function.body])
    others = (reads & facts.state) - allowed
    others -= {n for n in others if _only_tf_prefix(function.body, n, facts)}
    if others:
        return False
    for call in calls_in(function.body):
        if _summary_api(facts.tf_names(call.func)) or callee_name(call) in allowed:
            continue
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) \
                and call.func.value.value in params | allowed:
            continue
        if facts.call_problem(call) is not None:
            return False
    return True


def _only_tf_prefix(body: cst.CSTNode, name: str, facts) -> bool:
    """Whether every use of `name` in `body` is the head of a summary API attribute (a module alias)."""
    uses: list[bool] = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            head = node
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name) and head.value == name:
                uses.append(_summary_api(facts.tf_names(node)))
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                uses.append(False)

    scan(body, Finder())
    return bool(uses) and all(uses)
