"""TFM505: slim's batch_norm used as a layer (`normalizer_fn=slim.batch_norm`, or called with its
moving averages in UPDATE_OPS) -> `tf1_slim_batch_norm`, defined in the file.

tf-slim 1.1 runs on TensorFlow 2.21 except its batch_norm, which imports the core BatchNormalization
layer from a tf-keras module path that no longer exists. The helper is tf-slim's own code for that
path (the same layer class, reached through `tf.compat.v1.layers` with legacy Keras selected; the
same variable getter, collections and named outputs) and shares tf-slim's arg_scope key, so
`slim.arg_scope([slim.batch_norm], is_training=False)` still sets its defaults. A `slim.batch_norm`
only listed in an arg_scope is left as it is: it names the function, it does not run it. A call
passing what the helper does not model (batch_weights, zero_debias_moving_mean, other update
collections) is left alone with the reason; given such arguments at run time (through
normalizer_params) the helper raises rather than compute something else. TFM503 takes the calls
with `updates_collections=None` first. Graph-mode code, so a file TFM201 turned into tf.functions is
left to its findings.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.base import TFTransform
from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import insert_definitions, parsed_definitions
from transforms.common.qualnames import dotted_name, tensorflow_alias
from transforms.common.syntax import Refusal, arg_scope_listed, bind_arguments, code, code_names, walk
from transforms.contrib._tf1_emulations import BATCH_NORM, SLIM_BATCH_NORM_SOURCE

CONTRIB_BATCH_NORM = "tf.contrib.layers.batch_norm"
HELPER = "tf1_slim_batch_norm"
UPDATE_OPS_SPELLINGS = frozenset({"tf.GraphKeys.UPDATE_OPS", "tf.compat.v1.GraphKeys.UPDATE_OPS"})
UNMODELLED_WHEN_GIVEN = ("batch_weights", "zero_debias_moving_mean")


class EmulateSlimBatchNorm(TFTransform):
    CODE = "TFM505"
    DESCRIPTION = "slim batch_norm with UPDATE_OPS (called, or as normalizer_fn) -> tf-slim's layer path, defined in the file"
    SAFETY = "safe"
    PHASE = 46  # after TFM503 (batch_norm with updates_collections=None), before TFM504 (import tf_slim)
    TRIGGERS = ("batch_norm",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    @classmethod
    def applies_to(cls, code: str) -> bool:
        """Only an attribute resolving to slim's batch_norm is rewritten or reported, and such an
        attribute is named `batch_norm` (the trigger also matches `batch_normalization`)."""
        if not super().applies_to(code):
            return False
        names = code_names(code)
        return names is None or "batch_norm" in names.attributes

    def visit_Module(self, node: cst.Module) -> None:
        self.tf = tensorflow_alias(node)
        self.eager = any(isinstance(n, cst.Decorator) and self.tf_name(n.decorator) == "tf.function"
                         for n in walk(node))
        self.defined = {statement.name.value for statement in node.body
                        if isinstance(statement, (cst.FunctionDef, cst.ClassDef))}
        self.scope_listed = {id(listed) for listed in arg_scope_listed(node)}
        self.calls = {id(n.func): n for n in walk(node) if isinstance(n, cst.Call)}
        self.replaced = False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if id(original) in self.scope_listed or self.tf_name(original) != CONTRIB_BATCH_NORM:
            return updated
        try:
            self._check(original)
        except Refusal as refusal:
            self.report(refusal.node or original, f"{CONTRIB_BATCH_NORM} not emulated: {refusal.message}",
                        fixed=False, severity="warning")
            return updated
        self.replaced = True
        self.report(original, f"{dotted_name(original)} -> {HELPER}(), defined in this file: tf-slim's "
                    "batch_norm with moving averages in UPDATE_OPS (the core layer it used, with legacy "
                    "Keras), which tf-slim 1.1 cannot load on TensorFlow 2.21", fixed=True, severity="warning")
        return cst.Name(HELPER)

    def _check(self, reference: cst.Attribute) -> None:
        if self.tf is None:
            raise Refusal(reference, "the module does not import tensorflow under a name the helper can use")
        if self.eager:
            raise Refusal(reference, "the file runs eagerly (tf.function), and the helper is graph-mode code")
        if HELPER in self.defined:
            raise Refusal(reference, f"the file already defines {HELPER}")
        call = self.calls.get(id(reference))
        if call is None:
            return  # passed as a value: the helper raises for what it does not model
        bound = bind_arguments(call, list(BATCH_NORM.signature), CONTRIB_BATCH_NORM)
        for parameter in UNMODELLED_WHEN_GIVEN:
            if parameter in bound and code(bound[parameter]) not in ("None", "False"):
                raise Refusal(bound[parameter], f"{parameter}= takes a path without the core layer")
        collections = bound.get("updates_collections")
        if collections is not None and code(collections) not in UPDATE_OPS_SPELLINGS:
            raise Refusal(collections, f"updates_collections={code(collections)} takes a path without the core layer")

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.replaced:
            return updated
        body = list(updated.body)
        position = _after_module_aliases(body, position_after_imports(body))
        body[position:position] = [cst.parse_statement("import tf_slim\n")]
        helpers = parsed_definitions([SLIM_BATCH_NORM_SOURCE], self.tf)
        return updated.with_changes(body=insert_definitions(body, position + 1, helpers))


def _after_module_aliases(body: list[cst.BaseStatement], position: int) -> int:
    """Past the `slim = tf.contrib.slim`-style aliases right after the imports (the helper's
    neighbours read better after them, and TFM504 turns that one into an import)."""
    while position < len(body) and _is_module_alias(body[position]):
        position += 1
    return position


def _is_module_alias(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
            and isinstance(statement.body[0].targets[0].target, cst.Name)
            and bool(dotted_name(statement.body[0].value)))
