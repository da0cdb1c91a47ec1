"""TFM307: batches made by Python (generators, `next_batch` helpers) fed through tf.data with prefetch
(`--input-pipeline tf.data`).

    for x_batch, y_batch in minibatches(train_x, train_y, rng):       train_step_batches = tf.data.Dataset.from_generator(
        train_step(x_batch, y_batch)                               ->      lambda: minibatches(train_x, train_y, rng),
                                                                           output_signature=(<the step's TensorSpecs>)).prefetch(tf.data.AUTOTUNE)
                                                                       for x_batch, y_batch in train_step_batches:
                                                                           train_step(x_batch, y_batch)

    for step in range(STEPS):                                         train_step_batches = tf.data.Dataset.from_generator(
        batch_x, batch_y = feeder.next_batch(BATCH)                ->      lambda: (feeder.next_batch(BATCH) for _ in range(STEPS)), ...
        train_step(batch_x, batch_y)                                   for step, (batch_x, batch_y) in zip(range(STEPS), train_step_batches):
                                                                           train_step(batch_x, batch_y)

The Python code that makes the batches (its shuffling included) runs in tf.data's background thread
while the step runs; the batches are the same, in the same order, converted to the dtypes of the step
function's input_signature as feeding them converted them. Rewritten only when that is provable:

- the batches come from a generator function of this module (a fresh iterator at each loop), or from
  the first statement of a `for _ in range(...)` loop calling a method of an object whose class is
  defined in this module without TensorFlow (so made by Python alone);
- each batch name is used once in the loop, as a positional argument of the one step function call
  (a tf.function with an input_signature);
- the loop runs to its end (no `break`, `return`, `continue`) and its other statements call only
  plain Python that draws no random numbers: the producer, running ahead, would otherwise interleave
  its draws with theirs differently.

Whether this beats feeding depends on the machine (the copy overlaps the step on GPUs); off by
default, `tf-migrate tune` measures it.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.common.values import source as code_of
from transforms.speed.fusion.state import TF_FUNCTION_IDENTIFIERS, shared_facts
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.common.syntax import Refusal, walk
from transforms.base import TFTransform
from transforms.speed.feed_batches_from_datasets import SETTING, input_signatures

LEAVES_EARLY = (cst.Break, cst.Return, cst.Continue, cst.Yield)


class FeedGeneratorsFromDatasets(TFTransform):
    CODE = "TFM307"
    DESCRIPTION = "Feed batches made by Python generators / next_batch helpers through tf.data with prefetch " \
                  "(--input-pipeline tf.data)"
    PHASE = 33
    TRIGGERS = ("function",)
    IDENTIFIERS = TF_FUNCTION_IDENTIFIERS
    ENABLED_BY = (SETTING, ("tf.data",))

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.enabled = self.context.scratch.get("settings", {}).get(SETTING, "off") == "tf.data"
        self.depth = 0  # indented blocks around the node being visited
        if not self.enabled:
            return
        self.module = node
        self.specs = {name: [code_of(e.value) for e in signature.elements]
                      for name, signature in input_signatures(node, self.tf_name).items()}
        self.facts = shared_facts(self, node)
        self.generators = {f.name.value for f in node.body if isinstance(f, cst.FunctionDef) and not f.decorators
                           and any(isinstance(n, (cst.Yield)) for n in walk(f.body))}
        self.plain_classes = {c.name.value for c in node.body if isinstance(c, cst.ClassDef)
                              and not any(self.tf_names(n) for n in walk(c) if isinstance(n, cst.Name))}
        self.names = NameAllocator({n.value for n in walk(node) if isinstance(n, cst.Name)})
        self.plans: dict[cst.For, tuple] = {}

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        self.depth -= 1
        return updated

    def visit_For(self, node: cst.For) -> None:
        if not self.enabled or not self.specs:
            return
        steps = [c for c in walk(node.body) if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)
                 and c.func.value in self.specs]
        if len(steps) != 1:
            return
        producer = self._producer(node)
        if producer is None:
            return
        try:
            self.plans[node] = self._plan(node, steps[0], *producer)
        except Refusal as refusal:
            self.report(refusal.node or node, f"batches kept fed from Python: {refusal.message}",
                        fixed=False, severity="info")

    def _producer(self, loop: cst.For):
        """(kind, the call making the batches, their names) when the loop has one of the two shapes."""
        call = loop.iter
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in self.generators:
            return "generator", call, _names(loop.target)
        first = loop.body.body[0] if loop.body.body else None
        if not (_is_range(loop.iter) and isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
                and isinstance(first.body[0], cst.Assign) and len(first.body[0].targets) == 1):
            return None
        value = first.body[0].value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                isinstance(value.func.value, cst.Name) and self._instance_of_plain_class(value.func.value.value):
            return "method", value, _names(first.body[0].targets[0].target)
        return None

    def _instance_of_plain_class(self, name: str) -> bool:
        bound = [a.value for a in walk(self.module) if isinstance(a, cst.Assign)
                 and any(isinstance(t.target, cst.Name) and t.target.value == name for t in a.targets)]
        return len(bound) == 1 and isinstance(bound[0], cst.Call) and isinstance(bound[0].func, cst.Name) \
            and bound[0].func.value in self.plain_classes

    def _plan(self, loop: cst.For, step: cst.Call, kind: str, producer: cst.Call, names: list[str] | None):
        if not names:
            raise Refusal(loop, "the batches are not unpacked into plain names")
        leaving = next((n for n in walk(loop.body) if isinstance(n, LEAVES_EARLY)), None)
        if leaving is not None or loop.orelse is not None:
            raise Refusal(leaving or loop, "the loop may stop before the batches run out")
        positions = {}
        for index, arg in enumerate(step.args):
            if isinstance(arg.value, cst.Name) and arg.value.value in names:
                if arg.keyword is not None or arg.star:
                    raise Refusal(arg, "a batch is passed by keyword or unpacked")
                positions[arg.value.value] = index
        uses = [n for n in walk(loop.body) if isinstance(n, cst.Name) and n.value in names]
        expected = len(names) + (1 if kind == "method" else 0) * len(names)  # the method form binds them too
        if set(positions) != set(names) or len(uses) != expected:
            raise Refusal(step, "a batch is used other than as an argument of the step function")
        self._check_other_work(loop, step, producer)
        rebound = {n.value for a in walk(loop.body) if isinstance(a, (cst.Assign, cst.AugAssign))
                   for t in (a.targets if isinstance(a, cst.Assign) else [a]) for n in walk(t.target)
                   if isinstance(n, cst.Name)} - set(names)
        read = {n.value for n in walk(producer) if isinstance(n, cst.Name)}
        if kind == "method" and read & rebound:
            raise Refusal(producer, f"`{sorted(read & rebound)[0]}` changes in the loop, but is read ahead of it")
        specs = self.specs[step.func.value]
        if any(p >= len(specs) for p in positions.values()):
            raise Refusal(step, "the step call has more arguments than its input_signature")
        return kind, producer, names, [specs[positions[n]] for n in names]

    def _check_other_work(self, loop: cst.For, step: cst.Call, producer: cst.Call) -> None:
        for call in (c for c in walk(loop.body) if isinstance(c, cst.Call)):
            if call is step or call is producer or any(call is n for n in walk(step)):
                continue
            if any("random" in name for name in self.qualified_names(call.func)):
                raise Refusal(call, "the loop draws random numbers, which the producer running ahead would reorder")
            problem = self.facts.call_problem(call)
            if problem:
                raise Refusal(call, problem)

    def leave_For(self, original: cst.For, updated: cst.For):
        plan = self.plans.get(original) if self.enabled else None
        if plan is None:
            return updated
        kind, producer, names, specs = plan
        step = next(c.func.value for c in walk(original.body) if isinstance(c, cst.Call)
                    and isinstance(c.func, cst.Name) and c.func.value in self.specs)
        dataset = self.names.fresh(f"{step}_batches")
        made = code_of(producer) if kind == "generator" else f"({code_of(producer)} for _ in {code_of(original.iter)})"
        signature = specs[0] if len(specs) == 1 else f"({', '.join(specs)})"
        indent = self.module.default_indent * (self.depth + 1)  # continuation lines are written as they are
        creation = cst.parse_statement(
            f"{dataset} = tf.data.Dataset.from_generator(\n{indent}lambda: {made},\n"
            f"{indent}output_signature={signature}).prefetch(tf.data.AUTOTUNE)\n")
        batch_target = names[0] if len(names) == 1 else f"({', '.join(names)})"
        if kind == "generator":
            loop = updated.with_changes(iter=cst.Name(dataset))
        else:
            header = cst.parse_statement(f"for {code_of(updated.target)}, {batch_target} in "
                                         f"zip({code_of(updated.iter)}, {dataset}):\n    pass\n")
            loop = updated.with_changes(target=header.target, iter=header.iter,
                                        body=updated.body.with_changes(body=updated.body.body[1:]))
        self.add_import("tensorflow", asname="tf")
        self.report(original, f"batches for {step}() made by `{code_of(producer.func)}` read from a tf.data "
                    "pipeline with prefetch", fixed=True)
        return cst.FlattenSentinel([creation.with_changes(leading_lines=updated.leading_lines),
                                    loop.with_changes(leading_lines=[])])


def _names(target: cst.BaseExpression) -> list[str] | None:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return [e.value.value for e in target.elements]
    return None


def _is_range(node: cst.BaseExpression) -> bool:
    """`range(...)` whose arguments are names, literals, arithmetic or `len(name)`: the same when evaluated again."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"):
        return False
    calls = [c for c in walk(node) if isinstance(c, cst.Call) and c is not node]
    return all(isinstance(c.func, cst.Name) and c.func.value == "len" for c in calls)
