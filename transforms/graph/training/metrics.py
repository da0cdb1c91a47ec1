"""TF1 streaming metrics (`acc, acc_update = tf.metrics.accuracy(labels, predictions)`) -> Keras metric
objects, created once beside the other state.

A TF1 metric is a pair of tensors over local variables: the value reads the accumulators, the update
op adds a batch and returns the updated value. The statement becomes two graph items so that each run
slices only what it fetches (fetching the value needs no feeds): `acc = accuracy_metric.result()` and
`acc_update = accuracy_metric(labels, predictions)` (a Keras metric's call updates, then returns the
result). A program reading only the update op, `acc = tf.metrics.accuracy(...)[1]`, gets only the
second. Running `tf.local_variables_initializer()`, alone or in a `tf.group` of init ops (TF1 local
variables are exactly the metrics' accumulators here: nothing else the rewrite accepts creates any),
becomes `reset_state()` on every metric. Only metrics whose Keras counterpart computes the same numbers are converted:

- `tf.metrics.accuracy`: mean of `labels == predictions` after casting predictions to the labels'
  dtype; Keras `Accuracy` casts the other way, so the TF1 cast is written out.
- `tf.metrics.mean`: total / count over all elements; Keras `Mean` (equal for the values of each batch
  sharing one shape).

`weights` are refused: Keras reduces values to the rank of `sample_weight` before weighting, so a
scalar or lower-rank weight counts batches, not elements, as TF1 did.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.graph.analysis.model import Item, Kind
from transforms.graph.writing.renames import renamed_reads
from transforms.common.syntax import Refusal, bind_arguments, code, string_value, with_value

_COLLECTIONS = ("metrics_collections", "updates_collections")
_METRICS = {
    "tf.metrics.accuracy": ("Accuracy", ["labels", "predictions", "weights", *_COLLECTIONS, "name"]),
    "tf.metrics.mean": ("Mean", ["values", "weights", *_COLLECTIONS, "name"]),
}
_LOCAL_INITIALIZERS = ("tf.local_variables_initializer", "tf.initialize_local_variables")


@dataclass
class Metric:
    object_name: str
    value_item: int | None  # None: the program reads only the update op (`tf.metrics.accuracy(...)[1]`)
    update_item: int


class MetricConverter:
    def __init__(self, scanner) -> None:
        self.scanner = scanner
        self.metrics: list[Metric] = []

    def convert(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """Convert `value, update = tf.metrics.X(...)`, or `update = tf.metrics.X(...)[1]`; False when
        `value` is no tf.metrics call."""
        part = _index(value)
        call = value.value if part is not None else value
        if not isinstance(call, cst.Call):
            return False
        tf_name = self.scanner.analyzer.category(call.func)[0]
        if tf_name is None or not tf_name.startswith("tf.metrics."):
            return False
        if tf_name not in _METRICS:
            raise Refusal(call, f"{tf_name}: no Keras metric computes the same values (only "
                                f"{' and '.join(sorted(_METRICS))} are converted)")
        if part is None:
            self._pair(item, target, call, tf_name)
        elif part == 1 and isinstance(target, cst.Name):
            self._update_only(item, target.value, call, tf_name)
        else:
            raise Refusal(value, f"{tf_name}(...)[{part}] is converted only as `name = {tf_name}(...)[1]`, "
                                 "its update op")
        return True

    def _pair(self, item: Item, target: cst.BaseExpression, value: cst.Call, tf_name: str) -> None:
        names = _pair(target, tf_name)
        object_name, arguments, inputs = self._construct(item, value, tf_name)
        update = self._split(item)
        item.body = _assign(names[0], cst.parse_expression(f"{object_name}.result()"))
        update.body = _assign(names[1], cst.Call(cst.Name(object_name), arguments))
        self._graph_reads(update, inputs)
        self.scanner.bind(item, (names[0],), Kind.TENSOR)
        self.scanner.bind(update, (names[1],), Kind.TENSOR)
        self.metrics.append(Metric(object_name, item.index, update.index))

    def _update_only(self, item: Item, name: str, value: cst.Call, tf_name: str) -> None:
        """`accuracy = tf.metrics.accuracy(...)[1]`: the metric object, and its update op in the steps."""
        object_name, arguments, inputs = self._construct(item, value, tf_name)
        item.body = _assign(name, cst.Call(cst.Name(object_name), arguments))
        self._graph_reads(item, inputs)
        self.scanner.bind(item, (name,), Kind.TENSOR)
        self.metrics.append(Metric(object_name, None, item.index))

    def _construct(self, item: Item, value: cst.Call, tf_name: str) -> tuple[str, list[cst.Arg], list]:
        """The metric object, created where the statement was: its name, its call's arguments, the TF1 inputs."""
        keras, signature = _METRICS[tf_name]
        bound = bind_arguments(value, signature, tf_name)
        for parameter in ("weights", *_COLLECTIONS):
            if parameter in bound:
                raise Refusal(bound[parameter], f"{tf_name}({parameter}=...) is not converted")
        inputs, arguments = _update_arguments(value, tf_name, bound, self.scanner.analyzer.category)
        object_name = self.scanner.names.fresh(f"{keras.lower()}_metric")
        construction = with_value(item.node, f"tf.keras.metrics.{keras}({_name_argument(bound, tf_name)})",
                                  object_name)
        item.emit = [construction.with_changes(leading_lines=item.node.leading_lines)]
        return object_name, arguments, inputs

    def _split(self, item: Item) -> Item:
        """A second item for the update op, right after the statement's own (the value)."""
        items = self.scanner.flattener.items
        update = Item(item.node.body[0], len(items), item.scopes)
        items.append(update)
        return update

    def _graph_reads(self, update: Item, inputs: list[cst.BaseExpression]) -> None:
        reads, python_reads = set(), set()
        for node in inputs:
            facts = self.scanner.analyzer.analyze(node)
            if facts.layer_calls or facts.run_calls or facts.helper_calls:
                raise Refusal(node, "a metric's inputs must be computed in statements of their own")
            reads |= facts.reads
            python_reads |= facts.python_reads
        update.reads = frozenset(renamed_reads(self.scanner.block, update, reads))
        update.python_reads = frozenset(python_reads)


def _update_arguments(call: cst.Call, tf_name: str, bound: dict, category) -> tuple[list, list[cst.Arg]]:
    """The TF1 inputs and the Keras metric call's arguments (reusing the TF1 argument nodes)."""
    if tf_name == "tf.metrics.mean":
        values = _required(bound, "values", call, tf_name)
        return [values], [cst.Arg(values)]
    labels = _required(bound, "labels", call, tf_name)
    predictions = _required(bound, "predictions", call, tf_name)
    source = _dtype_source(labels, category)
    if source is None:
        raise Refusal(labels, f"{tf_name} labels must be a name, or an op keeping a name's dtype (tf.squeeze, "
                              "tf.reshape, ...): their dtype decides the comparison")
    cast = cst.parse_expression(f"tf.cast(_, {source.value}.dtype)")
    cast = cast.with_changes(args=[cst.Arg(predictions, comma=cast.args[0].comma), *cast.args[1:]])
    return [labels, predictions], [cst.Arg(labels, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                   cst.Arg(cast)]


_SAME_DTYPE = ("tf.squeeze", "tf.reshape", "tf.identity", "tf.expand_dims", "tf.transpose", "tf.stop_gradient")


def _dtype_source(node: cst.BaseExpression, category) -> cst.Name | None:
    """The name whose dtype `node` has: itself, or the first argument of ops that keep it."""
    while isinstance(node, cst.Call) and category(node.func)[0] in _SAME_DTYPE and node.args \
            and node.args[0].keyword is None:
        node = node.args[0].value
    return node if isinstance(node, cst.Name) else None


def _index(value: cst.BaseExpression) -> int | None:
    """i of `<value>[i]`, an integer literal; None for anything else."""
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index) \
            and isinstance(value.slice[0].slice.value, cst.Integer):
        return int(value.slice[0].slice.value.value)
    return None


def _pair(target: cst.BaseExpression, tf_name: str) -> tuple[str, str]:
    if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 \
            and all(isinstance(e.value, cst.Name) for e in target.elements):
        return target.elements[0].value.value, target.elements[1].value.value
    raise Refusal(target, f"{tf_name} must be unpacked into two names (value, update_op)")


def _required(bound: dict, parameter: str, call: cst.Call, tf_name: str) -> cst.BaseExpression:
    if parameter not in bound:
        raise Refusal(call, f"{tf_name} without its {parameter}")
    return bound[parameter]


def _name_argument(bound: dict, tf_name: str) -> str:
    if "name" not in bound:
        return ""
    if string_value(bound["name"]) is None:
        raise Refusal(bound["name"], f"{tf_name} name must be a string literal")
    return f"name={code(bound['name'])}"


def _assign(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def check_metric_runs(functions, metrics: list[Metric]) -> None:
    """TF1 ran a metric's value and update op in no fixed order when one run fetched both."""
    for function in functions:
        for metric in metrics:
            if metric.value_item in function.items and metric.update_item in function.items:
                raise Refusal(function.sites[0].call, "one run reads a metric's value and its update op, "
                                                      "which TF1 ran in no fixed order")


def reset_replacements(block, init_sites, metrics: list[Metric], resolver) -> dict:
    """`sess.run(tf.local_variables_initializer())` -> `metric.reset_state()` for every metric."""
    replacements = {}
    if not metrics:
        return replacements
    local_names = local_initializer_names(block, resolver)
    for site in init_sites:
        if not any(is_local_initializer(leaf.node, local_names, resolver) for leaf in site.fetch.leaves()):
            continue
        if not resolver.inside_function(site.call) and site.item_index < max(m.update_item for m in metrics):
            raise Refusal(site.call, "local variables initialised before all metrics are created")
        line = resolver.parent(resolver.parent(site.call))
        resets = [f"{metric.object_name}.reset_state()" for metric in metrics]
        replacements[id(line)] = lambda updated, resets=resets: cst.FlattenSentinel(
            [cst.parse_statement(reset + "\n").with_changes(leading_lines=updated.leading_lines if not i else [])
             for i, reset in enumerate(resets)])
    return replacements


def local_initializer_names(block, resolver) -> set[str]:
    names = set()
    for item in block.items:
        if item.kind is Kind.INIT_OP and isinstance(item.node, cst.SimpleStatementLine):
            small = item.node.body[0]
            if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name) \
                    and _runs_local_initializer(small.value, resolver):
                names.add(small.targets[0].target.value)
    return names


def is_local_initializer(node: cst.BaseExpression, local_names: set[str], resolver) -> bool:
    if isinstance(node, cst.Call):
        return _runs_local_initializer(node, resolver)
    return isinstance(node, cst.Name) and node.value in local_names


def _runs_local_initializer(node: cst.BaseExpression, resolver) -> bool:
    """`tf.local_variables_initializer()`, or a `tf.group(...)` of init ops holding it."""
    if not isinstance(node, cst.Call):
        return False
    if resolver.tf_name(node.func) == "tf.group":
        return any(_runs_local_initializer(arg.value, resolver) for arg in node.args)
    return resolver.tf_name(node.func) in _LOCAL_INITIALIZERS
