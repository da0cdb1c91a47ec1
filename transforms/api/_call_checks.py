"""Checks TFM102 makes before moving a call onto its TF2 function, beyond the argument matching
of transforms/api/_call_arguments.py."""
from __future__ import annotations

import libcst as cst

from transforms.api._call_arguments import Unsafe
from transforms.api._tf_spelling import direct_tf_name
from transforms.common.tables import FunctionSpec
from transforms.common.syntax import module_code, scan

STOP_GRADIENT = "tf.stop_gradient"
# What TF1 datasets and iterators have and TF2 datasets lack.
V1_DATASET_MEMBERS = frozenset({"make_one_shot_iterator", "make_initializable_iterator",
                                "output_types", "output_shapes", "output_classes"})


def uses_v1_dataset_api(transform, module: cst.Module) -> bool:
    """Whether any `x.make_one_shot_iterator`-like member is used on a non-TensorFlow receiver."""
    code = module_code(module)
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


# partition_strategy says how ids are spread over a *list* of partitions; TF1 wrapped a single
# tensor in a list of one, where every strategy gathers the same rows. Parameter(s) that must be
# single tensors for the omitted strategy not to matter, per function.
PARTITIONED_PARAMETERS = {"tf.nn.embedding_lookup": ("params",), "tf.nn.embedding_lookup_sparse": ("params",),
                          "tf.nn.nce_loss": ("weights", "biases"), "tf.nn.sampled_softmax_loss": ("weights", "biases")}
# What a name bound only to one of these holds is a single tensor (a variable without a partitioner).
_SINGLE_TENSORS = frozenset({"tf.Variable", "tf.get_variable", "tf.constant", "tf.convert_to_tensor",
                             "tf.random_uniform", "tf.random_normal", "tf.truncated_normal", "tf.zeros", "tf.ones",
                             "tf.identity", "tf.reshape", "tf.transpose", "tf.matmul", "tf.concat", "tf.stack",
                             "tf.nn.l2_normalize", "tf.nn.embedding_lookup"})


def unpartitioned(transform, call: cst.Call, spec: FunctionSpec, module_bindings) -> frozenset[str]:
    """The dropped parameters whose TF1 default cannot matter for this call: `partition_strategy`
    when the partitioned parameters are provably single tensors (never a list, and no partitioner
    anywhere in the module). `module_bindings()`: the module and its simple_bindings."""
    parameters = PARTITIONED_PARAMETERS.get(spec.name)
    if parameters is None:
        return frozenset()
    module, bindings = module_bindings()
    if "partitioner" in module_code(module):
        return frozenset()
    values = [argument(call, name, spec) for name in parameters]
    if all(value is not None and _single_tensor(transform, value, bindings) for value in values):
        return frozenset({"partition_strategy"})
    return frozenset()


def _single_tensor(transform, value: cst.BaseExpression, bindings, seen: frozenset[str] = frozenset()) -> bool:
    if isinstance(value, cst.Call):
        return direct_tf_name(transform, value.func) in _SINGLE_TENSORS
    if isinstance(value, cst.UnaryOperation):
        return _single_tensor(transform, value.expression, bindings, seen)
    if isinstance(value, cst.BinaryOperation):  # `embeddings / norm`: an operand is a tensor, so is the result
        return _single_tensor(transform, value.left, bindings, seen) \
            or _single_tensor(transform, value.right, bindings, seen)
    key = _binding_key(value)
    found = bindings.get(key) if key and key not in seen else None
    return bool(found) and all(isinstance(bound, (cst.Call, cst.BinaryOperation, cst.UnaryOperation))
                               and _single_tensor(transform, bound, bindings, seen | {key}) for bound in found)


def _binding_key(target: cst.BaseExpression) -> str | None:
    """`name` or `self.name` (any receiver named `self`), as one key; None for other expressions."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        return "self." + target.attr.value
    return None


def simple_bindings(module: cst.Module) -> dict[str, list[cst.BaseExpression] | None]:
    """key -> the values of its plain `key = value` assignments anywhere in the module; None for a key
    also bound otherwise (a parameter, a loop or `with` target, unpacking, augmented assignment...)."""
    bindings: dict[str, list | None] = {}

    def other(target: cst.CSTNode) -> None:
        for node in [target, *_nested_targets(target)]:
            key = _binding_key(node)
            if key:
                bindings[key] = None

    class Scan(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                key = _binding_key(target.target)
                if key and len(node.targets) == 1:
                    if bindings.get(key, []) is not None:
                        bindings.setdefault(key, []).append(node.value)
                else:
                    other(target.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            other(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            other(node.target)

        def visit_For(self, node: cst.For) -> None:
            other(node.target)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            other(node.target)

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                other(node.asname.name)

        def visit_Param(self, node: cst.Param) -> None:
            other(node.name)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            other(node.target)

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            other(node.asname.name if node.asname else node.name)

        def visit_Global(self, node: cst.Global) -> None:
            for item in node.names:
                other(item.name)

    scan(module, Scan())
    return bindings


def _nested_targets(target: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [node for element in target.elements for node in [element.value, *_nested_targets(element.value)]]
    if isinstance(target, cst.StarredElement):
        return [target.value]
    return []

