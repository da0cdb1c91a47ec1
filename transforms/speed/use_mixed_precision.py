"""TFM303: mixed precision for migrated Keras-layer models (`--mixed-precision auto|on`).

Float16 (or bfloat16) matmuls and convolutions run on a GPU's Tensor Cores; on a CPU they are
slower or emulated. `auto` writes a program that decides at run time:

    def mixed_precision_policy():
        ...mixed_bfloat16 on compute capability 8.0+, mixed_float16 on 7.x, float32 otherwise
    tf.keras.mixed_precision.set_global_policy(mixed_precision_policy())

`on` sets `mixed_float16` unconditionally. Either way layers whose output reaches code other than
another layer (logits, a loss, softmax) get `dtype="float32"`, each loss given to `tape.gradient` is
scaled inside its tape (`optimizer.scale_loss`, the loss itself under float32), and the optimizers
are wrapped in a LossScaleOptimizer when the policy is mixed_float16 (it unscales the gradients and
skips steps whose gradients overflow). Numerics change, so the transform is unsafe: `tf-migrate
verify` widens its tolerances when the migrated program runs in mixed precision, and says so.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.values import source as code_of
from transforms.common.syntax import fresh_name, walk
from transforms.speed._mixed_precision_plan import MixedPrecisionPlan, plan_mixed_precision
from transforms.base import TFTransform

SETTING = "mixed_precision"
LOSS_SCALE = "tf.keras.mixed_precision.LossScaleOptimizer"

POLICY_FUNCTION = '''
def {name}():
    """mixed_bfloat16 on GPUs of compute capability 8.0+, mixed_float16 on 7.x (Tensor Cores), else float32."""
    for gpu in tf.config.list_physical_devices("GPU"):
        major, _ = tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0))
        if major >= 8:
            return "mixed_bfloat16"
        if major >= 7:
            return "mixed_float16"
    return "float32"
'''


class UseMixedPrecision(TFTransform):
    CODE = "TFM303"
    DESCRIPTION = "Mixed precision for Keras-layer models: float32 logits and loss, loss scaling (--mixed-precision)"
    SAFETY = "unsafe"
    PHASE = 36
    TRIGGERS = ("keras",)
    ENABLED_BY = (SETTING, ("auto", "on"))

    def visit_Module(self, node: cst.Module) -> bool:
        self.mode = self.context.scratch.get("settings", {}).get(SETTING, "off")
        self.plan = MixedPrecisionPlan()
        if self.mode not in ("auto", "on"):
            return False
        self.plan = plan_mixed_precision(node, self.tf_name)
        if self.plan.already_set:
            return False
        if self.plan.problem:
            where, why = self.plan.problem
            self.report(where, f"mixed precision not applied: {why}", fixed=False, severity="warning")
        elif not self.plan.layers:
            self.report(node, "mixed precision not applied: no Keras layers (the policy changes only their "
                              "dtype)", fixed=False, severity="warning")
        if self.plan.problem or not self.plan.layers:
            self.plan = MixedPrecisionPlan()
            return False
        self._name_scalings(node)
        return True

    def _name_scalings(self, module: cst.Module) -> None:
        taken = {n.value for n in walk(module) if isinstance(n, cst.Name)}
        for scaling in self.plan.scalings:
            scaling.scaled = fresh_name(f"scaled_{scaling.loss}", taken)
        self.policy_function = fresh_name("mixed_precision_policy", taken)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        for target, constructor in self.plan.layers.items():
            if original is constructor and target in self.plan.float32_layers and not _has_keyword(updated, "dtype"):
                return _with_keyword(updated, "dtype", '"float32"')
        for scaling in self.plan.scalings:
            if original is scaling.gradient_call:
                first = updated.args[0].with_changes(value=cst.Name(scaling.scaled))
                return updated.with_changes(args=[first, *updated.args[1:]])
        return updated

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.With:
        lines = [_scale_line(scaling) for scaling in self.plan.scalings
                 if scaling.tape_block is original]
        if not lines:
            return updated
        return updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, *lines]))

    def leave_SimpleStatementLine(self, original, updated):
        statement = original.body[0] if len(original.body) == 1 else None
        if not isinstance(statement, cst.Assign):
            return updated
        target = code_of(statement.targets[0].target)
        if statement.value is not self.plan.optimizers.get(target) or \
                target not in {scaling.optimizer for scaling in self.plan.scalings}:
            return updated
        if self.mode == "on":
            wrapped = cst.parse_expression(f"{LOSS_SCALE}({code_of(updated.body[0].value)})")
            return updated.with_changes(body=[updated.body[0].with_changes(value=wrapped)])
        check = cst.parse_statement(f'if tf.keras.mixed_precision.global_policy().name == "mixed_float16":\n'
                                    f"    {target} = {LOSS_SCALE}({target})\n")
        return cst.FlattenSentinel([updated, check])

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.plan.layers:
            return updated
        position = _after_imports(updated)
        if self.mode == "on":
            setup = [cst.parse_statement('tf.keras.mixed_precision.set_global_policy("mixed_float16")\n')
                     .with_changes(leading_lines=[cst.EmptyLine()])]
        else:
            function = cst.parse_module(POLICY_FUNCTION.format(name=self.policy_function)).body[0]
            setup = [function.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]),
                     cst.parse_statement(f"tf.keras.mixed_precision.set_global_policy({self.policy_function}())\n")
                     .with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])]
        kept = sorted(self.plan.float32_layers)
        self.report(original, f"mixed precision ({self.mode}): layers feeding other code kept float32 "
                              f"({', '.join(kept) or 'none'}); {len(self.plan.scalings)} loss(es) scaled; "
                              "check with tf-migrate verify (tolerances are widened)", fixed=True)
        body = list(updated.body)
        return updated.with_changes(body=[*body[:position], *setup, *body[position:]])


def _scale_line(scaling) -> cst.SimpleStatementLine:
    return cst.parse_statement(f"{scaling.scaled} = {scaling.optimizer}.scale_loss({scaling.loss})\n")


def _after_imports(module: cst.Module) -> int:
    """Index after the leading docstring and imports: the policy must be set before any layer exists."""
    position = 0
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) or (isinstance(s, cst.Expr) and index == 0
                                                                and isinstance(s.value, cst.SimpleString))
                for s in statement.body):
            position = index + 1
        else:
            break
    return position


def _has_keyword(call: cst.Call, keyword: str) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == keyword for arg in call.args)


def _with_keyword(call: cst.Call, keyword: str, value: str) -> cst.Call:
    template = cst.parse_expression(f"f(x, {keyword}={value})")
    new = template.args[1]
    if not call.args:
        return call.with_changes(args=[new])
    last = call.args[-1]
    between = call.args[-2].comma if len(call.args) > 1 and isinstance(call.args[-2].comma, cst.Comma) \
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return call.with_changes(args=[*call.args[:-1], last.with_changes(comma=between),
                                   new.with_changes(comma=last.comma)])
