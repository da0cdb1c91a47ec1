"""TFM308: a minibatch generator written out in the loop that consumes it.

    def iterate_minibatches(x, y, size, rng):                     order = rng.permutation(len(train_x))
        order = rng.permutation(len(x))                           for start in range(0, len(train_x), BATCH):
        for start in range(0, len(x), size):              ->          rows = order[start:start + BATCH]
            rows = order[start:start + size]                          batch_x, batch_y = train_x[rows], train_y[rows]
            yield x[rows], y[rows]                                    _, batch_loss = train_step(batch_x, batch_y)

    for batch_x, batch_y in iterate_minibatches(train_x, train_y, BATCH, rng):
        _, batch_loss = train_step(batch_x, batch_y)

Hand-rolled input code hides the slicing that TFM301 can run in one graph behind a generator; a
step called once per batch from Python costs about twice a small `Session.run` on a CPU. Written
out, the loop slices (or gathers through a permutation) the arrays itself, in the same order, with
the same random draws at the same moments: the generator's statements before its loop ran at the
first batch, which is where they now run, and each batch's statements run just before the step.

Only a generator of this module of that shape is written out: plain parameters (never rebound in
it), assignments, then one `for` loop whose last statement is its only `yield`, nothing after it.
Arguments that are names or literals replace the parameters; any other argument is bound once
before the loop, under a fresh name. The generator's own names that the consuming function (or the
module) already uses get fresh names. The generator stays defined for its other callers.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.speed.fusion.scan import names_bound
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.common.syntax import LocalRenamer, Refusal, is_docstring, walk
from transforms.base import TFTransform
from transforms.speed.vectorize_dataset_maps import plain_parameters

LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


class InlineBatchGenerators(TFTransform):
    CODE = "TFM308"
    DESCRIPTION = "Minibatch generators written out in the loops consuming them, so the step loop can be fused"
    SAFETY = "safe"
    PHASE = 28  # after TFM201 made the steps tf.functions, before TFM301 fuses the loops
    TRIGGERS = ("yield",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.generators = {f.name.value: f for f in node.body if isinstance(f, cst.FunctionDef) and _yields(f)}
        self.names = NameAllocator({n.value for n in walk(node) if isinstance(n, cst.Name)})
        self.scopes: list[cst.CSTNode] = [node]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.scopes.pop()
        return updated

    def leave_For(self, original: cst.For, updated: cst.For):
        call = original.iter
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in self.generators):
            return updated
        generator = self.generators[call.func.value]
        if any(scope is generator for scope in self.scopes):
            return updated
        try:
            statements = self._inlined(generator, call, updated)
        except Refusal as refusal:
            self.report(refusal.node or original, f"generator `{generator.name.value}` kept: {refusal.message}",
                        fixed=False, severity="info")
            return updated
        self.report(original, f"generator {generator.name.value}() written out in the loop consuming it", fixed=True)
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(statements)

    def _inlined(self, generator: cst.FunctionDef, call: cst.Call, loop: cst.For) -> list[cst.BaseStatement]:
        if loop.orelse is not None or loop.asynchronous:
            raise Refusal(loop, "the consuming loop has an else clause or is async")
        pre, inner = _shape(generator)
        params = plain_parameters(generator.params, generator)
        if len(call.args) != len(params) or any(a.keyword or a.star for a in call.args):
            raise Refusal(call, "the call does not pass every parameter positionally")
        bound = names_bound([generator.body]) - set(params)
        rebound = names_bound([generator.body]) & set(params)
        if rebound:
            raise Refusal(generator, f"the generator rebinds its parameter `{sorted(rebound)[0]}`")
        used = {n.value for n in walk(self.scopes[-1]) if isinstance(n, cst.Name)}
        renames = {name: self.names.fresh(name) if name in used else name for name in sorted(bound)}
        bindings: list[cst.BaseStatement] = []
        for param, arg in zip(params, call.args):
            if isinstance(arg.value, (cst.Name, *LITERALS)):
                renames[param] = arg.value
            else:
                fresh = self.names.fresh(param) if param in used else param
                renames[param] = fresh
                bindings.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(fresh))], arg.value)]))
        renamer = LocalRenamer(renames)
        yielded: cst.Expr = inner.body.body[-1].body[0]
        batch = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(loop.target)], yielded.value.value.visit(renamer))])
        body = [s.visit(renamer) for s in inner.body.body[:-1]] + [batch, *loop.body.body]
        written = inner.visit(renamer).with_changes(body=inner.body.with_changes(body=body), leading_lines=[])
        return [*bindings, *(s.visit(renamer) for s in pre), written]


def _yields(function: cst.FunctionDef) -> bool:
    return not function.decorators and any(isinstance(n, cst.Yield) for n in walk(function.body))


def _shape(generator: cst.FunctionDef) -> tuple[list[cst.SimpleStatementLine], cst.For]:
    """(the assignments before its loop, the loop) of a generator written as this transform expects."""
    body = list(generator.body.body)
    if body and is_docstring(body[0]):
        body = body[1:]
    *pre, inner = body or [None]
    if not isinstance(inner, cst.For) or inner.orelse is not None or inner.asynchronous:
        raise Refusal(generator, "the generator does not end with a plain `for` loop")
    if not all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Assign) for x in s.body) for s in pre):
        raise Refusal(generator, "the generator does more than assign names before its loop")
    last = inner.body.body[-1] if inner.body.body else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Expr)
            and isinstance(last.body[0].value, cst.Yield) and last.body[0].value.value is not None
            and not isinstance(last.body[0].value.value, cst.From)):
        raise Refusal(inner, "the generator's loop does not end with its `yield`")
    yields = [n for n in walk(generator.body) if isinstance(n, cst.Yield)]
    exits = [n for n in walk(generator.body) if isinstance(n, (cst.Return, cst.Break, cst.Continue, cst.Global,
                                                              cst.Nonlocal, cst.FunctionDef, cst.Lambda))]
    if len(yields) != 1 or exits:
        raise Refusal(exits[0] if exits else generator, "the generator yields more than once or leaves its loop early")
    return pre, inner
