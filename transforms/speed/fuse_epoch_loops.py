"""TFM310: run every epoch of a loop around a fused step loop in one graph.

    for epoch in range(EPOCHS):                                   train_step_epochs_outputs = train_step_loop_epochs(EPOCHS, 0, n, x, y)
        losses = []                                               for epoch in range(EPOCHS):
        train_step_outputs = train_step_loop(0, n, x, y)   ->         losses = []
        epoch_loss = compute_loss(x, y)                               train_step_outputs = [None, train_step_epochs_outputs[0][1][epoch]]
        ...  # plain Python on the outputs                            epoch_loss = train_step_epochs_outputs[1][epoch]
                                                                      ...

After TFM301 an epoch loop calls its multi-step function once per epoch; with a few steps per
epoch the fixed cost of that call (about a millisecond on a CPU) is most of the epoch. When every
epoch feeds it the same values (nothing the call reads is bound in the epoch loop) and the rest of
the epoch is plain Python on the outputs, or calls of other step functions fed the same values
every epoch (an evaluation: `loss = compute_loss(x, y)`), the epochs run first, in one call of
`S_loop_epochs` (a `tf.range` over epochs making the same calls in the same order, each output
stacked by epoch), and each epoch then reads its own rows, in the same order as before.

The epoch loop must be `for e in range(n)` (no else, no early exit, `e` never rebound) with one
statement calling the multi-step function and each evaluation a statement of its own, called once;
anything else that reads TensorFlow state or might change the arrays fed to the steps leaves the
loop as it is, with a warning saying why.
"""
from __future__ import annotations

import libcst as cst

from transforms.speed.fusion.epoch_codegen import (
    LOOP_CALL,
    EpochPlan,
    Evaluation,
    epochs_call,
    epochs_function,
    evaluation_row,
    loop_row,
    returned_structure,
)
from transforms.speed.fusion.body import fed_arrays_problem, plain_python_problem
from transforms.speed.fusion.prechecks import may_call_multi_step_in_loop
from transforms.speed.fusion.draw_codegen import is_drawn_chunks
from transforms.speed.fusion.names import (
    LOOP_SUFFIX,
    epochs_function_name,
    epochs_outputs_name,
    outputs_name,
    rows_name,
)
from transforms.speed.fusion.scan import callee_name, calls_in, leaving_statement, names_bound, names_read
from transforms.speed.fusion.state import ModuleFacts, shared_facts
from transforms.common.syntax import Refusal, code, walk
from transforms.base import TFTransform
from transforms.speed.fuse_step_loops import (
    constant_integer,
    defining_scopes,
    is_graph_loop,
    literal_integer,
    reads_outside_rebinding_loops,
)
from transforms.speed.inline_batch_generators import LITERALS

GRAPH_LOCALS = frozenset({"epochs", "epoch", "outputs", "epoch_outputs", "rows", "e"})  # the epochs function's names
GRAPH_PREFIXES = ("epoch_", "evaluation_", "evaluated_", "outputs_", "stacked_")


class FuseEpochLoops(TFTransform):
    CODE = "TFM310"
    DESCRIPTION = "Run the epochs of a loop around a fused step loop in one graph when each feeds it the same arrays"
    PHASE = 31  # after TFM301 wrote the multi-step functions
    TRIGGERS = (LOOP_SUFFIX + "(",)

    @classmethod
    def applies_to(cls, code: str) -> bool:
        return super().applies_to(code) and may_call_multi_step_in_loop(code)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.facts: ModuleFacts = shared_facts(self, node)
        self.multi_step = {f.name.value: f for f in walk(node) if isinstance(f, cst.FunctionDef)
                           and _step_name(f.name.value) in self.facts.steps}
        self.step_defs = {f.name.value: f for f in walk(node) if isinstance(f, cst.FunctionDef)
                          and f.name.value in self.facts.steps}
        self.scopes = defining_scopes(node, set(self.facts.steps) | set(self.multi_step))
        self.taken = {n.value for n in walk(node) if isinstance(n, cst.Name)}
        self.plans: dict[cst.For, EpochPlan] = {}
        for loop in (n for n in walk(node) if isinstance(n, cst.For)):
            self._plan(loop)
        self.defined_after = {plan.function.name.value: plan for plan in self.plans.values()}

    def _plan(self, loop: cst.For) -> None:
        found = [(s, c) for s in loop.body.body for c in calls_in(s) if callee_name(c) in self.multi_step]
        if not any(isinstance(s, cst.SimpleStatementLine) for s, _ in found) or is_graph_loop(loop, self.tf_name) \
                or is_drawn_chunks(loop, self.facts.steps):
            return  # no multi-step call of its own (an outer loop, or the call under an `if`), an epochs
            # function's loop, or the chunks of a step loop drawing its batches ahead (TFM301's own)
        try:
            plan = self._checked(loop, found)
        except Refusal as refusal:
            self.report(refusal.node or loop, f"epoch loop kept in Python: {refusal.message}", fixed=False,
                        severity="warning")
            return
        if plan.function.name.value in {p.function.name.value for p in self.plans.values()}:
            self.report(loop, "epoch loop kept in Python: another epoch loop already runs this multi-step function",
                        fixed=False, severity="warning")
            return
        self.taken |= {plan.epochs_name, plan.outputs_name}
        self.plans[loop] = plan
        evaluated = "".join(f", {e.step.name}()" for e in plan.evaluations)
        self.report(loop, f"epoch loop of {plan.function.name.value}(){evaluated} calls -> one call of "
                          f"{plan.epochs_name}()", fixed=True)

    def _checked(self, loop: cst.For, found) -> EpochPlan:
        statement, call = found[0]
        if len(found) > 1:
            raise Refusal(found[1][1], "the epoch loop calls a multi-step function more than once")
        _check_loop(loop)
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or \
                not _holds_call(statement.body[0], call):
            raise Refusal(statement, "the multi-step call is not a statement of its own")
        if any(a.star or a.keyword for a in call.args):
            raise Refusal(call, "the multi-step call passes keyword or unpacked arguments")
        body, epoch = list(loop.body.body), loop.target.value
        bound = names_bound(body)
        function = self.multi_step[callee_name(call)]
        step = _step_name(function.name.value)
        evaluations = self._evaluations(body, statement, function)
        calls = [call] + [e.statement.body[0].value for e in evaluations]
        changed = sorted((set().union(*(names_read(c) for c in calls)) | set(names_read(loop.iter))) & (bound | {epoch}))
        if changed:
            raise Refusal(call, f"`{changed[0]}`, which the epoch's steps read, changes from epoch to epoch")
        kept = {statement, *(e.statement for e in evaluations)}
        rest = [s for s in body if s not in kept and not _binds(s, rows_name(step))]
        fed = {a.value.value for c in calls for a in c.args if isinstance(a.value, cst.Name)}
        # the steps' outputs are tensors, not state; what the calls are fed replaced feed_dict values
        state = (self.facts.state | (self.facts.opaque - bound)) - {outputs_name(step), rows_name(step)} - fed
        problem = plain_python_problem(rest, state, self.facts.call_problem, self.facts.logs) or \
            fed_arrays_problem(rest, fed)
        if problem:
            raise Refusal(loop, problem.replace("loop body", "epoch loop"))
        assigned = isinstance(statement.body[0], cst.Assign)
        structure = returned_structure(function)
        if assigned and structure is None:
            raise Refusal(function, f"the outputs of {function.name.value}() are not a structure of stacked tensors")
        if not rest and reads_outside_rebinding_loops(self.module, epoch) > 0:
            raise Refusal(loop, f"no Python work is left in the epoch loop, but `{epoch}` is used after it")
        epochs_name, outputs = epochs_function_name(step), epochs_outputs_name(step)
        clash = sorted({epochs_name, outputs} & self.taken)
        if clash:
            raise Refusal(loop, f"the name `{clash[0]}` it would define is already used")
        plan = EpochPlan(function, structure, statement, assigned, bool(rest), epochs_name, outputs,
                         self._epoch_count(loop.iter.args[0].value))
        self._parameters(plan, call, evaluations, body)
        return plan

    def _evaluations(self, body, statement, function: cst.FunctionDef) -> list[Evaluation]:
        """The step functions the epoch loop calls besides the multi-step function, each once, as a
        statement of its own (`E(...)` or `name = E(...)`) fed positional names or literals."""
        found, seen = [], set()
        for line in body:
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
            callee = callee_name(small.value) if isinstance(small, (cst.Expr, cst.Assign)) and \
                isinstance(small.value, cst.Call) else None
            if callee not in self.facts.steps or line is statement:
                continue
            if not _holds_call(small, small.value) or callee in seen:
                raise Refusal(line, f"the epoch loop calls {callee}() more than once or other than as a statement")
            evaluation = self.facts.steps[callee]
            if any(a.star or a.keyword or not isinstance(a.value, (cst.Name, *LITERALS)) for a in small.value.args) \
                    or len(small.value.args) != len(evaluation.params):
                raise Refusal(line, f"{callee}() is not fed every parameter positionally, as names or literals")
            if self.scopes.get(callee) != self.scopes.get(function.name.value) or _nested_outputs(self.step_defs[callee]):
                raise Refusal(line, f"{callee}() is defined elsewhere than {function.name.value}() or returns "
                                    "nested structures")
            seen.add(callee)
            found.append(Evaluation(evaluation, line, isinstance(small, cst.Assign), []))
        return found

    def _parameters(self, plan: EpochPlan, call: cst.Call, evaluations: list[Evaluation], body) -> None:
        """The epochs function's parameters (S_loop's, then the other names the evaluations are fed)
        and the arguments of its call; the calls in the loop's order."""
        signature = _signature(plan.function)
        names = [p.name.value for p in plan.function.params.params]
        plan.params = [(name, code(spec)) for name, spec in zip(names, signature)]
        plan.arguments = [code(a.value) for a in call.args]
        for evaluation in evaluations:
            small = evaluation.statement.body[0]
            for arg, spec in zip(small.value.args, evaluation.step.specs):
                evaluation.arguments.append(self._parameter(plan, arg.value, code(spec), evaluation.statement))
        clash = sorted(name for name, _ in plan.params if name in GRAPH_LOCALS or name.startswith(GRAPH_PREFIXES))
        if clash:
            raise Refusal(plan.function, f"the epochs function would have a parameter `{clash[0]}`, a name it uses")
        order = {id(plan.statement): LOOP_CALL, **{id(e.statement): e for e in evaluations}}
        plan.order = [order[id(line)] for line in body if id(line) in order]

    def _parameter(self, plan: EpochPlan, value: cst.BaseExpression, spec: str, line) -> str:
        if not isinstance(value, cst.Name):
            return code(value)
        if value.value in plan.arguments:  # fed to S_loop too: the same tensor, so the same signature
            name, known = plan.params[plan.arguments.index(value.value)]
            if known != spec:
                raise Refusal(line, f"`{value.value}` is fed to steps with different signatures")
            return name
        plan.params.append((value.value, spec))
        plan.arguments.append(value.value)
        return value.value

    def _epoch_count(self, count: cst.BaseExpression) -> str:
        value = literal_integer(count, lambda name: constant_integer(self.module, name))
        return code(count) if value is not None and value >= 0 else f"max({code(count)}, 0)"

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        plan = self.defined_after.get(original.name.value)
        if plan is None or original is not plan.function:
            return updated
        self.add_import("tensorflow", asname="tf")
        epochs = cst.parse_module(epochs_function(plan, "tf")).body[0]
        gap = [cst.EmptyLine(indent=False)] * (2 if original in self.module.body else 1)
        return cst.FlattenSentinel([updated, epochs.with_changes(leading_lines=gap)])

    def leave_For(self, original: cst.For, updated: cst.For):
        plan = self.plans.get(original)
        if plan is None:
            return updated
        first = cst.parse_statement(epochs_call(plan) + "\n").with_changes(leading_lines=original.leading_lines)
        if not plan.rest:
            return first
        epoch, body = original.target.value, list(updated.body.body)
        rows = {id(plan.statement): loop_row(plan, epoch) if plan.assigned else None,
                **{id(e.statement): evaluation_row(plan, e, epoch) if e.assigned else None for e in plan.evaluations}}
        kept = []
        for before, after in zip(original.body.body, body):
            if id(before) not in rows:
                kept.append(after)
            elif rows[id(before)] is not None:
                target = code(before.body[0].targets[0].target)
                kept.append(after.with_changes(body=[cst.parse_statement(f"{target} = {rows[id(before)]}\n").body[0]]))
        loop = updated.with_changes(body=updated.body.with_changes(body=kept), leading_lines=[])
        return cst.FlattenSentinel([first, loop])


def _check_loop(loop: cst.For) -> None:
    if loop.orelse is not None or loop.asynchronous is not None or not isinstance(loop.target, cst.Name):
        raise Refusal(loop, "the epoch loop has an else clause, is async or unpacks its target")
    if not _single_range(loop.iter):
        raise Refusal(loop, "the epoch loop does not run over range(n)")
    leaving = leaving_statement(list(loop.body.body))
    if leaving is not None:
        raise Refusal(leaving, "the epoch loop may leave early; the epochs could not all run first")
    if loop.target.value in names_bound(list(loop.body.body)):
        raise Refusal(loop, f"the epoch loop rebinds `{loop.target.value}`")


def _signature(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    decorator = next(d.decorator for d in function.decorators if isinstance(d.decorator, cst.Call))
    signature = next(a.value for a in decorator.args if a.keyword and a.keyword.value == "input_signature")
    return [e.value for e in signature.elements]


def _nested_outputs(function: cst.FunctionDef) -> bool:
    """Whether the step function returns containers inside its list/tuple/dict of outputs."""
    last = function.body.body[-1]
    value = last.body[0].value if isinstance(last, cst.SimpleStatementLine) and \
        isinstance(last.body[0], cst.Return) else None
    items = [e.value for e in getattr(value, "elements", [])] if isinstance(value, (cst.List, cst.Tuple, cst.Dict)) else []
    return any(isinstance(item, (cst.List, cst.Tuple, cst.Dict, cst.Set)) for item in items)


def _step_name(name: str) -> str | None:
    return name[: -len(LOOP_SUFFIX)] if name.endswith(LOOP_SUFFIX) else None




def _single_range(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"
            and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star)


def _holds_call(small: cst.BaseSmallStatement, call: cst.Call) -> bool:
    if isinstance(small, cst.Expr):
        return small.value is call
    return (isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name))


def _binds(statement: cst.BaseStatement, name: str) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
        isinstance(statement.body[0], cst.Assign) and name in names_bound([statement])
