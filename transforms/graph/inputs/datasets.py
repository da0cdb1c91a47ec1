"""TF1 input pipelines in a graph: `tf.data` datasets read through one-shot iterators.

`dataset = tf.data.Dataset.from_tensor_slices(...).shuffle(n, seed=s).batch(b)` stays as it is: a TF2
dataset is an ordinary Python object, built once. `iterator = dataset.make_one_shot_iterator()` (or
`tf.data.make_one_shot_iterator(dataset)`) becomes `iterator = iter(dataset)`, created once like other
state. `x, y = iterator.get_next()` is graph code: it moves into the step functions that need it, where
each call advances the iterator once, as each `sess.run` depending on it did, and raises
OutOfRangeError when the data runs out, as `sess.run` did. The same examples come in the same order.

Pipelines fed from placeholders (initializable iterators) are refused: their data changes per run.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.analysis.model import Kind
from transforms.common.syntax import Refusal

ONE_SHOT = "make_one_shot_iterator"
GET_NEXT = "get_next"
_REFUSED_METHODS = {
    "make_initializable_iterator": "initializable iterators (re-initialised with fed data)",
    "make_initializer": "reinitializable iterators",
}


class DatasetReader:
    def __init__(self, analyzer) -> None:
        self.analyzer = analyzer
        self.inline_iterators: set[str] = set()  # iterators created for `make_one_shot_iterator().get_next()`

    def is_pipeline(self, node: cst.BaseExpression) -> bool:
        """A call chain rooted at a tf.data dataset constructor or at a name bound to a dataset."""
        methods = []
        while isinstance(node, cst.Call) and self.analyzer.category(node.func)[1] is not Category.DATASET:
            if not isinstance(node.func, cst.Attribute) or node.func.attr.value in (ONE_SHOT, GET_NEXT):
                return False
            methods.append(node.func)
            node = node.func.value
        if not (isinstance(node, cst.Call) or self._is_dataset_name(node)):
            return False
        refused = next((m for m in methods if m.attr.value in _REFUSED_METHODS), None)
        if refused is not None:
            raise Refusal(refused, f"{refused.attr.value}: {_REFUSED_METHODS[refused.attr.value]} is not modelled")
        return True

    def one_shot_source(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The dataset of `dataset.make_one_shot_iterator()` / `tf.data.make_one_shot_iterator(dataset)`."""
        if not isinstance(node, cst.Call):
            return None
        if self.analyzer.category(node.func)[1] is Category.ITERATOR and len(node.args) == 1:
            source = node.args[0].value
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == ONE_SHOT and not node.args:
            source = node.func.value
        else:
            return None
        if not self.is_pipeline(source):
            raise Refusal(node, "a one-shot iterator over something not recognised as a tf.data dataset")
        return source

    def next_element_iterator(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The iterator `node` reads the next element of (`<iterator>.get_next()`), or None."""
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == GET_NEXT and not node.args):
            return node.func.value
        return None

    def is_iterator_name(self, node: cst.BaseExpression) -> bool:
        return (isinstance(node, cst.Name) and node.value in self.inline_iterators) or self._is_name_of(node, Kind.ITERATOR)

    def _is_dataset_name(self, node: cst.BaseExpression) -> bool:
        return self._is_name_of(node, Kind.DATASET)

    def _is_name_of(self, node: cst.BaseExpression, kind: Kind) -> bool:
        return (isinstance(node, cst.Name) and self.analyzer.kinds.get(node.value) is kind
                and self.analyzer.resolver.is_block_reference(node))
