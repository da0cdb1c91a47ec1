"""The TF1 variables of the Keras layers that `tf.layers.*` calls became: their TF1 names
(`<variable scopes>/<layer name>/<weight>`, e.g. `discriminator/conv2d_1/kernel`) and the Keras
attributes that hold them (`conv2d_1.kernel`), for `tf.trainable_variables()` lists filtered by
name, a GAN's `d_vars = [v for v in t_vars if v.name.startswith('discriminator')]`
(transforms/graph/layers/variable_lists.py).

An unnamed layer took a unique name in its variable scope (`dense`, `dense_1`, ...); a selection
is accepted only where it does not depend on which."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from transforms.common.syntax import Refusal, code, string_value
from transforms.graph.layers.keras_layers import LayerUse

# Keras class -> its trainable weights in TF1's creation order, each with the constructor flag that
# leaves it out; the Keras attribute and the TF1 variable carry the weight's name.
_WEIGHTS = {
    **{conv: (("kernel", None), ("bias", "use_bias"))
       for conv in ("Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose")},
    "BatchNormalization": (("gamma", "scale"), ("beta", "center")),
}
_UNIQUE_SUFFIXES = ("", "_1", "_12")


@dataclass
class LayerVariables:
    use: LayerUse
    scope: str | None   # the variable-scope path, "discriminator/"; None when a scope is not a literal
    layer_name: str
    named: bool         # an explicit name=, not made unique by TF1
    weights: list[str]

    def attributes(self, selects: Callable[[str], bool] | None, call: cst.Call) -> list[str]:
        """`<layer>.<weight>` for the weights `selects` keeps of their TF1 names (all without it)."""
        kept = [weight for weight in self.weights if selects is None or self._selected(weight, selects, call)]
        return [f"{self.use.object_name}.{weight}" for weight in kept]

    def _selected(self, weight: str, selects: Callable[[str], bool], call: cst.Call) -> bool:
        if self.scope is None:
            raise Refusal(call, f"tf.trainable_variables() filtered by name: the variable scope of the layer "
                                f"'{self.use.object_name}' is not a string literal")
        suffixes = ("",) if self.named else _UNIQUE_SUFFIXES
        verdicts = {selects(f"{self.scope}{self.layer_name}{suffix}/{weight}") for suffix in suffixes}
        if len(verdicts) > 1:
            raise Refusal(call, f"tf.trainable_variables() filtered by name: whether it keeps the layer "
                                f"'{self.use.object_name}' depends on the unique name TF1 gave it")
        return verdicts.pop()


def layer_variables(use: LayerUse, analyzer, scope: str | None) -> LayerVariables | None:
    """The variables of a converted `tf.layers` call created in variable scope `scope`; None for
    other layers (contrib / slim layers name their variables otherwise)."""
    tf_name = analyzer.category(use.call.func)[0] or ""
    spec = _WEIGHTS.get(use.keras)
    if not tf_name.startswith("tf.layers.") or spec is None:
        return None
    construction = cst.parse_expression(use.construction)
    keywords = {arg.keyword.value: arg.value for arg in construction.args if arg.keyword}
    weights = [weight for weight, flag in spec if flag is None or code(keywords.get(flag, cst.Name("True"))) != "False"]
    if code(keywords.get("trainable", cst.Name("True"))) == "False":
        weights = []
    explicit = string_value(keywords["name"]) if "name" in keywords else None
    return LayerVariables(use, scope, explicit or tf_name.rsplit(".", 1)[-1], explicit is not None, weights)


def scopes_in_function(function: cst.FunctionDef, call: cst.Call, analyzer) -> str | None:
    """The variable-scope path the `with tf.variable_scope("<literal>")` blocks of `function` give
    `call` ("" outside any; None when one around it is not a literal)."""
    def path(node: cst.CSTNode, prefix: str | None) -> str | None | bool:
        if node is call:
            return prefix
        if isinstance(node, cst.With) and prefix is not None:
            for item in node.items:
                opened = item.item
                if isinstance(opened, cst.Call) and analyzer.category(opened.func)[0] == "tf.variable_scope":
                    label = string_value(opened.args[0].value) if opened.args else None
                    prefix = None if label is None else f"{prefix}{label}/"
        for child in node.children:
            found = path(child, prefix)
            if found is not False:
                return found
        return False

    found = path(function.body, "")
    return None if found is False else found
