"""TFM103: the argument changes TF's converter makes with code rather than keyword tables.

* `tf.nn.dropout(x, keep_prob)` -> `tf.nn.dropout(x, rate=1 - keep_prob)` (v1 computes exactly that);
* `tf.to_float(x)` and the other `tf.to_<dtype>` -> `tf.cast(x, tf.float32)`;
* `tf.nn.softmax_cross_entropy_with_logits(labels=y, ...)`: TF2's function also backpropagates into
  the labels, so they are wrapped in `tf.stop_gradient` to keep TF1 gradients;
* `dataset.make_one_shot_iterator()` / `make_initializable_iterator()`, methods TF2 datasets lack ->
  `tf.compat.v1.data.make_one_shot_iterator(dataset)`.

The remaining argument edits of these calls are TFM102's. A call that passes *args/**kwargs is left
alone (TFM101/TFM102 then keep it on tf.compat.v1).
"""
from __future__ import annotations

import libcst as cst

from transforms.api._call_arguments import source, with_commas
from transforms.api._references import ReferenceTransform
from transforms.api._tf_spelling import direct_tf_name
from transforms.common.tables import keyword_table, names_a_table_symbol
from transforms.common.syntax import keyword_arg

ITERATOR_METHODS = ("make_one_shot_iterator", "make_initializable_iterator")
_REWRITES = ("dropout", "softmax_cross_entropy_with_logits")
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString)


def _one_minus(value: cst.BaseExpression) -> cst.BinaryOperation:
    if not isinstance(value, _ATOMS) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BinaryOperation(cst.Integer("1"), cst.Subtract(), value)


class RewriteChangedArguments(ReferenceTransform):
    CODE = "TFM103"
    DESCRIPTION = ("Rewrite changed arguments: dropout keep_prob -> rate, tf.to_<dtype> -> tf.cast, "
                   "stop_gradient on softmax labels, dataset iterator methods")
    PHASE = 51

    @classmethod
    def applies_to(cls, code: str) -> bool:
        return names_a_table_symbol(code, ITERATOR_METHODS)

    def visit_Module(self, node: cst.Module) -> bool:
        self.table = keyword_table()
        self._calls: dict[int, str | None] = {}
        return super().visit_Module(node)

    def claim(self, node: cst.BaseExpression, canonical: str) -> bool:
        return False  # only calls are rewritten here

    def replace(self, original, updated):
        return None

    def visit_Call(self, node: cst.Call) -> bool:
        canonical = direct_tf_name(self, node.func)
        spec = self.table.functions.get(canonical or "")
        if canonical in self.table.casts or (spec is not None and spec.rewrite in _REWRITES) or (
                canonical is None and isinstance(node.func, cst.Attribute) and node.func.attr.value in ITERATOR_METHODS):
            self._calls[id(node)] = canonical
        return True

    def has_rewrites(self) -> bool:
        return False  # every rewrite is a call's, decided by dry_leave

    def dry_leave(self, node: cst.CSTNode) -> bool:
        return id(node) in self._calls and self.leave_Call(node, node) is not node

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original) not in self._calls or any(arg.star for arg in updated.args):
            return updated
        canonical = self._calls[id(original)]
        spec = self.table.functions.get(canonical or "")
        if canonical in self.table.casts:
            return self._cast(original, updated, canonical, self.table.casts[canonical])
        if spec is not None and spec.rewrite == "dropout":
            return self._dropout(original, updated, spec.v1_positional)
        if spec is not None and spec.rewrite == "softmax_cross_entropy_with_logits":
            return self._stop_label_gradient(original, updated, canonical)
        if canonical is None and isinstance(original.func, cst.Attribute) \
                and original.func.attr.value in ITERATOR_METHODS:
            return self._iterator(original, updated, original.func.attr.value)
        return updated

    def _cast(self, original: cst.Call, updated: cst.Call, canonical: str, dtype: str) -> cst.BaseExpression:
        value = _bind(updated.args, ("x", "name"))
        root = self.spelling.root_at(original)
        if value is None or "x" not in value or root is None:
            return updated
        new_args = [cst.Arg(value["x"]), cst.Arg(cst.parse_expression(f"{root}.{dtype}"))]
        if "name" in value:
            new_args.append(keyword_arg("name", value["name"]))
        self.report(original, f"{canonical}(x) -> tf.cast(x, tf.{dtype}) (the op's default name is now "
                    "Cast)", fixed=True)
        self.rewritten(original.func)
        return cst.Call(cst.parse_expression(f"{root}.cast"), with_commas(new_args, updated.args))

    def _dropout(self, original: cst.Call, updated: cst.Call, v1_positional) -> cst.BaseExpression:
        value = _bind(updated.args, v1_positional)
        if value is None or "keep_prob" not in value or "rate" in value \
                or source(value["keep_prob"]).strip() == "None":
            return updated
        keep_prob = value["keep_prob"]
        new_args: list[cst.Arg] = []
        for name, arg in zip(_names(updated.args, v1_positional), updated.args):
            if name == "keep_prob":
                arg = keyword_arg("rate", _one_minus(keep_prob)).with_changes(comma=arg.comma)
            elif arg.keyword is None and new_args and new_args[-1].keyword is not None:
                arg = keyword_arg(name, arg.value).with_changes(comma=arg.comma)
            new_args.append(arg)
        self.report(original, f"tf.nn.dropout: keep_prob={source(keep_prob)} -> "
                    f"rate={source(_one_minus(keep_prob))}", fixed=True)
        return updated.with_changes(args=with_commas(new_args, updated.args))

    def _stop_label_gradient(self, original: cst.Call, updated: cst.Call, canonical: str) -> cst.BaseExpression:
        index = next((i for i, arg in enumerate(original.args)
                      if (arg.keyword and arg.keyword.value == "labels") or (i == 0 and arg.keyword is None)),
                     None)
        if index is None:
            return updated
        labels = original.args[index].value
        if isinstance(labels, cst.Call) and direct_tf_name(self, labels.func) == "tf.stop_gradient":
            return updated
        root = self.spelling.root_at(original)
        if root is None:
            return updated
        wrapped = cst.Call(cst.parse_expression(f"{root}.stop_gradient"),
                           [cst.Arg(updated.args[index].value)])
        args = list(updated.args)
        args[index] = args[index].with_changes(value=wrapped)
        self.report(original, f"{canonical}: labels wrapped in tf.stop_gradient (TF1 did not "
                    "backpropagate into labels; TF2's function does)", fixed=True)
        return updated.with_changes(args=args)

    def _iterator(self, original: cst.Call, updated: cst.Call, method: str) -> cst.BaseExpression:
        root = self.spelling.root_at(original)
        if root is None:
            return updated
        receiver = updated.func.value
        self.report(original, f"dataset.{method}() -> tf.compat.v1.data.{method}(dataset): TF2 "
                    "datasets have no iterator methods", fixed=True)
        func = cst.parse_expression(f"{root}.compat.v1.data.{method}")
        return updated.with_changes(func=func, args=with_commas([cst.Arg(receiver), *updated.args],
                                                                updated.args))


def _names(args, positional_names) -> list[str]:
    return [arg.keyword.value if arg.keyword else
            (positional_names[i] if i < len(positional_names) else "") for i, arg in enumerate(args)]


def _bind(args, positional_names) -> dict[str, cst.BaseExpression] | None:
    """{parameter: value} for a call without *args/**kwargs, or None if it does not fit."""
    names = _names(args, positional_names)
    if "" in names or len(set(names)) != len(names) or not set(names) <= set(positional_names):
        return None
    return {name: arg.value for name, arg in zip(names, args)}
