"""The TF2 code a tf.train.Saver becomes (see transforms/graph/outputs/checkpoints.py): the statements that replace
the Saver, its save / restore calls rewritten, and the restore function written into the file."""
from __future__ import annotations

import json

import libcst as cst

from transforms.graph.outputs.checkpoints import Checkpoints, CheckpointCall, finds_latest
from transforms.common.syntax import Refusal, code, load_names, statement, string_value, walk

_RESTORE_FUNCTION = '''
def {name}(checkpoint, path, tf1_names, tf1_optimizer_slots=(), tf1_optimizer_variables=()):
    """Restore the checkpoint at `path` into `checkpoint`.

    Checkpoints this program writes are object-based and are read into `checkpoint` (`read`, not
    `restore`: `checkpoint.write` does not save the save counter `restore` expects). Those its
    TF1 version wrote with tf.train.Saver are name-based: each variable in `tf1_names` (TF1 name ->
    variable) gets the value saved under its name. Their TF1 optimizer state (`<name>/<slot>` for
    each of `tf1_optimizer_slots`, and `tf1_optimizer_variables`) is not restored: the Keras
    optimizer keeps its own. Any other name missing on either side is an error.
    """
    reader = tf.train.load_checkpoint(path)
    saved = set(reader.get_variable_to_shape_map())
    if "_CHECKPOINTABLE_OBJECT_GRAPH" in saved:
        checkpoint.read(path).assert_existing_objects_matched()
        return
    optimizer_state = {{f"{{name}}/{{slot}}" for name in tf1_names for slot in tf1_optimizer_slots}}
    missing = sorted(set(tf1_names) - saved)
    unknown = sorted(saved - set(tf1_names) - optimizer_state - set(tf1_optimizer_variables))
    if missing or unknown:
        raise ValueError(f"{{path}} does not hold this program's variables: missing {{missing}}, unknown {{unknown}}")
    for name, variable in tf1_names.items():
        variable.assign(reader.get_tensor(name))
'''


class CheckpointCode:
    def __init__(self, checkpoints: Checkpoints, program, names) -> None:
        self.checkpoints = checkpoints
        self.saver = checkpoints.saver
        self.program = program
        self.checkpoint = names.fresh("checkpoint")
        saves = [c for c in checkpoints.calls if c.method == "save"]
        self.managed = [c for c in saves if c.step is not None]
        self.written = [c for c in saves if c.step is None]
        self.restores = [c for c in checkpoints.calls if c.method == "restore"]
        self.manager = names.fresh("checkpoint_manager") if self.managed else None
        self.tf1_names = names.fresh("tf1_checkpoint_names") if self.restores else None
        self.restore_function = names.fresh("restore_checkpoint") if self.restores else None

    def replacements(self) -> dict:
        """Fills in the Saver's statements; the replacements for its save / restore calls."""
        if self.written and finds_latest(self.program):
            raise Refusal(self.written[0].call, "a save without global_step in a program that looks for the latest "
                                                "checkpoint (checkpoint.write does not record it)")
        self.saver.item.emit = self._statements()
        replacements = {}
        for call in self.checkpoints.calls:
            replacements[id(call.call)] = self._maker(call)
        return replacements

    def finish(self, module: cst.Module) -> cst.Module:
        """The converted module with its restore function; the findings for the Saver."""
        transform = self.program.transform
        kinds = " + tf.train.CheckpointManager" if self.manager else ""
        transform.report(self.saver.call, f"tf.train.Saver -> tf.train.Checkpoint{kinds}", fixed=True)
        if not self.restores:
            return module
        if self.saver.slots or self.saver.optimizer_variables:
            names = ", ".join(f"<variable>/{slot}" for slot in self.saver.slots)
            names = ", ".join(filter(None, [names, *self.saver.optimizer_variables]))
            transform.report(self.saver.call, "checkpoints written by the TF1 program still restore (variables by "
                             f"their TF1 names), but not their optimizer slots ({names}): training resumed from "
                             "one restarts the optimizer's state", fixed=True, severity="warning")
        return with_restore_function(module, self.restore_function)

    def _statements(self) -> list[cst.BaseStatement]:
        saver = self.saver
        objects = ", ".join(f"{key}={value}" for key, value in saver.objects.items())
        lines = [f"{self.checkpoint} = tf.train.Checkpoint({objects})"]
        if self.manager:
            directory, basename = self._directory()
            keep = code(saver.max_to_keep) if saver.max_to_keep is not None else "5"
            lines.append(f"{self.manager} = tf.train.CheckpointManager({self.checkpoint}, {directory}, "
                         f"max_to_keep={keep}, checkpoint_name={_string(basename)})")
        if self.tf1_names:
            entries = ", ".join(f"{_string(name)}: {value}" for name, value in saver.tf1_names.items())
            lines.append(f"{self.tf1_names} = {{{entries}}}")
        lines = [statement(line) for line in lines]
        lines[0] = lines[0].with_changes(leading_lines=saver.item.node.leading_lines)
        return lines

    def _maker(self, call: CheckpointCall):
        if call.method == "restore":
            parent = self.program.parent(call.call)
            if not isinstance(parent, cst.Expr):
                raise Refusal(call.call, "the result of Saver.restore is used")
            slots, variables = self.saver.slots, self.saver.optimizer_variables
            extra = (f", tf1_optimizer_slots={_strings(slots)}" if slots else "") + \
                    (f", tf1_optimizer_variables={_strings(variables)}" if variables else "")
            return lambda updated: cst.parse_expression(
                f"{self.restore_function}({self.checkpoint}, {code(_argument(updated, 'save_path', 1))}, "
                f"{self.tf1_names}{extra})")
        if call.step is None:
            return lambda updated: cst.parse_expression(
                f"{self.checkpoint}.write({code(_argument(updated, 'save_path', 1))})")
        return lambda updated: cst.parse_expression(
            f"{self.manager}.save(checkpoint_number={code(_argument(updated, 'global_step', 2))})")

    def _directory(self) -> tuple[str, str]:
        """The directory and file name every save with a global step writes to, as code valid where the
        Saver was created."""
        splits = {self._split(call.path) for call in self.managed}
        if len(splits) != 1:
            raise Refusal(self.managed[-1].call, "saves with a global_step write to different paths")
        return splits.pop()

    def _split(self, path: cst.BaseExpression) -> tuple[str, str]:
        value = self._bound_value(path) if isinstance(path, cst.Name) else path
        literal = string_value(value)
        if literal is not None and "/" in literal.strip("/"):
            directory, basename = literal.rsplit("/", 1)
            return _string(directory), basename
        if literal is not None:
            return _string("."), literal
        if isinstance(value, cst.Call) and code(value.func) == "os.path.join" and len(value.args) == 2:
            basename = string_value(value.args[1].value)
            if basename and "/" not in basename and not value.args[0].star and not value.args[0].keyword:
                directory = value.args[0].value
                if isinstance(path, cst.Name) and not _same_when_evaluated_again(directory):
                    return f"os.path.dirname({path.value})", basename  # `tempfile.mkdtemp()` would make another
                self._check_known(directory, path)
                return code(directory), basename
        raise Refusal(path, "the checkpoint path of Saver.save(global_step=...) must be os.path.join(directory, "
                            "\"name\") or a string literal")

    def _bound_value(self, name: cst.Name) -> cst.BaseExpression:
        scope = self.program.scope(name)
        assignments = list(scope[name.value]) if scope is not None else []  # a module constant read in main()
        target_parent = self.program.parent(assignments[0].node) if len(assignments) == 1 else None
        assign = self.program.parent(target_parent) if isinstance(target_parent, cst.AssignTarget) else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            raise Refusal(name, f"checkpoint path '{name.value}' is not bound once to a path")
        self._check_known(name, name)
        return assign.value

    def _check_known(self, expression: cst.BaseExpression, where: cst.CSTNode) -> None:
        """The names `expression` reads are bound (only) before the Saver, so it can move there."""
        line = self.program.line(self.saver.call)
        for node in load_names(expression):
            scope = self.program.scope(node)
            assignments = list(scope[node.value]) if scope is not None else []
            if any(self.program.line(a.node) >= line for a in assignments if hasattr(a, "node")):
                raise Refusal(where, f"the checkpoint directory reads '{node.value}', which is (re)bound after "
                                     "the tf.train.Saver")


def _same_when_evaluated_again(node: cst.BaseExpression) -> bool:
    """Names, attributes, string literals and `os.path` functions of them: a directory expression that
    means the same where the Saver was created."""
    for part in walk(node):
        if isinstance(part, cst.Call) and not code(part.func).startswith("os.path."):
            return False
    return True


def _argument(call: cst.Call, keyword: str, position: int) -> cst.BaseExpression:
    """An argument given by keyword, else the one at `position`."""
    named = next((arg for arg in call.args if arg.keyword and arg.keyword.value == keyword), None)
    return named.value if named is not None else call.args[position].value


def with_restore_function(module: cst.Module, name: str) -> cst.Module:
    """The module with the restore function defined after its docstring and imports."""
    function = cst.parse_module(_RESTORE_FUNCTION.format(name=name)).body[0]
    function = function.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * 2)
    body = list(module.body)
    position = 0
    for index, node in enumerate(body):
        if isinstance(node, cst.SimpleStatementLine) and all(
                isinstance(small, (cst.Import, cst.ImportFrom)) or _is_docstring(small) for small in node.body):
            position = index + 1
        else:
            break
    if position < len(body):
        comments = [line for line in body[position].leading_lines if line.comment is not None]
        body[position] = body[position].with_changes(leading_lines=[cst.EmptyLine(indent=False)] * 2 + comments)
    return module.with_changes(body=body[:position] + [function] + body[position:])


def _string(text: str) -> str:
    return json.dumps(text)


def _strings(texts: list[str]) -> str:
    return "(" + ", ".join(map(_string, texts)) + ("," if len(texts) == 1 else "") + ")"


def _is_docstring(small: cst.BaseSmallStatement) -> bool:
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
