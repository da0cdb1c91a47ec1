"""TFM502: tf.contrib functions with an exact core equivalent -> that function.

`slim.one_hot_encoding(labels, 4)` -> `tf.one_hot(labels, 4, 1.0, 0.0)`, `tf.contrib.layers.xavier_initializer()`
-> `tf.glorot_uniform_initializer()`, `tf.contrib.framework.get_or_create_global_step()` ->
`tf.train.get_or_create_global_step()`. The table (transforms/data/contrib_ops.json) says for each why
the two compute the same; a call passing an argument outside what that reason covers (an
`outputs_collections`, a truncated-normal Xavier) is left alone with the reason. The result is TF1
code, which the later transforms convert (TFM201) or rename (TFM101) like any other."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.common.graph_symbols import table
from transforms.common.syntax import Refusal, bind_arguments, code
from transforms.base import TFTransform
from transforms.common.qualnames import tensorflow_alias


class ReplaceContribOps(TFTransform):
    CODE = "TFM502"
    DESCRIPTION = "tf.contrib functions with an exact core equivalent (one_hot_encoding, xavier_initializer, ...) -> it"
    SAFETY = "safe"
    PHASE = 14
    TRIGGERS = ("contrib", "slim")

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.tf = tensorflow_alias(node)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.tf_name(original.func)
        entry = table("contrib_ops").get(name) if name else None
        if entry is None:
            return updated
        try:
            replacement = self._replacement(original, updated, name, entry)
        except Refusal as refusal:
            self.report(refusal.node or original, f"{name} not replaced: {refusal.message}", fixed=False,
                        severity="warning")
            return updated
        self.report(original, f"{name} -> {entry['target']} ({entry['why']})", fixed=True)
        return replacement

    def _replacement(self, original: cst.Call, updated: cst.Call, name: str, entry: dict) -> cst.Call:
        if self.tf is None:
            raise Refusal(original, "the module does not import tensorflow under a name the rewrite can use")
        if any(arg.star for arg in original.args):
            raise Refusal(original, "*args / **kwargs")
        bound = bind_arguments(updated, entry["signature"], name)
        for parameter, value in bound.items():
            required = entry["conditions"].get(parameter)
            if required is not None and code(value) != required:
                raise Refusal(original, f"{parameter}={code(value)} (the equivalence holds for {required} only)")
            if required is None and parameter not in entry["keywords"]:
                raise Refusal(original, f"{parameter}= has no counterpart in {entry['target']}")
        arguments = []
        for index, parameter in enumerate(entry["signature"]):
            target = entry["keywords"].get(parameter)
            value = code(bound[parameter]) if parameter in bound else entry["defaults"].get(parameter)
            if target is None or value is None:
                continue
            arguments.append(value if index < entry["positional"] and index == len(arguments) else f"{target}={value}")
        function = self.tf + entry["target"][len("tf"):]
        return cst.parse_expression(f"{function}({', '.join(arguments)})")
