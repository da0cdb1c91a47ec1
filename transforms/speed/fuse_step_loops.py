"""TFM301: run a Python loop of step-function calls as one in-graph loop.

After TFM201 a training loop calls its `@tf.function` step once per iteration; on a CPU the Python
dispatch of each call costs more than a small model's step. When the loop only feeds the step
invariant arrays (or batches sliced from them by the loop variable) and otherwise does plain Python
with the step's outputs (logging them included: `tf.logging`, absl), the steps are moved into one
multi-step `tf.function` (a `tf.range` loop, one `tf.TensorArray` per output) called once, and the
Python loop then runs over the stacked outputs, doing the same per-step work with the same values
(tensors) in the same order. A loop calling several step functions (a GAN's discriminator step, then
its generator step) runs them in that order in the graph loop and stacks each one's outputs.

A loop drawing its batches from TF1's tutorial MNIST loader (`mnist.train.next_batch(n)`), or noise
from NumPy's random functions (`z = sample_z(n, dim)`, or inline as a step's argument), runs in
chunks of steps, each drawing its batches first in Python, in the loop's order, then running its
steps in one call fed their stack (`fusion/draws.py`, `fusion/draw_codegen.py`). Such a loop may call
several step functions and evaluate after them, or first in each iteration.

A loop that also evaluates at some steps (`if step % 100 == 0:` calling another function, reading
weights) runs that evaluation in the graph loop too when it is a step function that only reads the
model, fed invariants or the loop variable (`fusion/evaluation.py`): at the same steps, before or after
the train step as the loop had it, its outputs stacked for those steps and the Python work around it
replayed in order with the rest. Otherwise (the finding says why) the loop runs its steps in chunks:
at each such step, one call for the steps up to it, then the evaluation as before. The multi-step function is defined in the outermost scope where what it
reads means the same (traced once, even when the loop sits in a helper called once per epoch).

Everything the rewrite relies on is checked (`fusion/plan.py`); a loop that calls a step function but
fails a check is left alone with a warning saying why. The multi-step function is named
`<step>_loop` (`fusion/names.py`), which is how `tf-migrate verify` unstacks its calls.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import libcst as cst

from transforms.speed.fusion.body import assigned_names
from transforms.speed.fusion.codegen import (
    replays_work,
    GRAPH_LOCALS,
    REPLAY_INDEX,
    chunk_start_name,
    chunk_stop_name,
    chunked_loop,
    evaluates_first,
    fused_call,
    fused_function,
    in_graph_loop,
    reads_rows,
    replay_loop,
    rows_binding,
    schedules,
)
from transforms.speed.fusion.draw_codegen import drawn_chunks, drawn_chunks_with_evaluation, replays_drawn_work
from transforms.speed.fusion.draws import STEPS_PER_DRAW
from transforms.speed.fusion.evaluation import flags_name, in_graph_evaluation, index_name
from transforms.speed.fusion.names import loop_function_name, outputs_name, rows_name
from transforms.speed.fusion.params import values_name
from transforms.speed.fusion.body import TWICE_PER_STEP
from transforms.speed.fusion.merged_evaluations import merged_at, merged_evaluations
from transforms.speed.fusion.plan import (NO_STEP_CALL, REBOUND_LOOP_VARIABLE, Plan, calls_by_name, loop_evaluations,
                                         plan_fusion)
from transforms.speed.fusion.scan import callee_name, calls_in, names_bound, names_loaded, names_read, parameter_names
from transforms.common.qualnames import numpy_alias
from transforms.common.syntax import fresh_name, walk, scan
from transforms.speed.fusion.state import TF_FUNCTION_IDENTIFIERS, ModuleFacts, shared_facts
from transforms.base import TFTransform

DRAWN_WITHOUT_STEP_NAME = "loop drawing its batches ahead has other work but no name for its step"
# what a loop given a fresh target (`_with_step_name`) may no longer be refused for
NAMELESS_STEP_PROBLEMS = (REBOUND_LOOP_VARIABLE, DRAWN_WITHOUT_STEP_NAME)


class FuseStepLoops(TFTransform):
    CODE = "TFM301"
    DESCRIPTION = "Run Python loops of tf.function step calls as one in-graph loop (tf.range)"
    PHASE = 30
    TRIGGERS = ("function",)  # only loops calling a tf.function step are fused
    IDENTIFIERS = TF_FUNCTION_IDENTIFIERS

    def visit_Module(self, node: cst.Module) -> bool:
        """Gather the module's facts; the pass goes into the module only when a loop may be fused."""
        if all(self._in_graph(loop) for loop in loops_calling_decorated(node)):
            return False  # no loop can reach plan_fusion's checks: nothing to fuse or report
        self.facts: ModuleFacts = shared_facts(self, node)
        self.module = node
        self.plans: dict[cst.For, Plan] = {}
        self.counts = Counter(names_read(node))
        self.taken = set(self.counts)
        self.loops: list[list[cst.For]] = [[]]  # enclosing loops, per function scope
        self.scopes: list[cst.FunctionDef | cst.ClassDef | None] = [None]  # the module, then enclosing defs
        self.step_scopes = defining_scopes(node, set(self.facts.steps))
        self.defined: set[str] = set()  # step functions whose definition the traversal has passed
        self.hoisted: dict[cst.For, list[cst.FunctionDef]] = {}  # outermost loop -> defs placed before it
        self.hoist_to: dict[cst.For, cst.For] = {}  # fused loop -> where its multi-step function goes
        self.named: dict[cst.For, cst.For] = {}  # fused loop -> the same loop with the target it was planned with
        self.merges: dict[cst.For, list[int]] = {}  # fused loop -> (start, count) of its evaluations merged
        return True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.loops.append([])
        self.scopes.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self.loops.pop()
        self.scopes.pop()
        self.defined.add(original.name.value)
        return self._with_hoisted(original, [updated])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.loops.append([])
        self.scopes.append(node)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.loops.pop()
        self.scopes.pop()
        return updated

    def visit_For(self, original: cst.For) -> None:
        self.loops[-1].append(original)
        if not self.facts.steps:
            return
        node = original
        plan, kept_chunks, anchor = self._plan(node, original)
        if plan in NAMELESS_STEP_PROBLEMS:
            renamed = self._with_step_name(original)
            if renamed is not original:
                node = renamed
                plan, kept_chunks, anchor = self._plan(node, original)
        if plan == TWICE_PER_STEP:
            merge = merged_evaluations(node, loop_evaluations(node, self.facts))
            if merge is not None:
                node, *self.merges[original] = merge
                plan, kept_chunks, anchor = self._plan(node, original)
        if plan is None:
            return
        if isinstance(anchor, str):
            self.report(original, f"step loop kept in Python: {anchor}", fixed=False, severity="warning")
            return
        self.plans[original] = plan
        if node is not original:
            self.named[original] = node
        self.taken |= {loop_function_name(plan.step.name), outputs_name(plan.step.name), rows_name(plan.step.name)}
        if plan.in_graph:
            self.taken |= {flags_name(plan.step.name), index_name(plan.in_graph.step.name),
                           rows_name(plan.in_graph.step.name)}
        self.hoist_to[original] = anchor
        self.hoisted.setdefault(anchor, [])
        function = loop_function_name(plan.step.name)
        done = f"{function}() calls between its evaluations" if plan.evaluations else f"one call of {function}()"
        if plan.in_graph:
            done = f"one call of {function}(), running {plan.in_graph.step.name}() in it where the loop evaluates"
        elif plan.drawn:
            done = f"one call of {function}() per {STEPS_PER_DRAW} steps" if not plan.evaluations else \
                f"{function}() calls between its evaluations, at most {STEPS_PER_DRAW} steps each"
            done += (", their batches drawn first (one difference: should drawing a batch raise, the steps "
                     "drawn before it in its chunk have not run)")
        elif kept_chunks:
            done += f" (evaluation kept in Python: {kept_chunks})"
        called = ", ".join(f"{step.name}()" for step, _, _ in plan.step_calls())
        self.report(original, f"{called} loop -> {done}", fixed=True)

    def _plan(self, node: cst.For, original: cst.For) -> tuple[Plan | str | None, str | None, cst.CSTNode | str]:
        """(plan or why not, why an evaluation is not run in the graph loop, where the multi-step function
        goes or why it cannot) for the loop `node` stands for (`original`, or it with a fresh target);
        a None plan for a loop that is none of this transform's business."""
        plan = plan_fusion(node, self.facts)
        if plan == NO_STEP_CALL or (isinstance(plan, str) and (self._in_graph(node) or self._wraps_step_loop(node))):
            # not a step loop, already a graph loop (a multi-step function's own), or an epoch loop
            # around a step loop: fusing the inner loop is this transform's; the epochs are TFM310's
            return None, None, ""
        kept_chunks = None
        if not isinstance(plan, str) and plan.evaluations and not plan.drawn:
            in_graph = in_graph_evaluation(plan, node, self.facts, self.module, evaluates_first(plan, node))
            if isinstance(in_graph, str):
                kept_chunks = in_graph
            else:
                candidate = replace(plan, in_graph=in_graph)
                kept_chunks = self._name_clash(candidate) or self._run_once_problem(candidate, node) or \
                    self._index_arrays_problem(candidate) or self._anchor(candidate, original)
                if not isinstance(kept_chunks, str):
                    plan, kept_chunks = candidate, None
        problem = plan if isinstance(plan, str) else (
            self._name_clash(plan) or self._run_once_problem(plan, node) or self._index_arrays_problem(plan) or (
            None if plan.in_graph else
            self._drawn_problem(plan, node) if plan.drawn else
            self._replay_problem(node) if plan.evaluations and replays_work(plan, node) else
            self._outputs_problem(plan, node) if plan.evaluations else self._loop_var_problem(plan, node)))
        if problem is None and plan.evaluations and not (plan.in_graph or plan.drawn) and \
                self._outputs_read_after(plan, node):
            plan = replace(plan, outputs_read_after=True)
        return (problem or plan), kept_chunks, (problem or self._anchor(plan, original))

    def _with_step_name(self, loop: cst.For) -> cst.For:
        """`loop` with a fresh target when the module never reads its target, else `loop`: a loop whose
        body rebinds its target (`for _ in range(k): x, _ = draw()`), or that has none to number its
        steps by (`_`), is fused as if it had one."""
        target = loop.target
        if not isinstance(target, cst.Name) or target.value in names_loaded(self.module):
            return loop
        return loop.with_changes(target=cst.Name(fresh_name("step", self.taken)))

    def _anchor(self, plan: Plan, loop: cst.For) -> cst.CSTNode | str:
        """The statement the multi-step function is placed before, or why there is none.

        It goes in the outermost scope from the step function's own down to the loop's where the
        names it reads mean what they mean at the loop (traced once there: a helper function holding
        the loop may run once per epoch), before the statement of that scope holding the loop."""
        here = len(self.scopes) - 1
        defined = self.step_scopes.get(plan.step.name, [])
        if any(self.step_scopes.get(step.name, []) != defined for step in plan.functions_called()[1:]):
            return "the step functions it calls are not all defined in the same scope"
        levels = [i for i, scope in enumerate(self.scopes) if scope in defined] if len(defined) == 1 else [here]
        classes = [i for i, scope in enumerate(self.scopes) if isinstance(scope, cst.ClassDef)]
        lowest = classes[-1] + 1 if classes else 0  # a class body is no place for it, nor a way out
        nested = sum(isinstance(scope, cst.FunctionDef) for scope in self.scopes) > 1
        outside = outside_names(plan, loop)
        problem = "the step function is not defined in a scope enclosing the loop"
        for level in range(max(levels[0], lowest), here + 1) if levels else ():
            if level == levels[0] < here and any(step.name not in self.defined for step in plan.functions_called()):
                continue  # its input_signature would be read before the step function's own
            around = self.loops[level] if level < here else self.loops[level][:-1]
            problem = changed_problem(outside, around, self.scopes[level + 1:])
            if problem is None and level == here and nested:
                problem = "it is in a nested function, where its multi-step function would be traced at every call"
            if problem is None:
                return around[0] if around else (self.scopes[level + 1] if level < here else loop)
        return problem

    def _wraps_step_loop(self, loop: cst.For) -> bool:
        inner = [n for s in loop.body.body for n in walk(s) if isinstance(n, cst.For)]
        return any(callee_name(c) in self.facts.steps for n in inner for c in calls_in(n))

    def _in_graph(self, loop: cst.For) -> bool:
        return is_graph_loop(loop, self.tf_name)

    def _name_clash(self, plan: Plan) -> str | None:
        generated = {loop_function_name(plan.step.name), outputs_name(plan.step.name), rows_name(plan.step.name),
                     REPLAY_INDEX, chunk_start_name(plan), chunk_stop_name(plan),
                     *(values_name(name) for name, _ in plan.scheduled),
                     *(values_name(name) for name in plan.drawn_names()),
                     *(name for draw in plan.drawn if draw.hoisted for name in draw.names)}
        clash = sorted(generated & self.taken)
        if clash:
            return f"the name `{clash[0]}` it would define is already used"
        inside = set().union(*(names_read(call) for _, call, _ in plan.step_calls()), *(names_read(s) for s in plan.copied))
        if plan.in_graph:
            generated |= {flags_name(plan.step.name), index_name(plan.in_graph.step.name),
                          rows_name(plan.in_graph.step.name)}
            clash = sorted(generated & self.taken)
            if clash:
                return f"the name `{clash[0]}` it would define is already used"
            inside |= set(names_read(plan.in_graph.call))
        clash = sorted(inside & GRAPH_LOCALS)
        if plan.more:  # the TensorArrays and outputs of the further steps
            clash += sorted(name for name in inside if name.startswith(("stacked", "outputs_")))
        return f"the step call reads `{clash[0]}`, a name the graph loop uses" if clash else None

    def _loop_var_problem(self, plan: Plan, loop: cst.For) -> str | None:
        """Without per-step Python work no loop is left to bind the loop variable: it must be unused
        elsewhere, but for the bodies of other loops binding it first (`for start in ...` again)."""
        name = loop.target.value
        if replay_loop(plan, loop, self._unused(plan, loop)) is None and \
                reads_outside_rebinding_loops(self.module, name) > 0:
            return f"no Python work is left in the loop, but `{name}` is used after it"
        return None

    def _unused(self, plan: Plan, loop: cst.For) -> frozenset[str]:
        """Names of the index statements the graph loop computes that nothing outside the loop reads."""
        inside = Counter(names_read(loop))
        names = {name for s in plan.copied for name in assigned_names(s)}
        return frozenset(name for name in names if self.counts[name] == inside[name])

    def _index_arrays_problem(self, plan: Plan) -> str | None:
        """An array whose batches index the step's (`X[order[a:b]]`) must hold integers, as a
        permutation does: NumPy would read a boolean or float array otherwise, the graph converts
        it to the int64 of its signature. Every binding of it (and of its generator) must say so."""
        parameters = set().union(*(parameter_names(s) for s in self.scopes if isinstance(s, cst.FunctionDef)))
        for name in plan.index_arrays:
            found = assignments_of(self._binding_scope(name), name)
            values = [a.value for a in found if a is not None]
            if name in parameters or not found or len(values) < len(found) or \
                    not all(self._is_permutation(v, parameters) for v in values):
                return (f"`{name}` indexes the step's batches, but is not a permutation of integers "
                        "(`rng.permutation(len(x))`) wherever it is bound")
        return None

    def _is_permutation(self, value: cst.BaseExpression, parameters: set[str]) -> bool:
        """`np.random.permutation(n)`, or `rng.permutation(n)` with `rng` a NumPy random generator,
        of an integer `n` (`len(x)`, `x.shape[0]`, a literal): an int64 array of 0..n-1."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "permutation" and len(value.args) == 1
                and not value.args[0].keyword and not value.args[0].star and is_count(value.args[0].value)):
            return False
        if "numpy.random.permutation" in self.qualified_names(value.func):
            return True
        source = value.func.value
        if not isinstance(source, cst.Name) or source.value in parameters:
            return False
        found = assignments_of(self._binding_scope(source.value), source.value)
        return bool(found) and all(a is not None and isinstance(a.value, cst.Call) and self.qualified_names(a.value.func) & {
            "numpy.random.RandomState", "numpy.random.default_rng"} for a in found)

    def _binding_scope(self, name: str) -> cst.CSTNode:
        """Where the bindings of `name` seen at the loop are: the innermost enclosing function binding
        it (a local there: other functions' names of the same spelling do not matter), else the module."""
        for scope in reversed(self.scopes):
            if not isinstance(scope, cst.FunctionDef):
                continue
            declared = {a.name.value for d in walk(scope) if isinstance(d, (cst.Global, cst.Nonlocal)) for a in d.names}
            if name in declared:
                return self.module
            if name in parameter_names(scope) or assignments_of(scope, name):
                return scope
        return self.module

    def _run_once_problem(self, plan: Plan, loop: cst.For) -> str | None:
        """Run once before the steps, the invariant bindings happen even if the loop runs no step:
        then nothing outside the loop may read their names, unless its range is a non-empty constant."""
        if not plan.run_once or runs_at_least_once(loop.iter, self._constant):
            return None
        inside = Counter(names_read(loop))
        outside = sorted(name for name in names_bound(plan.run_once) if self.counts[name] > inside[name])
        return outside and f"`{outside[0]}` would be bound even if the loop ran no step, and is used outside it"

    def _constant(self, name: str) -> int | None:
        return constant_integer(self.module, name)

    def _replay_problem(self, loop: cst.For) -> str | None:
        """Replaying Python work over chunks of steps needs the step number: `for i in range(n)`."""
        if len(loop.iter.args) != 1 or not isinstance(loop.target, cst.Name) or loop.target.value == "_":
            return "loop with an evaluation and other Python work is not `for <name> in range(<n>)`"
        return None

    def _drawn_problem(self, plan: Plan, loop: cst.For) -> str | None:
        """Drawn a chunk at a time, the steps are numbered by the loop's own values: `range(<n>)`, or
        `range(<a>, <b>)` when the graph loop needs no step number (the step reads neither the loop
        variable nor a per-step schedule). Replaying the loop's other work needs a name for the step."""
        if len(loop.iter.args) > 2 or (len(loop.iter.args) == 2 and plan.uses_loop_var):
            return "loop drawing its batches ahead does not run over `range(<n>)` or `range(<a>, <b>)`"
        if loop.target.value == "_" and (plan.evaluations or replays_drawn_work(plan, loop)):
            return DRAWN_WITHOUT_STEP_NAME
        return None

    def _outputs_problem(self, plan: Plan, loop: cst.For) -> str | None:
        """Run in chunks, the loop binds the step's outputs where it evaluates and, when code outside
        the loop reads them, after its last chunk: nothing else in the loop may read them."""
        statement = loop.body.body[plan.call_index]
        inside = Counter(names_read(loop))
        # an evaluation before the step call would see the previous step's outputs: none are bound for it
        seen = Counter() if evaluates_first(plan, loop) else Counter(names_read(plan.evaluations[0]))
        for name in sorted(names_bound([statement])):
            if inside[name] > seen[name] + Counter(names_read(statement))[name]:
                return f"the step's output `{name}` is read where the evaluation does not run"
        return None

    def _outputs_read_after(self, plan: Plan, loop: cst.For) -> bool:
        inside = Counter(names_read(loop))
        return any(self.counts[name] > inside[name] for name in names_bound([loop.body.body[plan.call_index]]))

    def leave_For(self, node: cst.For, updated: cst.For):
        self.loops[-1].pop()
        plan = self.plans.get(node)
        statements: list[cst.BaseStatement] = [updated]
        if node in self.named:  # planned with a fresh target, or its evaluations merged
            original = self.named[node]
            updated = updated.with_changes(target=original.target)
        else:
            original = node
        if plan is not None and node in self.merges:
            updated = merged_at(updated, *self.merges[node])
        if plan is not None:
            self.add_import("tensorflow", asname="tf")
            function = cst.parse_module(fused_function(plan, original, "tf")).body[0]
            self.hoisted[self.hoist_to[node]].append(function)
        if plan is not None and plan.in_graph:
            statements = in_graph_loop(plan, original, self._unused(plan, original), "tf")
            statements[0] = statements[0].with_changes(
                leading_lines=[*original.leading_lines, *statements[0].leading_lines])
        elif plan is not None and plan.drawn:
            np = numpy_alias(self.module)
            if np is None:
                np = "numpy"
                self.add_import("numpy")
            chunks = drawn_chunks_with_evaluation(plan, original, updated, np) if plan.evaluations else \
                [drawn_chunks(plan, original, np)]
            statements = [*(cst.parse_statement(line + "\n") for line in schedules(plan, original)),
                          *plan.run_once, *chunks]
            statements[0] = statements[0].with_changes(
                leading_lines=[*original.leading_lines, *statements[0].leading_lines])
        elif plan is not None and plan.evaluations:
            statements = [*(cst.parse_statement(line + "\n") for line in schedules(plan, original)),
                          *plan.run_once, *chunked_loop(plan, original, updated)]
            statements[0] = statements[0].with_changes(
                leading_lines=[*original.leading_lines, *statements[0].leading_lines])
        elif plan is not None:
            before = [cst.parse_statement(line + "\n") for line in schedules(plan, original)]
            call = cst.parse_statement(fused_call(plan, original) + "\n")
            replay = replay_loop(plan, original, self._unused(plan, original))
            rows = [cst.parse_statement(rows_binding(plan, "tf") + "\n")] if reads_rows(plan, original) else []
            statements = [*before, *plan.run_once, call, *rows] + ([replay] if replay is not None else [])
            statements[0] = statements[0].with_changes(
                leading_lines=[*original.leading_lines, *statements[0].leading_lines])
        return self._with_hoisted(node, statements)

    def _with_hoisted(self, original: cst.CSTNode, statements: list[cst.BaseStatement]):
        """`statements` (what `original` became), after the multi-step functions placed before it."""
        gap = [cst.EmptyLine(indent=False)] * (1 if len(self.loops) > 1 else 2)
        functions = self.hoisted.pop(original, [])
        if not functions:
            return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)
        comments = [line for line in statements[0].leading_lines if line.comment is not None]
        functions[0] = functions[0].with_changes(leading_lines=[*gap, *comments])
        functions = [f if i == 0 else f.with_changes(leading_lines=gap) for i, f in enumerate(functions)]
        statements[0] = statements[0].with_changes(leading_lines=gap)
        return cst.FlattenSentinel([*functions, *statements])


def is_graph_loop(loop: cst.For, tf_name) -> bool:
    """`for ... in tf.range(...)`: a loop of a multi-step (or epochs) function's own graph."""
    iterable = loop.iter.func if isinstance(loop.iter, cst.Call) else loop.iter
    return tf_name(iterable) == "tf.range"


def constant_integer(module: cst.Module, name: str) -> int | None:
    """The integer a name always holds: its one binding in the module is `NAME = <integer literal>`."""
    found = assignments_of(module, name)
    if len(found) == 1 and found[0] is not None and isinstance(found[0].value, cst.Integer):
        return found[0].value.evaluated_value
    return None


def runs_at_least_once(iterable: cst.Call, constant=lambda name: None) -> bool:
    """`range(...)` of integer constants that is not empty; `constant(name)` gives the value of a
    name that always holds one integer literal (`STEPS = 30`), else None."""
    bounds = [literal_integer(arg.value, constant) for arg in iterable.args]
    return None not in bounds and 0 not in bounds[2:] and len(range(*bounds)) > 0


def literal_integer(node: cst.BaseExpression, constant=lambda name: None) -> int | None:
    if isinstance(node, cst.Name):
        return constant(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = literal_integer(node.expression)
        return None if value is None else -value
    return node.evaluated_value if isinstance(node, cst.Integer) else None


def is_count(node: cst.BaseExpression) -> bool:
    """A non-negative integer: a literal, `len(x)` or `x.shape[k]`."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return len(node.args) == 1 and not node.args[0].star and not node.args[0].keyword
    return (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "shape" and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Integer))


def assignments_of(module: cst.Module, name: str) -> list[cst.Assign | None]:
    """Every binding of `name` anywhere in `module`: the `name = value` assignments, None for any other
    kind (a loop target, a tuple target, `+=`, a walrus, an import, a parameter, a definition, ...)."""
    found: list[cst.Assign | None] = []

    def other(binds: bool) -> None:
        if binds:
            found.append(None)

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if name in names_bound([node]):
                plain = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                found.append(node if plain else None)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            other(name in names_bound([node]))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            other(name in names_bound([node]))

        def visit_For(self, node: cst.For) -> None:
            other(name in set(names_read(node.target)))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            other(name in set(names_read(node.target)))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            other(name in set(names_read(node.target)))

        def visit_AsName(self, node: cst.AsName) -> None:
            other(name in set(names_read(node.name)))

        def visit_Param(self, node: cst.Param) -> None:
            other(node.name.value == name)

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            other(node.asname is None and isinstance(node.name, cst.Name) and node.name.value == name)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            other(node.name.value == name)

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            other(node.name.value == name)

    scan(module, Finder())
    return found


def reads_outside_rebinding_loops(module: cst.Module, name: str) -> int:
    """Reads of `name` in `module` other than those in the body of a `for` loop whose target is
    `name` (the loop binds it before its body can read it)."""
    reads = [0]

    class Finder(cst.CSTVisitor):
        def visit_For(self, node: cst.For) -> bool:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                node.iter.visit(self)
                if node.orelse is not None:
                    node.orelse.visit(self)
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            reads[0] += node.value == name

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

    scan(module, Finder())
    return reads[0]


def outside_names(plan: Plan, loop: cst.For) -> set[str]:
    """Names the multi-step function reads that are neither its parameters nor bound by the loop."""
    # a loop drawing its batches passes its multi-step function the chunk's bounds, never its range
    inside = set().union(*(names_read(call) for _, call, _ in plan.step_calls()),
                         *(names_read(s) for s in plan.copied), set() if plan.drawn else names_read(loop.iter),
                         names_read(plan.in_graph.call) if plan.in_graph else set())
    return inside - {name for name, _ in plan.params} - names_bound(loop.body.body) - {loop.target.value}


def changed_problem(outside: set[str], loops: list[cst.For], functions: list[cst.FunctionDef]) -> str | None:
    """Why a multi-step function placed before `loops[0]` (else before `functions[0]`) could see other
    values of `outside` than the loop does: the enclosing loops, or the functions between, bind them."""
    changed = sorted(outside & names_bound([outer.body for outer in loops]))
    if changed:
        return f"the enclosing loop changes `{changed[0]}`, which the step loop reads"
    for function in functions:
        local = sorted(outside & (names_bound([function.body]) | parameter_names(function)))
        if local:
            return f"`{local[0]}`, which the step loop reads, is local to `{function.name.value}`"
    return None


def loops_calling_decorated(module: cst.Module) -> list[cst.For]:
    """The loops whose own statements call a decorated function of the module by its name: the only
    loops that can get past plan_fusion's first test (steps are tf.functions, called by name)."""
    nodes = list(walk(module))
    decorated = {n.name.value for n in nodes if isinstance(n, cst.FunctionDef) and n.decorators}
    return [loop for loop in nodes if isinstance(loop, cst.For) and calls_by_name(loop, decorated)]


def defining_scopes(module: cst.Module, names: set[str]) -> dict[str, list[cst.FunctionDef | None]]:
    """For each name in `names`, the scopes (enclosing function, None for the module) defining it."""
    found: dict[str, list[cst.FunctionDef | None]] = {}
    scopes: list[cst.FunctionDef | None] = [None]

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if node.name.value in names:
                found.setdefault(node.name.value, []).append(scopes[-1])
            scopes.append(node)

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            scopes.pop()

    scan(module, Finder())
    return found
