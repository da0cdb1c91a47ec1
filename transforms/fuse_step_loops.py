"""TFM301: run a Python loop of step-function calls as one in-graph loop.

After TFM201 a training loop calls its `@tf.function` step once per iteration; on a CPU the Python
dispatch of each call costs more than a small model's step. When the loop only feeds the step
invariant arrays (or batches sliced from them by the loop variable) and otherwise does plain Python
with the step's outputs, the steps are moved into one multi-step `tf.function` (a `tf.range` loop,
one `tf.TensorArray` per output) called once, and the Python loop then runs over the stacked
outputs, doing the same per-step work with the same values (tensors) in the same order.

Everything the rewrite relies on is checked (`_fusion_plan`); a loop that calls a step function but
fails a check is left alone with a warning saying why. The multi-step function is named
`<step>_loop` (`_fusion_names`), which is how `tf-migrate verify` unstacks its calls.
"""
from __future__ import annotations

from collections import Counter

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from transforms._fusion_codegen import (
    GRAPH_LOCALS,
    REPLAY_INDEX,
    fused_call,
    fused_function,
    replay_loop,
    schedules,
)
from transforms._fusion_names import loop_function_name, outputs_name
from transforms._fusion_params import values_name
from transforms._fusion_plan import NO_STEP_CALL, Plan, plan_fusion
from transforms._fusion_scan import names_bound, names_read
from transforms._fusion_state import ModuleFacts, collect_facts
from transforms.base import TFTransform


class FuseStepLoops(TFTransform):
    CODE = "TFM301"
    DESCRIPTION = "Run Python loops of tf.function step calls as one in-graph loop (tf.range)"
    PHASE = 30
    TRIGGERS = ("function",)  # only loops calling a tf.function step are fused

    def visit_Module(self, node: cst.Module) -> None:
        self.facts: ModuleFacts = collect_facts(node, self.tf_names, self._qualified)
        self.plans: dict[cst.For, Plan] = {}
        self.counts = Counter(names_read(node))
        self.taken = set(self.counts)
        self.loops: list[list[cst.For]] = [[]]  # enclosing loops, per function scope
        self.hoisted: dict[cst.For, list[cst.FunctionDef]] = {}  # outermost loop -> defs placed before it
        self.hoist_to: dict[cst.For, cst.For] = {}  # fused loop -> where its multi-step function goes

    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.loops.append([])

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.loops.pop()
        return updated

    def visit_For(self, node: cst.For) -> None:
        enclosing = list(self.loops[-1])
        self.loops[-1].append(node)
        if not self.facts.steps:
            return
        plan = plan_fusion(node, self.facts.steps, self.facts.state, self.facts.call_problem,
                           self.facts.opaque)
        if plan == NO_STEP_CALL or (isinstance(plan, str) and self._in_graph(node)):
            return  # not a step loop, or already a graph loop (a multi-step function's own)
        problem = plan if isinstance(plan, str) else (self._name_clash(plan) or self._loop_var_problem(plan, node)
                                                      or _outer_problem(plan, node, enclosing) or self._nested_problem())
        if problem:
            self.report(node, f"step loop kept in Python: {problem}", fixed=False, severity="warning")
            return
        self.plans[node] = plan
        self.taken |= {loop_function_name(plan.step.name), outputs_name(plan.step.name)}
        self.hoist_to[node] = enclosing[0] if enclosing else node
        self.hoisted.setdefault(self.hoist_to[node], [])
        self.report(node, f"{plan.step.name}() loop -> one call of {loop_function_name(plan.step.name)}()",
                    fixed=True)

    def _nested_problem(self) -> str | None:
        """A function nested in another is typically a helper called many times (e.g. once per epoch):
        a multi-step function defined in it would be created and traced again at every call."""
        if len(self.loops) > 2:  # the module, the enclosing function, this one
            return "it is in a nested function, where its multi-step function would be traced at every call"
        return None

    def _in_graph(self, loop: cst.For) -> bool:
        iterable = loop.iter.func if isinstance(loop.iter, cst.Call) else loop.iter
        return self.tf_name(iterable) == "tf.range"

    def _name_clash(self, plan: Plan) -> str | None:
        generated = {loop_function_name(plan.step.name), outputs_name(plan.step.name), REPLAY_INDEX,
                     *(values_name(name) for name, _ in plan.scheduled)}
        clash = sorted(generated & self.taken)
        if clash:
            return f"the name `{clash[0]}` it would define is already used"
        inside = set(names_read(plan.call)).union(*(names_read(s) for s in plan.copied))
        clash = sorted(inside & GRAPH_LOCALS)
        return f"the step call reads `{clash[0]}`, a name the graph loop uses" if clash else None

    def _loop_var_problem(self, plan: Plan, loop: cst.For) -> str | None:
        """Without per-step Python work no loop is left to bind the loop variable: it must be unused."""
        name = loop.target.value
        if replay_loop(plan, loop) is None and self.counts[name] > Counter(names_read(loop))[name]:
            return f"no Python work is left in the loop, but `{name}` is used after it"
        return None

    def leave_For(self, original: cst.For, updated: cst.For):
        self.loops[-1].pop()
        gap = [cst.EmptyLine(indent=False)] * (1 if len(self.loops) > 1 else 2)
        plan = self.plans.get(original)
        statements: list[cst.BaseStatement] = [updated]
        if plan is not None:
            self.add_import("tensorflow", asname="tf")
            function = cst.parse_module(fused_function(plan, original, "tf")).body[0]
            self.hoisted[self.hoist_to[original]].append(function)
            before = [cst.parse_statement(line + "\n") for line in schedules(plan, original)]
            call = cst.parse_statement(fused_call(plan, original) + "\n")
            replay = replay_loop(plan, original)
            statements = [*before, call] + ([replay] if replay is not None else [])
            statements[0] = statements[0].with_changes(leading_lines=original.leading_lines)
        functions = self.hoisted.pop(original, [])
        if not functions:
            return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)
        comments = [line for line in statements[0].leading_lines if line.comment is not None]
        functions[0] = functions[0].with_changes(leading_lines=[*gap, *comments])
        functions = [f if i == 0 else f.with_changes(leading_lines=gap) for i, f in enumerate(functions)]
        statements[0] = statements[0].with_changes(leading_lines=gap)
        return cst.FlattenSentinel([*functions, *statements])


def _outer_problem(plan: Plan, loop: cst.For, enclosing: list[cst.For]) -> str | None:
    """The multi-step function is defined before the outermost enclosing loop (traced once): the
    names it reads from outside must not change in those loops."""
    if not enclosing:
        return None
    inside = set(names_read(plan.call)).union(*(names_read(s) for s in plan.copied), names_read(loop.iter))
    outside = inside - {name for name, _ in plan.params} - names_bound(loop.body.body) - {loop.target.value}
    changed = sorted(outside & names_bound([outer.body for outer in enclosing]))
    return f"the enclosing loop changes `{changed[0]}`, which the step loop reads" if changed else None
