"""TFM503: tf.contrib functions with no core equivalent -> the same algorithm, written into the file.

`tf.contrib.layers.batch_norm(x, decay=0.9, updates_collections=None, scale=True, is_training=t,
scope="bn")` becomes `tf1_batch_norm(...)` with the same arguments, and `tf1_batch_norm` is defined
after the imports: contrib's own algorithm for the arguments it models (see _tf1_emulations.py),
in core TF1 API that the later transforms rename to tf.compat.v1. Variable names, collections,
kernels and update order are contrib's, so checkpoints and `verify` line up. A call passing an
argument the helper does not model is left alone with the reason. These helpers build graph-mode
code, so a file TFM201 turned into tf.functions is left to its findings.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider, ScopeProvider

from transforms.base import TFTransform
from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import insert_definitions, parsed_definitions
from transforms.common.qualnames import dotted_name, tensorflow_alias
from transforms.common.syntax import Refusal, bind_arguments, code, leftmost_name, walk
from transforms.contrib._tf1_emulations import BATCH_NORM, EMULATIONS, OPTIMIZER_CLASSES, Emulation

CONTRIB_MODULE = "tensorflow.contrib"


class EmulateContribFunctions(TFTransform):
    CODE = "TFM503"
    DESCRIPTION = "tf.contrib functions with no core equivalent (batch_norm, optimize_loss) -> their TF1 algorithm, defined in the file"
    SAFETY = "safe"
    PHASE = 45  # after TFM201 decided whether the file stays graph code, before the renames
    TRIGGERS = ("batch_norm", "optimize_loss")
    # Every spelling of an emulated function (an attribute, an imported name, a module alias of it)
    # names its last part; `batch_normalization` is another function.
    IDENTIFIERS = frozenset(name.rsplit(".", 1)[1] for name in EMULATIONS)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.tf = tensorflow_alias(node)
        self.defined = {name for statement in node.body for name in _defined_names(statement)}
        self.eager = any(isinstance(n, cst.Decorator) and self.tf_name(n.decorator) == "tf.function"
                         for n in walk(node))
        self.used: dict[str, Emulation] = {}
        self.replaced_roots: set[int] = set()

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.tf_name(original.func)
        emulation = EMULATIONS.get(name) if name else None
        if emulation is None or _left_to_slim_batch_norm(original, emulation):
            return updated
        try:
            replacement = self._replacement(original, updated, emulation)
        except Refusal as refusal:
            self.report(refusal.node or original, f"{name} not emulated: {refusal.message}", fixed=False,
                        severity="warning")
            return updated
        self.used[emulation.helper_name] = emulation
        self.replaced_roots.add(id(leftmost_name(original.func)))
        self.report(original, f"{name} -> {emulation.helper_name}(), defined in this file: tf.contrib's "
                    f"algorithm ({emulation.what}) on core TF1 ops", fixed=True, severity="warning")
        return replacement

    def _replacement(self, original: cst.Call, updated: cst.Call, emulation: Emulation) -> cst.Call:
        if self.tf is None:
            raise Refusal(original, "the module does not import tensorflow under a name the helper can use")
        if self.eager:
            raise Refusal(original, "the file runs eagerly (tf.function), and the helper is graph-mode code")
        if emulation.helper_name in self.defined:
            raise Refusal(original, f"the file already defines {emulation.helper_name}")
        bound = bind_arguments(original, list(emulation.signature), emulation.contrib_name)
        for parameter in sorted(emulation.required - set(bound)):
            raise Refusal(original, f"without {parameter}= contrib takes a path the helper does not model")
        for parameter, value in bound.items():
            if parameter not in emulation.modelled:
                raise Refusal(value, f"{parameter}= is not modelled")
            accepted = emulation.accepted_values.get(parameter)
            if accepted is not None and code(value) not in accepted:
                raise Refusal(value, f"{parameter}={code(value)} is not modelled (only {', '.join(sorted(accepted))})")
        arguments = [arg.with_changes(value=self._argument_value(parameter, arg.value))
                     for parameter, arg in zip(_parameters(updated, emulation), updated.args)]
        return updated.with_changes(func=cst.Name(emulation.helper_name), args=arguments)

    def _argument_value(self, parameter: str, value: cst.BaseExpression) -> cst.BaseExpression:
        """optimize_loss's optimizer name becomes the TF1 class contrib constructed for it."""
        if parameter != "optimizer":
            return value
        name = code(value).strip("'\"")
        return cst.parse_expression(f"{self.tf}.{OPTIMIZER_CLASSES[name]}")

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.used:
            return updated
        helpers = parsed_definitions([emulation.source for emulation in self.used.values()], self.tf)
        body = _without_imports(list(updated.body), self._dead_contrib_imports(original))
        return updated.with_changes(body=insert_definitions(body, position_after_imports(body), helpers))

    def _dead_contrib_imports(self, module: cst.Module) -> set[str]:
        """Names bound by `import tensorflow.contrib... as name` that only the replaced calls used:
        the import cannot run on TensorFlow 2 and goes with them."""
        scope = self.get_metadata(ScopeProvider, module, None)
        dead = set()
        for assignment in scope.assignments if scope is not None else ():
            node = getattr(assignment, "node", None)
            references = [access.node for access in assignment.references]
            if isinstance(node, cst.Import) and _binds_contrib(node, assignment.name) and references \
                    and all(id(reference) in self.replaced_roots for reference in references):
                dead.add(assignment.name)
        return dead


def _left_to_slim_batch_norm(call: cst.Call, emulation: Emulation) -> bool:
    """batch_norm keeping its moving averages in UPDATE_OPS (no `updates_collections=None`) is
    TFM505's: tf-slim's layer path, a different algorithm from the in-place one modelled here."""
    if emulation is not BATCH_NORM:
        return False
    collections = next((arg.value for arg in call.args if arg.keyword and arg.keyword.value == "updates_collections"),
                       None)
    return collections is None or code(collections) != "None"


def _binds_contrib(node: cst.Import, name: str) -> bool:
    return any(alias.asname is not None and isinstance(alias.asname.name, cst.Name)
               and alias.asname.name.value == name and dotted_name(alias.name).startswith(CONTRIB_MODULE)
               for alias in node.names)


def _without_imports(body: list[cst.BaseStatement], names: set[str]) -> list[cst.BaseStatement]:
    """`body` without the `import ... as name` aliases binding `names` (and statements left empty)."""
    if not names:
        return body
    kept = []
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                and isinstance(statement.body[0], cst.Import):
            aliases = [alias for alias in statement.body[0].names
                       if not (alias.asname and isinstance(alias.asname.name, cst.Name)
                               and alias.asname.name.value in names)]
            if not aliases:
                continue
            if len(aliases) != len(statement.body[0].names):
                aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                statement = statement.with_changes(body=[statement.body[0].with_changes(names=aliases)])
        kept.append(statement)
    return kept


def _parameters(call: cst.Call, emulation: Emulation) -> list[str]:
    return [arg.keyword.value if arg.keyword else emulation.signature[index]
            for index, arg in enumerate(call.args)]


def _defined_names(statement: cst.BaseStatement) -> list[str]:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    return []
