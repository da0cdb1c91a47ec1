"""TFM302: compile the generated step functions with XLA (`--jit on`).

XLA fuses a step's small ops into a few kernels, which helps most where per-op overhead dominates
(small models, GPUs). It may also reorder floating-point arithmetic, so results can differ in the
last bits: the transform is unsafe (off unless selected) and `tf-migrate verify` judges the result
with its tolerances. Only step functions get it, those with an `input_signature` (what TFM201 and
TFM301 write): their shapes are known, so XLA compiles each once. The setting `jit` (`--jit`) is
`off` by default; `auto` leaves the choice to measurement (`tf-migrate verify` of both variants)
and changes nothing here; `on` adds `jit_compile=True`.
"""
from __future__ import annotations

import libcst as cst

from transforms.base import TFTransform

SETTING = "jit"


class CompileWithXla(TFTransform):
    CODE = "TFM302"
    DESCRIPTION = "Add jit_compile=True to generated tf.function step functions (--jit on)"
    SAFETY = "unsafe"
    PHASE = 35
    ENABLED_BY = (SETTING, ("on",))

    def visit_Module(self, node: cst.Module) -> None:
        self.enabled = self.context.scratch.get("settings", {}).get(SETTING, "off") == "on"

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator) -> cst.Decorator:
        call = updated.decorator
        if not self.enabled or not isinstance(call, cst.Call) or not isinstance(original.decorator, cst.Call):
            return updated
        if self.tf_name(original.decorator.func) != "tf.function":
            return updated
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if "input_signature" not in keywords or "jit_compile" in keywords:
            return updated
        self.report(original, "step function compiled with XLA (jit_compile=True); results may differ "
                    "in the last bits: check with tf-migrate verify", fixed=True)
        last = call.args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        jit = cst.Arg(keyword=cst.Name("jit_compile"), value=cst.Name("True"),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        return updated.with_changes(decorator=call.with_changes(args=[*call.args[:-1], last, jit]))
