"""`tf.app.flags` / `tf.flags` / `tf.app.run` / `tf.logging` -> `absl.flags` / `absl.app` / `absl.logging`.

TF1's modules were thin wrappers over absl, so flag names, defaults, help and the `main(argv)`
convention carry over unchanged. Three traps are handled: absl already defines some flags (`log_dir`,
`verbosity`, ...) and a script defining its own dies with DuplicateFlagError, so those definitions get
`allow_override=True`; a file that already binds `logging` (the standard library's) gets
`absl_logging` instead of a clash; and TF1 parsed the command line on the first read of a flag while
absl parses it in `app.run`, so a program reading flags at import time (module-level code, class
bodies, default values) gets an explicit `FLAGS(sys.argv)` right before its first such read (a TF 1.4
`FLAGS._parse_flags()` there becomes that parse).
"""
from __future__ import annotations

import libcst as cst

from transforms.base import TFTransform
from transforms.common.qualnames import dotted_name
from transforms.common.syntax import keyword_arg
from transforms.flags._import_time_reads import first_import_time_read

MODULES = {"tf.app.flags": "flags", "tf.flags": "flags", "tf.logging": "logging", "tf.app": "app"}
FLAG_VALUES = frozenset({"tf.app.flags.FLAGS", "tf.flags.FLAGS"})
TF14_PARSE = "_parse_flags"  # TF 1.4's private FLAGS._parse_flags(); absl has no such method
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
    IDENTIFIERS = frozenset({"flags", "logging", "app"})  # the TF names it rewrites go through one of these

    def visit_Module(self, node: cst.Module) -> None:
        taken = _top_level_bindings(node)
        self.local_names = {module: (module if module not in taken else f"absl_{module}")
                            for module in ("flags", "app", "logging")}
        self.has_main = "main" in taken
        self._plan_explicit_parse(node)

    def _plan_explicit_parse(self, module: cst.Module) -> None:
        """Find the first flag read that runs before app.run parses the command line (see
        _import_time_reads), unless the program parses it itself."""
        self.parse_before, self.values_name = None, None
        aliases = {small.targets[0].target.value for statement in module.body
                   if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
                   if isinstance(small, cst.Assign) and len(small.targets) == 1
                   and isinstance(small.targets[0].target, cst.Name) and self.tf_name(small.value) in FLAG_VALUES}

        def is_values(node: cst.BaseExpression) -> bool:
            return (isinstance(node, cst.Name) and node.value in aliases) or self.tf_name(node) in FLAG_VALUES

        if any(isinstance(node, cst.Call) and is_values(node.func) for node in _module_level_calls(module)):
            return
        read = first_import_time_read(module.body, lambda attribute: is_values(attribute.value))
        if read is not None:
            self.parse_before = read
            self.values_name = next(iter(sorted(aliases)), None)

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if original is not self.parse_before:
            return updated
        values = self.values_name or f"{self.local_names['flags']}.FLAGS"
        self.add_import("sys")
        parse = cst.parse_statement(f"{values}(sys.argv)\n")
        self.report(original, "flags read before app.run: TF1 parsed the command line on the first read, "
                    f"absl only in app.run; inserted {values}(sys.argv) before the first read", fixed=True)
        if _is_tf14_parse(original):
            return parse.with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([parse.with_changes(leading_lines=updated.leading_lines),
                                    updated.with_changes(leading_lines=[])])

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        """Rewrite the outermost matching attribute chain only: its parts are not visited."""
        return not self._matches(node)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return (self._matches(original) and self._replacement(original)) or updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        """A bare name is rewritten when it stands for one of the modules (`flags = tf.app.flags`
        makes `flags` one); a name bound to something in them (`FLAGS = tf.flags.FLAGS`) keeps its
        name, its binding's value is what changes."""
        return (self.tf_name(original) in MODULES and self._replacement(original)) or updated

    def _matches(self, node: cst.BaseExpression) -> bool:
        name = self.tf_name(node) or ""
        return any(name == prefix or name.startswith(prefix + ".") for prefix in MODULES) and self._spelled_from_module(node)

    def _spelled_from_module(self, node: cst.BaseExpression) -> bool:
        """`tf.flags.FLAGS.x` and `flags.FLAGS.x` are rewritten; `FLAGS.x` after `FLAGS = tf.flags.FLAGS`
        is not: the alias keeps its name and only its binding changes."""
        while isinstance(node, cst.Attribute):
            node = node.value
        return not isinstance(node, cst.Name) or self.tf_name(node) in ("tf", *MODULES)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        name = self.tf_name(original.func) or ""
        if name in ("tf.app.flags.DEFINE_", "tf.flags.DEFINE_") or ".DEFINE_" not in name:
            return self._complete_app_run(original, updated) if name == "tf.app.run" else updated
        flag = _flag_name(original)
        if flag in ABSL_OWN_FLAGS and not any(a.keyword and a.keyword.value == "allow_override" for a in original.args):
            self.report(original, f"absl already defines the flag '{flag}'; added allow_override=True so the "
                        "definition does not fail with DuplicateFlagError", fixed=True, severity="warning")
            return updated.with_changes(args=[*updated.args, keyword_arg("allow_override", cst.Name("True"))])
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


def _module_level_calls(module: cst.Module) -> list[cst.Call]:
    """Calls in module-level simple statements (an explicit `FLAGS(sys.argv)` is one)."""
    return [small.value for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)]


def _is_tf14_parse(statement: cst.CSTNode) -> bool:
    """`FLAGS._parse_flags()` as a statement of its own."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    call = statement.body[0].value if isinstance(statement.body[0], cst.Expr) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == TF14_PARSE


def _flag_name(call: cst.Call) -> str | None:
    for index, arg in enumerate(call.args):
        if (arg.keyword is None and index == 0) or (arg.keyword and arg.keyword.value == "name"):
            if isinstance(arg.value, cst.SimpleString):
                return arg.value.evaluated_value
    return None


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
