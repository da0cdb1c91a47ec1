"""TFM309: a per-epoch training helper written out in the epoch loop that calls it.

    def train_epoch(points, targets):                     for epoch in range(EPOCHS):
        losses = []                                           # One pass over the data in minibatches.
        for start in range(0, len(points), BATCH):   ->       losses = []
            _, loss = train_step(points[...], ...)            for start in range(0, len(train_x), BATCH):
            losses.append(loss.numpy())                           _, loss = train_step(train_x[...], ...)
        return float(np.mean(losses))                             losses.append(loss.numpy())
                                                              mean_loss = float(np.mean(losses))
    for epoch in range(EPOCHS):                               print(mean_loss)
        mean_loss = train_epoch(train_x, train_y)
        print(mean_loss)

Behind a helper called once per epoch, TFM301 can fuse only the steps of one epoch: one call of
the multi-step function per epoch, whose fixed cost is most of a small model's epoch on a CPU.
Written out in the epoch loop, the steps of every epoch can run in one graph (TFM310) when each
epoch feeds them the same arrays.

Only a helper of the loop's own scope, called nowhere else, with plain parameters (never rebound in
it), whose body runs a step loop and otherwise does plain Python, and which returns only at its end;
the epoch loop must be `for ... in range(...)` doing plain Python besides the call. Arguments that
are names or literals replace the parameters; the helper's own names that the scope already uses
get fresh names. The helper's definition goes, its docstring's first line stays as a comment.
"""
from __future__ import annotations

import libcst as cst

from transforms.speed.fusion.body import plain_python_problem
from transforms.speed.fusion.prechecks import may_call_epoch_helper
from transforms.speed.fusion.scan import callee_name, calls_in, names_bound
from transforms.speed.fusion.state import TF_FUNCTION_IDENTIFIERS, ModuleFacts, shared_facts
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.common.syntax import LocalRenamer, Refusal, code, is_docstring, walk, scan
from transforms.base import TFTransform
from transforms.speed.inline_batch_generators import LITERALS
from transforms.speed.vectorize_dataset_maps import plain_parameters

EXITS = (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Await)


class InlineEpochHelpers(TFTransform):
    CODE = "TFM309"
    DESCRIPTION = "Per-epoch training helpers written out in their epoch loop, so its epochs can run in one graph"
    SAFETY = "safe"
    PHASE = 29  # after TFM201 made the steps tf.functions, before TFM301 fuses the loops
    TRIGGERS = ("function",)
    IDENTIFIERS = TF_FUNCTION_IDENTIFIERS

    @classmethod
    def applies_to(cls, code: str) -> bool:
        return super().applies_to(code) and may_call_epoch_helper(code)

    def visit_Module(self, node: cst.Module) -> None:
        self.facts: ModuleFacts = shared_facts(self, node)
        self.names = NameAllocator({n.value for n in walk(node) if isinstance(n, cst.Name)})
        self.removed: set[cst.FunctionDef] = set()
        self.inlined: dict[cst.SimpleStatementLine, list[cst.BaseStatement]] = {}
        if self.facts.steps:
            self._scope(node)

    def _scope(self, scope: cst.Module | cst.FunctionDef) -> None:
        """Plan the inlining of the helpers defined directly in `scope`, then look into its functions."""
        body = scope.body if isinstance(scope, cst.Module) else scope.body.body
        helpers = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef) and self._runs_steps(s)}
        for loop in _loops(scope):
            for statement in loop.body.body:
                found = _called_helper(statement, helpers)
                if found is not None and body.index(found[0]) < body.index(_top_statement(body, loop)):
                    self._plan(scope, *found, statement, loop)
        for function in _own_functions(scope):
            self._scope(function)

    def _runs_steps(self, function: cst.FunctionDef) -> bool:
        return not function.decorators and any(self._is_step_loop(n) for n in walk(function.body))

    def _is_step_loop(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.For) and any(callee_name(c) in self.facts.steps for c in calls_in(node))

    def _plan(self, scope, helper: cst.FunctionDef, call: cst.Call, statement: cst.SimpleStatementLine,
              loop: cst.For) -> None:
        name = helper.name.value
        try:
            self.inlined[statement] = self._inlined(scope, helper, call, statement, loop)
        except Refusal as refusal:
            self.report(refusal.node or statement, f"helper `{name}` kept: {refusal.message}", fixed=False,
                        severity="info")
            return
        self.removed.add(helper)
        self.report(statement, f"per-epoch helper {name}() written out in its epoch loop", fixed=True)

    def _inlined(self, scope, helper: cst.FunctionDef, call: cst.Call, statement: cst.SimpleStatementLine,
                 loop: cst.For):
        small = statement.body[0]
        whole = isinstance(small, (cst.Expr, cst.Assign)) and small.value is call  # not inside an expression
        uses = sum(isinstance(n, cst.Name) and n.value == helper.name.value for n in walk(scope))
        if uses != 2:  # the definition and this call
            raise Refusal(helper, "it is used more than once")
        if not (isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name)
                and loop.iter.func.value == "range"):
            raise Refusal(loop, "the loop calling it does not run over range(...)")
        other = [s for s in loop.body.body if s is not statement]
        params = plain_parameters(helper.params, helper)
        body, returned = _body_and_result(helper)
        problem = plain_python_problem(other, self.facts.state, self.facts.call_problem, self.facts.logs) or \
            plain_python_problem([s for s in helper.body.body if not self._is_step_loop(s)],
                                 self.facts.state, self.facts.call_problem, self.facts.logs)
        if problem:
            raise Refusal(statement, f"its epoch does more than plain Python besides the steps: {problem}")
        if len(call.args) != len(params) or any(a.keyword or a.star for a in call.args):
            raise Refusal(call, "the call does not pass every parameter positionally")
        if any(not isinstance(a.value, (cst.Name, *LITERALS)) for a in call.args):
            raise Refusal(call, "an argument is not a name or a literal")
        rebound = sorted(names_bound([helper.body]) & set(params))
        if rebound:
            raise Refusal(helper, f"it rebinds its parameter `{rebound[0]}`")
        if (not whole or isinstance(small, cst.Assign)) and returned is None:
            raise Refusal(helper, "its value is used but it returns nothing")
        return self._written(scope, helper, call, statement, params, body, returned)

    def _written(self, scope, helper, call, statement, params, body, returned) -> list[cst.BaseStatement]:
        """The helper's statements in place of `statement`, parameters replaced by the arguments,
        clashing locals renamed, the value it returns bound where the call was."""
        small = statement.body[0]
        whole = isinstance(small, (cst.Expr, cst.Assign)) and small.value is call
        used = _names_outside(scope, helper)
        renames: dict[str, str | cst.BaseExpression] = {
            local: self.names.fresh(local) if local in used else local
            for local in sorted(names_bound([helper.body]) - set(params))}
        renames.update({param: arg.value for param, arg in zip(params, call.args)})
        renamer = LocalRenamer(renames)
        written = [s.visit(renamer) for s in body]
        if returned is not None and whole:
            value = returned.visit(renamer)
            line = small.with_changes(value=value) if isinstance(small, cst.Assign) else cst.Expr(value)
            written.append(cst.SimpleStatementLine([line]))
        elif returned is not None:  # the value goes where the call was
            result = self.names.fresh(helper.name.value + "_result")
            written.append(cst.parse_statement(f"{result} = {code(returned.visit(renamer))}\n"))
            written.append(statement.deep_replace(call, cst.Name(result)).with_changes(leading_lines=[]))
        comment = _docstring_comment(helper)
        if written:
            written[0] = written[0].with_changes(leading_lines=[*statement.leading_lines, *comment])
        return written

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        return cst.RemovalSentinel.REMOVE if original in self.removed else updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        written = self.inlined.get(original)
        return updated if written is None else cst.FlattenSentinel(written)


def _body_and_result(helper: cst.FunctionDef) -> tuple[list[cst.BaseStatement], cst.BaseExpression | None]:
    """The helper's statements (docstring left out) and the value it returns at its end, if any."""
    body = list(helper.body.body)
    if body and is_docstring(body[0]):
        body = body[1:]
    returned = None
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return):
        returned = last.body[0].value
        body = body[:-1]
    inner = [n for s in body for n in walk(s) if isinstance(n, EXITS)]
    if inner:
        raise Refusal(inner[0], "it returns before its end, yields, or defines functions or scopes of its own")
    if returned is not None and any(isinstance(n, EXITS) for n in walk(returned)):
        raise Refusal(returned, "its return value defines a function or waits")
    return body, returned


def _docstring_comment(helper: cst.FunctionDef) -> list[cst.EmptyLine]:
    first = helper.body.body[0] if helper.body.body else None
    if first is None or not is_docstring(first):
        return []
    text = first.body[0].value.evaluated_value if isinstance(first.body[0].value, cst.SimpleString) else ""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return [cst.EmptyLine(comment=cst.Comment(f"# {line}"))] if line else []


def _called_helper(statement: cst.BaseStatement, helpers: dict[str, cst.FunctionDef]):
    """(the helper, its call) where `statement` calls one of `helpers` once, as the statement's whole
    value (`helper(...)`, `name = helper(...)`) or inside it with nothing evaluated before the call
    that the call could change: only names, literals and operators, and the calls enclosing it."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    calls = [c for c in walk(statement) if isinstance(c, cst.Call)]
    found = [c for c in calls if isinstance(c.func, cst.Name) and c.func.value in helpers]
    if len(found) != 1:
        return None
    call = found[0]
    enclosing = [c for c in calls if c is not call and any(n is call for n in walk(c))]
    if len(enclosing) != len(calls) - 1 or not all(_dotted(c.func) for c in enclosing):
        return None
    others = [n for n in walk(statement) if isinstance(n, (cst.Subscript, cst.Attribute, cst.Await, cst.Yield,
                                                             cst.NamedExpr, cst.Lambda))
              and not any(n is m for m in walk(call)) and not any(n is c.func for c in enclosing)]
    return (helpers[call.func.value], call) if not others else None


def _dotted(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) or (isinstance(node, cst.Attribute) and _dotted(node.value))


def _loops(scope: cst.CSTNode) -> list[cst.For]:
    """The `for` loops of `scope`'s own body (not those of the functions it defines)."""
    found: list[cst.For] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is scope

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_For(self, node: cst.For) -> None:
            found.append(node)

    scan(scope, Finder())
    return found


def _names_outside(scope: cst.CSTNode, helper: cst.FunctionDef) -> set[str]:
    """The names `scope` uses outside the definition of `helper`."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is not helper

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    scan(scope, Finder())
    return found


def _own_functions(scope: cst.CSTNode) -> list[cst.FunctionDef]:
    """The functions defined in `scope`'s own body (not inside another function or a class)."""
    found: list[cst.FunctionDef] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            if node is scope:
                return True
            found.append(node)
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    scan(scope, Finder())
    return found


def _top_statement(body, node: cst.CSTNode) -> cst.BaseStatement:
    """The statement of `body` that holds `node`."""
    return next(s for s in body if any(n is node for n in walk(s)))
