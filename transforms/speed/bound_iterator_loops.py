"""TFM305: a loop that runs a step until its dataset runs out -> a loop over the dataset's length.

    dataset = ....batch(BATCH).repeat(EPOCHS)
    iterator = iter(dataset)
    while True:                                           batch_count = len(dataset)
        try:                                              for batch_number in range(batch_count):
            _, loss_value = train_step()             ->      _, loss_value = train_step()
        except tf.errors.OutOfRangeError:                     losses.append(float(loss_value))
            break
        losses.append(float(loss_value))

TF1 programs read a finite pipeline with `sess.run` until `OutOfRangeError`; after TFM201 the
session call is a `tf.function` that reads the iterator. Written as a loop over the number of batches,
it is a loop TFM301 can run in one graph: the exception cannot be caught inside a graph, and a
Python `while` gives no step count. The count is the dataset's length, exact when:

- the iterator is `iter(dataset)`, made once, before the loop, after every binding of `dataset`;
- `dataset` is built from `tf.data.Dataset.from_tensor_slices` / `from_tensors` / `range` by steps
  that keep a known, finite length (`map`, `shuffle`, `batch`, `repeat(<int constant>)`, ...);
- the iterator is read only in the step function, once per call, not under a condition or loop; that
  function is called only in the `try` (first statement), so each pass of the loop reads one batch;
- the handler catches only `tf.errors.OutOfRangeError` and ends with `break`; nothing else leaves
  the loop (`break`, `continue`, `return` elsewhere are refused). Statements before the `break` run
  once after the loop, as they ran once at the end.

Anything else is left as it is, with the reason.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.graph.layers.keras_layers import NameAllocator
from transforms.graph.rnn.sequence_steps import module_integer
from transforms.common.syntax import Refusal, walk
from transforms.base import TFTransform

SOURCES = frozenset({"tf.data.Dataset.from_tensor_slices", "tf.data.Dataset.from_tensors",
                     "tf.data.Dataset.range"})
# Dataset methods whose result has a known, finite length when their input has one (`repeat` needs a count).
LENGTH_KEEPING = frozenset({"map", "shuffle", "batch", "padded_batch", "prefetch", "cache", "take", "skip",
                            "repeat", "enumerate"})
EXITS = (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.Raise)


class BoundIteratorLoops(TFTransform):
    CODE = "TFM305"
    DESCRIPTION = "Loops running a step until its dataset raises OutOfRangeError -> for loops over len(dataset)"
    SAFETY = "safe"
    PHASE = 25  # after TFM201 made the session runs step functions, before TFM301 fuses the loops
    TRIGGERS = ("OutOfRangeError",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.names = NameAllocator({n.value for n in walk(node) if isinstance(n, cst.Name)})
        self.rewrites: dict[cst.While, tuple[str, list[cst.BaseStatement]]] = {}
        for owner in [node, *(n for n in walk(node) if isinstance(n, cst.FunctionDef))]:
            body = owner.body if isinstance(owner, cst.Module) else owner.body.body
            if isinstance(body, (list, tuple)):
                self._scan(list(body))

    def _scan(self, body: list[cst.BaseStatement]) -> None:
        for index, statement in enumerate(body):
            handler = _exhaustion_handler(statement, self.tf_name)
            if handler is None:
                continue
            try:
                self.rewrites[statement] = self._rewrite(body, index, statement, handler)
            except Refusal as refusal:
                self.report(refusal.node or statement, f"loop until OutOfRangeError kept: {refusal.message}",
                            fixed=False, severity="warning")

    def leave_While(self, original: cst.While, updated: cst.While):
        if original not in self.rewrites:
            return updated
        dataset, statements = self.rewrites[original]
        self.report(original, f"loop until OutOfRangeError -> for loop over len({dataset})", fixed=True)
        return cst.FlattenSentinel(statements)

    def _rewrite(self, body, index, loop: cst.While, handler: cst.ExceptHandler):
        attempt: cst.Try = loop.body.body[0]
        rest = list(loop.body.body[1:])
        final = list(handler.body.body[:-1])
        for part in [*attempt.body.body[1:], *rest, *final]:
            exit_ = next((n for n in walk(part) if isinstance(n, EXITS)), None)
            if exit_ is not None:
                raise Refusal(exit_, "something other than the exception ends or skips the loop")
        step = self._step_call(attempt.body.body[0])
        iterator = self._iterator_of(step)
        dataset = self._fresh_iterator(body, index, iterator)
        self._finite(body, index, dataset)
        count = cst.Name(self.names.fresh("batch_count"))
        counting = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(count)], cst.Call(cst.Name("len"), [cst.Arg(cst.Name(dataset))]))],
            leading_lines=loop.leading_lines)
        new = cst.For(target=cst.Name(self.names.fresh("batch_number")),
                      iter=cst.Call(cst.Name("range"), [cst.Arg(count)]),
                      body=cst.IndentedBlock([*attempt.body.body, *rest]))
        return dataset, [counting, new, *final]

    def _step_call(self, statement: cst.BaseStatement) -> cst.FunctionDef:
        """The one tf.function the `try`'s first statement calls, called nowhere else."""
        functions = {f.name.value: f for f in walk(self.module) if isinstance(f, cst.FunctionDef)
                     and any(self.tf_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                             == "tf.function" for d in f.decorators)}
        called = [c for c in walk(statement) if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)
                  and c.func.value in functions]
        if len(called) != 1:
            raise Refusal(statement, "the `try` does not start with a statement calling exactly one tf.function")
        name = called[0].func.value
        uses = [n for n in walk(self.module) if isinstance(n, cst.Name) and n.value == name]
        if len(uses) != 2:  # its definition and this call
            raise Refusal(statement, f"`{name}` is also used outside this loop")
        return functions[name]

    def _iterator_of(self, step: cst.FunctionDef) -> str:
        """The iterator the step reads: once per call, unconditionally."""
        reads = [c for c in walk(step.body) if isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute)
                 and c.func.attr.value == "get_next" and isinstance(c.func.value, cst.Name)]
        if len(reads) != 1:
            raise Refusal(step, f"`{step.name.value}` does not read exactly one iterator once (`.get_next()`)")
        if not _unconditional(step.body.body, reads[0]):
            raise Refusal(reads[0], "the iterator is read under a condition or in a loop")
        return reads[0].func.value.value

    def _fresh_iterator(self, body, index, iterator: str) -> str:
        """The dataset of `iterator = iter(dataset)`, its only binding, before the loop; the iterator
        is named nowhere but there and in the step function."""
        bindings = [i for i, s in enumerate(body[:index]) if iterator in _assigned(s)]
        if len(bindings) != 1 or _binding_count(self.module, iterator) != 1:
            raise Refusal(None, f"`{iterator}` is not bound once, before the loop, in the same block")
        value = _assigned_value(body[bindings[0]], iterator)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "iter"
                and len(value.args) == 1 and isinstance(value.args[0].value, cst.Name)):
            raise Refusal(body[bindings[0]], f"`{iterator}` is not made by `iter(<dataset>)`")
        mentions = [n for n in walk(self.module) if isinstance(n, cst.Name) and n.value == iterator]
        if len(mentions) != 2:
            raise Refusal(body[bindings[0]], f"`{iterator}` is read outside the step function")
        dataset = value.args[0].value.value
        later = [i for i, s in enumerate(body) if dataset in _assigned(s) and i > bindings[0]]
        if later:
            raise Refusal(body[later[0]], f"`{dataset}` is bound again after the iterator is made")
        return dataset

    def _finite(self, body, index, dataset: str) -> None:
        """Every binding of `dataset` (all before the loop, in this block) keeps a known finite length."""
        bindings = [s for s in body[:index] if dataset in _assigned(s)]
        if not bindings or _binding_count(self.module, dataset) != len(bindings):
            raise Refusal(None, f"`{dataset}` is bound outside the loop's block")
        for position, statement in enumerate(bindings):
            problem = self._length_problem(_assigned_value(statement, dataset), dataset, first=position == 0)
            if problem:
                raise Refusal(statement, f"`{dataset}` may not have a known, finite length: {problem}")

    def _length_problem(self, node: cst.BaseExpression, dataset: str, first: bool) -> str | None:
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in LENGTH_KEEPING and self.tf_name(node.func) not in SOURCES:
            if node.func.attr.value == "repeat" and not self._int_constant(node):
                return "`repeat` without an integer constant count"
            node = node.func.value
        if isinstance(node, cst.Name) and node.value == dataset and not first:
            return None
        if isinstance(node, cst.Call) and self.tf_name(node.func) in SOURCES:
            return None
        return f"built by `{cst.Module([]).code_for_node(node)}`"

    def _int_constant(self, call: cst.Call) -> bool:
        if len(call.args) != 1:
            return False
        value = call.args[0].value
        if isinstance(value, cst.Name):
            return module_integer(self.module, value.value) is not None
        return isinstance(value, cst.Integer)


def _exhaustion_handler(statement, tf_name) -> cst.ExceptHandler | None:
    """The `except tf.errors.OutOfRangeError: ... break` of a `while True: try: ...` loop, else None."""
    if not (isinstance(statement, cst.While) and isinstance(statement.test, cst.Name)
            and statement.test.value == "True" and statement.orelse is None):
        return None
    first = statement.body.body[0] if statement.body.body else None
    if not (isinstance(first, cst.Try) and len(first.handlers) == 1 and first.orelse is None
            and first.finalbody is None):
        return None
    handler = first.handlers[0]
    if handler.type is None or handler.name is not None or tf_name(handler.type) != "tf.errors.OutOfRangeError":
        return None
    last = handler.body.body[-1] if handler.body.body else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Break)):
        return None
    return handler


def _unconditional(statements, target: cst.CSTNode) -> bool:
    """`target` sits in a simple statement of `statements`, or of `with` blocks among them."""
    for statement in statements:
        inside = any(n is target for n in walk(statement))
        if not inside:
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            return not any(isinstance(n, (cst.IfExp, cst.Lambda, cst.BooleanOperation, cst.BaseComp))
                           for n in walk(statement))
        if isinstance(statement, cst.With):
            return _unconditional(statement.body.body, target)
        return False
    return False


def _assigned(statement: cst.BaseStatement) -> set[str]:
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    return {t.target.value for s in statement.body if isinstance(s, cst.Assign)
            for t in s.targets if isinstance(t.target, cst.Name)}


def _assigned_value(statement: cst.SimpleStatementLine, name: str) -> cst.BaseExpression:
    return next(s.value for s in statement.body if isinstance(s, cst.Assign)
                and any(isinstance(t.target, cst.Name) and t.target.value == name for t in s.targets))


def _binding_count(module: cst.Module, name: str) -> int:
    """How many places bind `name` anywhere in the module (assignments, loops, parameters, ...)."""
    count = 0
    for node in walk(module):
        if isinstance(node, cst.Assign):
            count += sum(_binds(t.target, name) for t in node.targets)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            count += _binds(node.target, name)
        elif isinstance(node, cst.AsName):
            count += _binds(node.name, name)
        elif isinstance(node, cst.Param):
            count += node.name.value == name
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            count += 2 * any(n.name.value == name for n in node.names)  # never "once"
    return count


def _binds(target: cst.BaseExpression, name: str) -> int:
    if isinstance(target, cst.Name):
        return int(target.value == name)
    if isinstance(target, (cst.Tuple, cst.List)):
        return sum(_binds(e.value, name) for e in target.elements)
    return 0
