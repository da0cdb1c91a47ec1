"""`tf.app.flags` / `tf.flags` / `tf.app.run` / `tf.logging` -> `absl.flags` / `absl.app` / `absl.logging`.

TF1's modules were thin wrappers over absl, so flag names, defaults, help and the `main(argv)`
convention carry over unchanged. Two traps are handled: absl already defines some flags (`log_dir`,
`verbosity`, ...) and a script defining its own dies with DuplicateFlagError, so those definitions get
`allow_override=True`; and a file that already binds `logging` (the standard library's) gets
`absl_logging` instead of a clash.
"""
from __future__ import annotations

import libcst as cst

from transforms.base import TFTransform
from transforms.common.qualnames import dotted_name

MODULES = {"tf.app.flags": "flags", "tf.flags": "flags", "tf.logging": "logging", "tf.app": "app"}
LOGGING_RENAMES = {"warn": "warning", "WARN": "WARNING"}
# Flags absl itself defines once absl.logging / absl.app are imported (which TensorFlow does).
ABSL_OWN_FLAGS = frozenset({
    "log_dir", "logtostderr", "alsologtostderr", "verbosity", "v", "stderrthreshold",
    "showprefixforinfo", "logger_levels", "only_check_args", "pdb_post_mortem", "pdb",
    "run_with_pdb", "run_with_profiling", "profile_file", "use_cprofile_for_profiling",
})


class UseAbslFlagsAndLogging(TFTransform):
    CODE = "TFM401"
    DESCRIPTION = "tf.app.flags / tf.flags / tf.app.run / tf.logging -> absl.flags / absl.app / absl.logging"
    PHASE = 40
    TRIGGERS = ("flags", "logging", "app")

    def visit_Module(self, node: cst.Module) -> None:
        taken = _top_level_bindings(node)
        self.local_names = {module: (module if module not in taken else f"absl_{module}")
                            for module in ("flags", "app", "logging")}
        self.has_main = "main" in taken

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        """Rewrite the outermost matching attribute chain only: its parts are not visited."""
        return not self._matches(node)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return (self._matches(original) and self._replacement(original)) or updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return (self._matches(original) and self._replacement(original)) or updated

    def _matches(self, node: cst.BaseExpression) -> bool:
        name = self.tf_name(node) or ""
        return any(name == prefix or name.startswith(prefix + ".") for prefix in MODULES)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        name = self.tf_name(original.func) or ""
        if name in ("tf.app.flags.DEFINE_", "tf.flags.DEFINE_") or ".DEFINE_" not in name:
            return self._complete_app_run(original, updated) if name == "tf.app.run" else updated
        flag = _flag_name(original)
        if flag in ABSL_OWN_FLAGS and not any(a.keyword and a.keyword.value == "allow_override" for a in original.args):
            self.report(original, f"absl already defines the flag '{flag}'; added allow_override=True so the "
                        "definition does not fail with DuplicateFlagError", fixed=True, severity="warning")
            return updated.with_changes(args=[*updated.args, _keyword("allow_override", cst.Name("True"))])
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        """`flags = tf.app.flags` would become `flags = flags`: drop it, the absl import binds it."""
        if len(original.body) == 1 and isinstance(before := original.body[0], cst.Assign) \
                and isinstance(after := updated.body[0], cst.Assign) and len(after.targets) == 1 \
                and isinstance(after.targets[0].target, cst.Name) and self._matches(before.value) \
                and isinstance(after.value, cst.Name) and after.value.value == after.targets[0].target.value:
            return cst.RemoveFromParent()
        return updated

    def _replacement(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        name = self.tf_name(node)
        if name is None:
            return None
        for prefix, module in MODULES.items():
            if name == prefix or name.startswith(prefix + "."):
                return self._spell(module, name[len(prefix) + 1:], node)
        return None

    def _spell(self, module: str, rest: str, node: cst.CSTNode) -> cst.BaseExpression | None:
        if module == "app" and rest not in ("run",):
            return None  # only tf.app.run (and tf.app.flags, matched first) have absl homes
        if module == "logging" and rest == "TaskLevelStatusMessage":
            self.report(node, "tf.logging.TaskLevelStatusMessage has no absl equivalent", fixed=False,
                        severity="warning")
            return None
        local = self.local_names[module]
        self.add_import("absl", module, None if local == module else local)
        parts = [local] + ([LOGGING_RENAMES.get(rest, rest)] if module == "logging" and rest else
                           rest.split(".") if rest else [])
        return cst.parse_expression(".".join(parts))

    def _complete_app_run(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """absl's app.run needs `main`; TF1's defaulted to the module's `main`."""
        if original.args:
            return updated
        if not self.has_main:
            self.report(original, "tf.app.run() without a module-level main(): pass your entry point to "
                        "app.run(...)", fixed=False, severity="warning")
            return updated
        return updated.with_changes(args=[cst.Arg(cst.Name("main"))])


def _flag_name(call: cst.Call) -> str | None:
    for index, arg in enumerate(call.args):
        if (arg.keyword is None and index == 0) or (arg.keyword and arg.keyword.value == "name"):
            if isinstance(arg.value, cst.SimpleString):
                return arg.value.evaluated_value
    return None


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def _top_level_bindings(module: cst.Module) -> set[str]:
    """Names bound at module level by imports, assignments, defs and classes, except aliases of
    TensorFlow's own flags/logging modules (those are what this transform replaces)."""
    names: set[str] = set()
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                names.update(_bound_by(small))
    return names


def _bound_by(small: cst.BaseSmallStatement) -> set[str]:
    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        if isinstance(small, cst.ImportFrom) and dotted_name(small.module) == "absl":
            return set()
        return {(a.asname.name.value if a.asname else dotted_name(a.name).split(".")[0]) for a in small.names}
    if isinstance(small, cst.Assign):
        if dotted_name(small.value).startswith("tf."):
            return set()
        return {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
    return set()
