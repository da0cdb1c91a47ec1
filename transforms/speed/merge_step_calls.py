"""TFM311: consecutive calls of step functions made one call of a function that runs them in turn.

    D_loss = D_step(X_mb, sample_Z(mb, dim))            D_loss, G_loss = D_and_G_step(X_mb, sample_Z(mb, dim),
    G_loss = G_step(sample_Z(mb, dim))          ->                                   sample_Z(mb, dim))

                                                    @tf.function(input_signature=[<D's specs>, <G's specs>], ...)
                                                    def D_and_G_step(X, Z, Z_1):
                                                        return D_step.python_function(X, Z), G_step.python_function(Z_1)

A tf.function call costs about twice a TF1 `Session.run` in fixed dispatch (benchmarks/step_overhead.py),
so a GAN iteration training its discriminator, then its generator, with two calls per iteration is slower
than the TF1 loop it replaces unless the loop is fused (TFM301). One call running both steps pays that
cost once. The steps' Python functions are traced into the one graph, in the order of the calls, so
automatic control dependencies order each variable's reads and updates as the separate calls did: the
second step sees the first one's updates. The merged function returns each step's outputs, in order.

In the merged call every argument is evaluated before the first step runs, so an argument of a later
call must not read a name an earlier call's statement binds, nor TensorFlow state (a name bound to a
TensorFlow object, a call that may read one): it would see the values from before the earlier step.
Other names are read as they were: a step's arguments stand for TF1 feed values, which TF1 took only
as NumPy or Python data, so running a step cannot change them.
The statements must follow one another, each `target = step(...)` or `step(...)`, with the step
functions defined at module level before the code calling them, each fed every parameter positionally,
each decorated by its tf.function alone, and with the same tf.function options apart from the input
signature.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from transforms.base import TFTransform
from transforms.common.syntax import code, module_code, python_ast, walk
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.speed.fusion.names import merged_function_name
from transforms.speed.fusion.scan import callee_name, calls_in, names_bound, names_read
from transforms.speed.fusion.state import TF_FUNCTION_IDENTIFIERS, ModuleFacts, shared_facts


@dataclass
class StepCall:
    statement: cst.SimpleStatementLine
    call: cst.Call
    target: cst.BaseAssignTargetExpression | None  # None for a call made as an expression statement
    function: cst.FunctionDef


@dataclass
class Merge:
    calls: list[StepCall]
    name: str
    function: cst.FunctionDef  # the merged function's definition
    statement: cst.SimpleStatementLine  # the one call replacing the statements


class MergeStepCalls(TFTransform):
    CODE = "TFM311"
    DESCRIPTION = "Consecutive calls of step functions -> one call of a tf.function running them in turn"
    SAFETY = "safe"
    PHASE = 35  # after the loop fusions (TFM301, TFM310), which run whole loops in one call
    TRIGGERS = ("function",)
    IDENTIFIERS = TF_FUNCTION_IDENTIFIERS

    def visit_Module(self, node: cst.Module) -> bool:
        """Plan the merges; the pass goes into the module only when there is one."""
        self.module = node
        self.merges: dict[cst.SimpleStatementLine, Merge] = {}
        self.removed: set[cst.SimpleStatementLine] = set()
        self.defined_after: dict[str, list[Merge]] = {}
        self._taken: NameAllocator | None = None
        # First by syntax alone (functions with an input signature), so that the module's facts are
        # gathered only where two such calls follow one another.
        self.definitions = {s.name.value: (index, s) for index, s in enumerate(node.body)
                            if isinstance(s, cst.FunctionDef) and _decorator(s) is not None}
        if not _calls_may_follow(python_ast(module_code(node)), set(self.definitions)):
            return False
        blocks = [(top, statements) for top, statements in _blocks(node) if self._calls_follow(statements)]
        self.facts: ModuleFacts = shared_facts(self, node)
        self.definitions = {name: found for name, found in self.definitions.items() if name in self.facts.steps}
        for top, statements in blocks:
            if not (isinstance(top, cst.FunctionDef) and top.name.value in self.facts.state):
                self._plan_block(statements)  # not a tf.function's own body, whose calls are traced
        return bool(self.merges)

    def _calls_follow(self, statements: list[tuple[int, cst.BaseStatement]]) -> bool:
        calls = [self._step_call(statement, position) is not None for position, statement in statements]
        return any(a and b for a, b in zip(calls, calls[1:]))

    def _plan_block(self, statements: list[tuple[int, cst.BaseStatement]]) -> None:
        """Merge the runs of consecutive step calls in one block. Each statement comes with the index of
        the module-level statement holding it, which must come after the step functions' definitions."""
        group: list[StepCall] = []
        for position, statement in statements:
            found = self._step_call(statement, position)
            problem = self._joining_problem(group, found) if group and found else None
            if found is not None and problem is None:
                group.append(found)
                continue
            self._merge(group)
            if problem is not None:
                self.report(statement, f"step calls kept apart: {problem}", fixed=False, severity="info")
            group = [found] if found is not None else []
        self._merge(group)

    def _step_call(self, statement: cst.BaseStatement, position: int) -> StepCall | None:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        small = statement.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call, target = small.value, None
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call):
            call, target = small.value, small.targets[0].target
        else:
            return None
        index, function = self.definitions.get(callee_name(call), (None, None))
        if function is None or index >= position or _decorator(function) is None \
                or any(a.star or a.keyword for a in call.args) or len(call.args) != len(function.params.params):
            return None
        return StepCall(statement, call, target, function)

    def _joining_problem(self, group: list[StepCall], later: StepCall) -> str | None:
        """Why `later` cannot run in the same call as the steps of `group`, or None."""
        name = later.function.name.value
        if any(c.function is later.function for c in group):
            return f"{name}() is called twice in a row"
        if _options(later.function) != _options(group[0].function):
            return f"{name}() has other tf.function options than {group[0].function.name.value}()"
        bound = set().union(*(_bound_by(c) for c in group))
        read = set().union(*(names_read(a.value) for a in later.call.args))
        earlier = sorted(read & bound)
        if earlier:
            return f"an argument of {name}() reads `{earlier[0]}`, which an earlier step's call binds"
        # Only names bound to TensorFlow objects could change when the earlier steps run: an argument
        # stands for a TF1 feed value, which TF1 took only as NumPy or Python data, never a graph object.
        state = sorted(read & self.facts.state)
        if state:
            return f"an argument of {name}() reads `{state[0]}`, which may hold TensorFlow state"
        for arg in later.call.args:
            problem = next(filter(None, (self.facts.call_problem(c) for c in calls_in(arg.value))), None)
            if problem:
                return f"an argument of {name}() {problem.replace('loop body ', '')}"
        return None

    def _merge(self, group: list[StepCall]) -> None:
        if len(group) < 2:
            return
        steps = [c.function.name.value for c in group]
        name = self._names().fresh(merged_function_name(steps))
        merge = Merge(group, name, self._merged_function(group, name), self._merged_call(group, name))
        self.merges[group[0].statement] = merge
        self.removed.update(c.statement for c in group[1:])
        last = max(steps, key=lambda step: self.definitions[step][0])
        self.defined_after.setdefault(last, []).append(merge)
        calls = ", ".join(f"{step}()" for step in steps)
        self.report(group[0].statement, f"step calls {calls} -> one call of {name}()", fixed=True)

    def _merged_function(self, group: list[StepCall], name: str) -> cst.FunctionDef:
        # Its body reads only the step functions' names: the parameters must stay distinct from those.
        locals_ = NameAllocator({c.function.name.value for c in group})
        params, specs, calls = [], [], []
        for step in group:
            facts = self.facts.steps[step.function.name.value]
            own = [locals_.fresh(param) for param in facts.params]
            params += own
            specs += [f"    {code(spec)},\n" for spec in facts.specs]
            calls.append(f"{step.function.name.value}.python_function({', '.join(own)})")
        decorator = _decorator(group[0].function)
        options = "".join(f", {code(a)}" for a in decorator.args if not _is_signature(a))
        names = [c.function.name.value for c in group]
        steps = f"{', '.join(names[:-1])} then {names[-1]}"
        source = (f"@{code(decorator.func)}(input_signature=[\n{''.join(specs)}]{options})\n"
                  f"def {name}({', '.join(params)}):\n"
                  f'    """{steps}, traced into one graph: one call instead of {len(group)}."""\n'
                  f"    return {', '.join(calls)}\n")
        return cst.parse_module(source).body[0]

    def _merged_call(self, group: list[StepCall], name: str) -> cst.SimpleStatementLine:
        arguments = ", ".join(code(a.value) for c in group for a in c.call.args)
        call = f"{name}({arguments})"
        if all(c.target is None for c in group):
            line = call
        else:
            targets = [code(c.target) if c.target is not None else self._discarded(c) for c in group]
            line = f"{', '.join(_element(t) for t in targets)} = {call}"
        first = group[0].statement
        comments = [empty for c in group[1:] for empty in c.statement.leading_lines if empty.comment is not None]
        comments += [cst.EmptyLine(comment=c.statement.trailing_whitespace.comment)
                      for c in group[1:] if c.statement.trailing_whitespace.comment is not None]
        return cst.parse_statement(line + "\n").with_changes(
            leading_lines=[*first.leading_lines, *comments], trailing_whitespace=first.trailing_whitespace)

    def _discarded(self, step_call: StepCall) -> str:
        """The target standing for a step call whose outputs the program did not keep."""
        if not _underscore_read(self.module):
            return "_"
        return self._names().fresh(step_call.function.name.value + "_outputs")

    def _names(self) -> NameAllocator:
        if self._taken is None:
            self._taken = NameAllocator({n.value for n in walk(self.module) if isinstance(n, cst.Name)})
        return self._taken

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        merges = self.defined_after.get(original.name.value)
        if not merges or original is not self.definitions[original.name.value][1]:
            return updated
        gap = [cst.EmptyLine(indent=False)] * 2
        return cst.FlattenSentinel([updated, *(m.function.with_changes(leading_lines=gap) for m in merges)])

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if original in self.removed:
            return cst.RemovalSentinel.REMOVE
        merge = self.merges.get(original)
        return updated if merge is None else merge.statement


def _calls_may_follow(tree: ast.Module | None, functions: set[str]) -> bool:
    """Whether two statements calling `functions` follow one another somewhere in `tree` (CPython's
    parse: a cheap first look, true where the module's own blocks may hold a merge)."""
    def calls(statement: ast.stmt) -> bool:
        value = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in functions

    if tree is None or len(functions) < 2:
        return tree is None and len(functions) >= 2
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for field in (body, getattr(node, "orelse", None), getattr(node, "finalbody", None)):
            if isinstance(field, list) and any(calls(a) and calls(b) for a, b in zip(field, field[1:])):
                return True
    return False


def _blocks(module: cst.Module):
    """(the module-level statement holding it or None, its statements each with the index of that
    statement) for the module's body and every indented block in it."""
    yield None, list(enumerate(module.body))
    for index, statement in enumerate(module.body):
        for block in (n for n in walk(statement) if isinstance(n, cst.IndentedBlock)):
            yield statement, [(index, s) for s in block.body]


def _decorator(function: cst.FunctionDef) -> cst.Call | None:
    """The step function's `tf.function(input_signature=...)` decorator; None for a step without one
    (a step reading a dataset iterator, with no parameters) or with other decorators too (the name
    would not be bound to the tf.function, whose `python_function` the merged function calls)."""
    if len(function.decorators) != 1:
        return None
    decorator = function.decorators[0].decorator
    signed = isinstance(decorator, cst.Call) and any(_is_signature(a) for a in decorator.args)
    return decorator if signed else None


def _is_signature(arg: cst.Arg) -> bool:
    return arg.keyword is not None and arg.keyword.value == "input_signature"


def _options(function: cst.FunctionDef) -> tuple[str, ...]:
    """How the step spells tf.function, and its options besides the input signature."""
    decorator = _decorator(function)
    return (code(decorator.func), *(code(a) for a in decorator.args if not _is_signature(a)))


def _bound_by(step_call: StepCall) -> set[str]:
    """Names the statement binds, and the base names of attribute or subscript targets it writes."""
    if step_call.target is None:
        return set()
    found = names_bound([step_call.statement])
    for node in walk(step_call.target):
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            found.update(names_read(node.value))
    return found


def _element(target: str) -> str:
    """A target as an element of the tuple of targets: a tuple target keeps its own parentheses."""
    return f"({target})" if "," in target and not target.startswith(("(", "[")) else target


def _underscore_read(module: cst.Module) -> bool:
    """Whether `_` is read anywhere: whether it is other than a throwaway target."""
    targets = set()
    for node in walk(module):
        if isinstance(node, (cst.AssignTarget, cst.For, cst.CompFor)):
            targets.update(id(n) for n in walk(node.target) if isinstance(n, cst.Name))
    return any(isinstance(n, cst.Name) and n.value == "_" and id(n) not in targets for n in walk(module))
