"""TFM306: an element-wise `map` of a tf.data pipeline runs on whole batches.

    dataset.map(normalise).shuffle(300, seed=21).batch(BATCH)   ->   dataset.shuffle(300, seed=21).batch(BATCH).map(normalise)

tf.data calls a `map` function once per element; for a cheap function that call is most of the
pipeline's cost (`benchmarks/dataset_map.py` on data_epochs_layers.py's pipeline, 2-core CPU: a batch
of 25 read in 0.92 ms with the map per element, 0.22 ms with it after `batch`, 0.11 ms without a map;
benchmarks/results/dataset-map-cpu-2cores-2026-11-25.txt). This is the tf.data guide's "vectorized mapping".
Moving the map after the batch gives the same values in the same order when the function is
element-wise and exact:

- it is a plain function of the module (or a lambda) whose parameters are plain names, made of
  assignments and one `return` of the mapped values (a name or a tuple of them);
- every value is built from one parameter (never two: a row's features and its scalar label would
  broadcast against each other once batched), number literals, module constants holding number
  literals, `+ - * / //`, unary minus and correctly rounded element-wise functions (`tf.cast`,
  `tf.abs`, `tf.square`, `tf.sqrt`, `tf.minimum`/`tf.maximum`/`tf.clip_by_value` with constant
  bounds, `tf.nn.relu`, `tf.floor`, `tf.round`): each element's result is the same whether it is
  computed alone or in a batch. Transcendental functions (`exp`, `tanh`, ...) are left alone: their
  vectorised kernels may round differently from the per-element path;
- between the `map` and the `batch` there are only steps that move elements without reading them
  (`shuffle`, `repeat`, `take`, `skip`, `prefetch`), so the order of elements is unchanged.

Anything else is left as it is; a map that looks movable but fails a check says why.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.common.syntax import Refusal, code, walk
from transforms.base import TFTransform

ORDER_ONLY = frozenset({"shuffle", "repeat", "take", "skip", "prefetch"})
MAP_KEYWORDS = frozenset({"num_parallel_calls", "deterministic", "name"})
# Correctly rounded element-wise functions: the first argument is the mapped value, the rest constants.
EXACT_FUNCTIONS = frozenset({
    "tf.cast", "tf.abs", "tf.math.abs", "tf.square", "tf.math.square", "tf.sqrt", "tf.math.sqrt",
    "tf.minimum", "tf.math.minimum", "tf.maximum", "tf.math.maximum", "tf.clip_by_value", "tf.nn.relu",
    "tf.floor", "tf.math.floor", "tf.round", "tf.math.round", "tf.negative", "tf.math.negative",
})
EXACT_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide)


class VectorizeDatasetMaps(TFTransform):
    CODE = "TFM306"
    DESCRIPTION = "Element-wise tf.data map functions moved after batch: one call per batch, same values"
    SAFETY = "safe"
    PHASE = 34
    TRIGGERS = (".map(",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        self.constants = _number_constants(node)
        self.moves: dict[cst.Call, cst.Call] = {}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        batch = _batch_over_map(original)
        if batch is None:
            return updated
        chain, mapping = batch
        if not self._candidate(mapping):
            return updated  # a map over a function defined elsewhere: nothing to say about it
        try:
            self._check_map(mapping)
        except Refusal as refusal:
            self.report(refusal.node or mapping, f"dataset map kept per element: {refusal.message}",
                        fixed=False, severity="info")
            return updated
        function = code(mapping.args[0].value)
        self.report(mapping, f"map({function}) moved after batch: one call per batch ({function} is element-wise)",
                    fixed=True)
        return _moved(updated, len(chain))

    def _candidate(self, mapping: cst.Call) -> bool:
        function = mapping.args[0].value if mapping.args else None
        return isinstance(function, cst.Lambda) or (isinstance(function, cst.Name) and function.value in self.functions)

    def _check_map(self, mapping: cst.Call) -> None:
        args = mapping.args
        if not args or args[0].keyword is not None or any(
                a.keyword is None or a.keyword.value not in MAP_KEYWORDS for a in args[1:]):
            raise Refusal(mapping, "the map takes arguments other than its function and parallelism")
        function = args[0].value
        if isinstance(function, cst.Lambda):
            params, body = plain_parameters(function.params, function), [cst.Return(function.body)]
        else:
            definition = self.functions[function.value]
            if definition.decorators or definition.asynchronous:
                raise Refusal(function, f"`{function.value}` is decorated")
            params, body = plain_parameters(definition.params, definition), _simple_body(definition)
        _ElementWise(params, self.constants, self.tf_name).check(body)


class _ElementWise:
    """Checks a map function's statements: which single parameter each value comes from."""

    def __init__(self, params: list[str], constants: set[str], tf_name) -> None:
        self.sources = {p: {p} for p in params}
        self.constants, self.tf_name = constants, tf_name

    def check(self, statements: list[cst.BaseSmallStatement]) -> None:
        for statement in statements[:-1]:
            if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0].target, cst.Name)):
                raise Refusal(statement, "the function does more than assign names and return")
            self.sources[statement.targets[0].target.value] = self.value(statement.value)
        last = statements[-1] if statements else None
        if not isinstance(last, cst.Return) or last.value is None:
            raise Refusal(last, "the function does not end by returning its values")
        returned = last.value.elements if isinstance(last.value, cst.Tuple) else [last.value]
        for element in returned:
            value = element.value if isinstance(element, cst.Element) else element
            if isinstance(element, cst.StarredElement) or not self.value(value):
                raise Refusal(value, f"`{code(value)}` does not come from the element")

    def value(self, node: cst.BaseExpression) -> set[str]:
        """The parameters `node` is computed from (empty for a constant); Refusal if not exact element-wise."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return set()
        if isinstance(node, cst.Name):
            if node.value in self.sources:
                return self.sources[node.value]
            if node.value in self.constants:
                return set()
            raise Refusal(node, f"`{node.value}` is neither a parameter nor a number constant")
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self.value(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, EXACT_OPERATORS):
            return self._joined(node, self.value(node.left), self.value(node.right))
        if isinstance(node, cst.Call) and self.tf_name(node.func) in EXACT_FUNCTIONS:
            return self._call(node)
        raise Refusal(node, f"`{code(node)}` is not an exact element-wise operation")

    def _call(self, call: cst.Call) -> set[str]:
        name = self.tf_name(call.func)
        sources: set[str] = set()
        for position, arg in enumerate(call.args):
            if arg.star:
                raise Refusal(call, "arguments are unpacked")
            if name == "tf.cast" and (position == 1 or (arg.keyword and arg.keyword.value == "dtype")):
                if not (self.tf_name(arg.value) or "").startswith("tf."):
                    raise Refusal(arg.value, "the cast's dtype is not a TensorFlow dtype")
                continue
            if arg.keyword is not None and arg.keyword.value == "name":
                continue
            sources = self._joined(call, sources, self.value(arg.value))
        return sources

    @staticmethod
    def _joined(node: cst.CSTNode, left: set[str], right: set[str]) -> set[str]:
        if left and right and left != right or len(left | right) > 1:
            raise Refusal(node, f"`{code(node)}` combines two parts of the element (they broadcast differently "
                          "once batched)")
        return left | right


def _batch_over_map(call: cst.Call) -> tuple[list[cst.Call], cst.Call] | None:
    """For `<x>.map(f).<order-only steps>.batch(...)`: the calls from the batch down to the map's
    successor, and the map call; else None."""
    if not (_method(call) == "batch"):
        return None
    chain: list[cst.Call] = [call]
    node = call.func.value
    while isinstance(node, cst.Call) and _method(node) in ORDER_ONLY:
        chain.append(node)
        node = node.func.value
    if isinstance(node, cst.Call) and _method(node) == "map":
        return chain, node
    return None


def _moved(batch: cst.Call, steps: int) -> cst.Call:
    """`batch` (an updated `<x>.map(f).<steps - 1 order-only calls>.batch(..)`) with the map after it."""
    calls = [batch]
    for _ in range(steps):
        calls.append(calls[-1].func.value)
    mapping: cst.Call = calls[-1]
    rebuilt: cst.BaseExpression = mapping.func.value  # the map's own input
    for call in reversed(calls[:-1]):
        rebuilt = call.with_changes(func=call.func.with_changes(value=rebuilt))
    return mapping.with_changes(func=mapping.func.with_changes(value=rebuilt))


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def plain_parameters(params: cst.Parameters, owner: cst.CSTNode) -> list[str]:
    """The names of `params`, all positional-or-keyword without defaults; Refusal at `owner` otherwise."""
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params \
            or params.posonly_params or any(p.default is not None for p in params.params):
        raise Refusal(owner, "the function's parameters are not plain names")
    return [p.name.value for p in params.params]


def _simple_body(definition: cst.FunctionDef) -> list[cst.BaseSmallStatement]:
    statements: list[cst.BaseSmallStatement] = []
    for index, line in enumerate(definition.body.body):
        if not isinstance(line, cst.SimpleStatementLine):
            raise Refusal(line, f"`{definition.name.value}` has compound statements")
        docstring = index == 0 and len(line.body) == 1 and isinstance(line.body[0], cst.Expr) \
            and isinstance(line.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        if not docstring:
            statements.extend(line.body)
    return statements


def _number_constants(module: cst.Module) -> set[str]:
    """Module names bound exactly once, to a number literal (`SCALE = 255.0`)."""
    bound: dict[str, list[bool]] = {}
    for node in walk(module):
        targets = []
        if isinstance(node, cst.Assign):
            targets = [(t.target, node.value) for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            targets = [(node.target, None)]
        for target, value in targets:
            names = [target] if isinstance(target, cst.Name) else [n for n in walk(target) if isinstance(n, cst.Name)]
            for name in names:
                number = isinstance(value, (cst.Integer, cst.Float)) or (
                    isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)))
                bound.setdefault(name.value, []).append(number and name is target)
    return {name for name, kinds in bound.items() if kinds == [True]}
