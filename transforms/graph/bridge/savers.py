"""Savers of a wrapped program. A `tf.train.Saver` cannot be built inside the wrapped graph and used
outside it, so each is built after the graph, eagerly, over the same variables: those its `var_list`
names, or the global variables, listed in the graph where the Saver was (a Saver made before the
optimizer does not save its slots). Checkpoints keep TF1's format and names."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import Refusal, bind_arguments, calls_under, code
from transforms.graph.bridge.bindings import name_assignments

SAVER_SIGNATURE = ["var_list", "reshape", "sharded", "max_to_keep", "keep_checkpoint_every_n_hours", "name",
                   "restore_sequentially", "saver_def", "builder", "defer_build", "allow_empty",
                   "write_version", "pad_step_number", "save_relative_paths", "filename"]
VARIABLE_LISTS = frozenset({"tf.global_variables", "tf.all_variables", "tf.trainable_variables"})


@dataclass
class Saver:
    statement: cst.SimpleStatementLine
    name: str
    call: cst.Call
    in_region: bool
    var_list: cst.BaseExpression | None  # as the call gives it

    def variables_name(self) -> str:
        return f"{self.name}_variables"

    def listing(self, tf: str) -> cst.SimpleStatementLine:
        """`<saver>_variables = <var_list>`, in the graph where the Saver was."""
        value = code(self.var_list) if self.var_list is not None else f"{tf}.global_variables()"
        return self.statement.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(self.variables_name()))],
                                                            cst.parse_expression(value))])

    def construction(self, var_list: str) -> cst.Call:
        """The Saver call over `var_list` with the other arguments as written."""
        others = [arg for arg in self.call.args if not _is_var_list(arg, self.call)]
        return self.call.with_changes(args=[cst.Arg(cst.parse_expression(var_list)), *_keyworded(others)])


def _is_var_list(arg: cst.Arg, call: cst.Call) -> bool:
    return (arg.keyword is not None and arg.keyword.value == "var_list") or \
        (arg.keyword is None and call.args and call.args[0] is arg)


def _keyworded(args: list[cst.Arg]) -> list[cst.Arg]:
    if any(arg.keyword is None for arg in args):
        raise Refusal(args[0].value, "a Saver given positional arguments after var_list")
    return args


def read_savers(transform, module: cst.CSTNode, region: list[cst.BaseStatement]) -> list[Saver]:
    """The Savers of `module`: each must be `name = tf.train.Saver(...)`, at the top level of the region or
    anywhere after it; one outside the region saves the global or trainable variables."""
    in_region = {id(statement) for statement in region}
    assignments = name_assignments(module)
    savers = []
    for call in _saver_calls(transform, module):
        if id(call) not in assignments:
            raise Refusal(call, "a tf.train.Saver that is not assigned to a name on its own line")
        name, statement = assignments[id(call)]
        var_list = bind_arguments(call, SAVER_SIGNATURE, "Saver").get("var_list")
        saver = Saver(statement, name, call, id(statement) in in_region, var_list)
        if not saver.in_region:
            _check_outside_var_list(transform, saver)
        savers.append(saver)
    return savers


def _check_outside_var_list(transform, saver: Saver) -> None:
    var_list = saver.var_list
    if var_list is None:
        return
    lists_variables = isinstance(var_list, cst.Call) and not var_list.args \
        and transform.tf_name(var_list.func) in VARIABLE_LISTS
    if not lists_variables:
        raise Refusal(var_list, f"a Saver made after the graph over `{code(var_list)}`")


def outside_listing(transform, saver: Saver) -> str:
    """What a Saver made after the graph saves: the graph's `global_variables` or `trainable_variables`."""
    if saver.var_list is not None and transform.tf_name(saver.var_list.func) == "tf.trainable_variables":
        return "trainable_variables"
    return "global_variables"


def _saver_calls(transform, module: cst.CSTNode):
    for call in calls_under(module):
        name = transform.tf_name(call.func)
        if name and categorize(name)[0] is Category.SAVER:
            yield call

