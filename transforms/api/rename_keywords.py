"""TFM102: move calls onto TF2 functions whose signature changed, or keep them on tf.compat.v1.

Covers the v1 functions listed in transforms/data/keywords.json: those whose TF2 namesake (or the
function TF's converter chose, e.g. tf.arg_max -> tf.argmax) takes different arguments. A call is
rewritten only when every argument provably means the same to the TF2 function (see
transforms/api/_call_arguments.py): keyword renames (keep_dims -> keepdims), positional arguments turned into
keywords where the order changed, arguments dropped only where TF2 behaves the same. Any other call,
and any use that is not a call (`fn = tf.nn.dropout`), is pinned to tf.compat.v1 so that it keeps
its TF1 meaning under TF2, with a finding saying why.
"""
from __future__ import annotations

import libcst as cst

from transforms.api._call_arguments import Unsafe, convert_arguments
from transforms.api._call_checks import check_structural_rewrite, simple_bindings, unpartitioned, uses_v1_dataset_api
from transforms.api._references import ReferenceTransform
from transforms.api._tf_spelling import direct_tf_name, raw_name
from transforms.common.tables import COMPAT_PREFIX, FunctionSpec, keyword_table, names_a_table_symbol


class RenameKeywords(ReferenceTransform):
    CODE = "TFM102"
    DESCRIPTION = ("Rewrite arguments of calls whose TF2 function changed signature (keyword renames, "
                   "reorders); keep unprovable calls on tf.compat.v1")
    PHASE = 52

    @classmethod
    def applies_to(cls, code: str) -> bool:
        return names_a_table_symbol(code)

    def visit_Module(self, node: cst.Module) -> bool:
        self.functions = keyword_table().functions
        self._calls: dict[int, FunctionSpec] = {}
        self._pins: dict[int, cst.BaseExpression] = {}
        self._v1_datasets = uses_v1_dataset_api(self, node)
        self._module = node
        self._bindings = None
        return super().visit_Module(node)

    def has_rewrites(self) -> bool:
        return bool(self._pins)

    def dry_leave(self, node: cst.CSTNode) -> bool:
        return id(node) in self._calls and self.leave_Call(node, node) is not node

    def _module_bindings(self) -> tuple[cst.Module, dict]:
        """The module and its simple bindings (computed once, for the partitioned-parameter check)."""
        if self._bindings is None:
            self._bindings = simple_bindings(self._module)
        return self._module, self._bindings

    def visit_Call(self, node: cst.Call) -> bool:
        spec = self.functions.get(direct_tf_name(self, node.func) or "")
        if spec is not None:
            self._calls[id(node)] = spec
            self.cover(node.func)
        return True

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        spec = self._calls.get(id(original))
        if spec is None:
            return updated
        respell = raw_name(spec.target) not in self.raw_names(original.func)
        try:
            check_structural_rewrite(self, original, spec)
            self._check_dataset_class(spec, respell)
            irrelevant = unpartitioned(self, original, spec, self._module_bindings)
            converted = convert_arguments(updated, spec, self.functions.get(spec.target), irrelevant)
        except Unsafe as why:
            return self._pin_call(original, updated, spec, str(why))
        func = updated.func
        if respell:
            func = self.spelling.expression(original.func, spec.target)
            if func is None:
                return updated
            self.rewritten(original.func)
        if not (converted.changes or respell):
            return updated
        if converted.changes:
            what = f"{spec.name} now calls TF2's {spec.target}" if respell else spec.name
            self.report(original, f"{what}: {'; '.join(converted.changes)}", fixed=True)
        else:
            self.report(original, f"{spec.name} now calls TF2's {spec.target} (its arguments mean the "
                        "same there)", fixed=True)
        return updated.with_changes(func=func, args=converted.args)

    def _check_dataset_class(self, spec: FunctionSpec, respell: bool) -> None:
        if respell and spec.is_class and spec.name.startswith("tf.data.") and self._v1_datasets:
            raise Unsafe("this file still uses TF1-only dataset members (make_one_shot_iterator, "
                         "output_types, ...), which TF2 datasets lack")

    def _pin_call(self, original: cst.Call, updated: cst.Call, spec: FunctionSpec, why: str) -> cst.Call:
        compat = COMPAT_PREFIX + spec.name[len("tf."):]
        func = updated.func
        if raw_name(compat) not in self.raw_names(original.func):
            func = self.spelling.expression(original.func, compat)
            if func is None:
                self.report(original, f"{spec.name}: {why}; could not spell {compat} here",
                            fixed=False, severity="warning")
                return updated
            self.rewritten(original.func)
        # Reported whether or not the call was already spelled tf.compat.v1 (by the user, or by
        # TFM104 from `import tensorflow.compat.v1 as tf`), so both import styles read the same.
        self.report(original, f"{spec.name}: {why}; the call runs on {compat}", fixed=True,
                    severity="warning")
        return updated if func is updated.func else updated.with_changes(func=func)

    def claim(self, node: cst.BaseExpression, canonical: str) -> bool:
        """A use other than a call: its arguments are out of sight, so a function is pinned."""
        spec = self.functions.get(canonical)
        if spec is None:
            return False
        if spec.is_class:
            return self._upgrade_dataset_class(node, spec)
        compat = COMPAT_PREFIX + canonical[len("tf."):]
        if raw_name(compat) in self.raw_names(node):
            return True
        replacement = self.spelling.expression(node, compat)
        if replacement is not None:
            self._pins[id(node)] = replacement
            self.report(node, f"{canonical} is used without being called, so its arguments cannot be "
                        f"checked against TF2's {spec.target}; it now refers to {compat}",
                        fixed=True, severity="warning")
        return True

    def _upgrade_dataset_class(self, node: cst.BaseExpression, spec: FunctionSpec) -> bool:
        """`tf.compat.v1.data.Dataset.range(3)` -> `tf.data.Dataset.range(3)` when nothing in the file
        needs a TF1 dataset. Other uses of drop-in classes are left as they are."""
        names = self.raw_names(node)
        if not spec.name.startswith("tf.data.") or self._v1_datasets or raw_name(spec.target) in names \
                or raw_name(COMPAT_PREFIX + spec.name[len("tf."):]) not in names:
            return False
        replacement = self.spelling.expression(node, spec.target)
        if replacement is not None:
            self._pins[id(node)] = replacement
            self.report(node, f"tf.compat.v1.{spec.name[len('tf.'):]} -> {spec.target}: nothing in this "
                        "file uses TF1-only dataset members", fixed=True)
        return True

    def replace(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression | None:
        return self._pins.get(id(original))

