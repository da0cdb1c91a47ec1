"""Checks TFM102 makes before moving a call onto its TF2 function, beyond the argument matching
of transforms/api/_call_arguments.py."""
from __future__ import annotations

import libcst as cst

from transforms.api._call_arguments import Unsafe
from transforms.api._tf_spelling import direct_tf_name
from transforms.common.tables import FunctionSpec
from transforms.common.syntax import scan

STOP_GRADIENT = "tf.stop_gradient"
# What TF1 datasets and iterators have and TF2 datasets lack.
V1_DATASET_MEMBERS = frozenset({"make_one_shot_iterator", "make_initializable_iterator",
                                "output_types", "output_shapes", "output_classes"})


def uses_v1_dataset_api(transform, module: cst.Module) -> bool:
    """Whether any `x.make_one_shot_iterator`-like member is used on a non-TensorFlow receiver."""
    code = module.code
    if not any(member in code for member in V1_DATASET_MEMBERS):
        return False
    found = []

    class Scan(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in V1_DATASET_MEMBERS and direct_tf_name(transform, node) is None:
                found.append(node)

    scan(module, Scan())
    return bool(found)


# Rewrites of TF's converter whose effect shows in the arguments, so the argument check covers them:
# dropout's keep_prob (TFM103 turns it into rate) and name_scope's default_name/values.
REWRITES_SEEN_IN_ARGUMENTS = (None, "dropout", "name_scope")


def check_structural_rewrite(transform, call: cst.Call, spec: FunctionSpec) -> None:
    """Calls whose TF2 meaning also needs TF's structural rewrite (TFM103) are only moved once
    that rewrite is in place."""
    if spec.rewrite in REWRITES_SEEN_IN_ARGUMENTS:
        return
    if spec.rewrite == "softmax_cross_entropy_with_logits":
        labels = argument(call, "labels", spec)
        if labels is None or not isinstance(labels, cst.Call) \
                or direct_tf_name(transform, labels.func) != STOP_GRADIENT:
            raise Unsafe("TF2's version also backpropagates into labels; TF1 gradients need "
                         "labels wrapped in tf.stop_gradient (TFM103 does that)")
        return
    raise Unsafe(f"TF's converter rewrites this call structurally ({spec.rewrite}), which is not automated")


def argument(call: cst.Call, name: str, spec: FunctionSpec) -> cst.BaseExpression | None:
    """The value passed for v1 parameter `name`, by keyword or by position."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    index = spec.v1_positional.index(name) if name in spec.v1_positional else len(positional)
    return positional[index].value if index < len(positional) else None
