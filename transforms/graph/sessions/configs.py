"""The `tf.ConfigProto` sessions were opened with: once the sessions are gone it configures nothing,
so the lines that build it go too (a finding says where TF2 takes such settings). Shared by TFM201,
which reads the program's sessions, and TFM203 (transforms/graph/bridge/configs.py)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import only_small_statement, walk

CONFIG_PROTOS = frozenset({"tf.ConfigProto", "tf.GPUOptions"})
CONFIG_GONE = ("the sessions' tf.ConfigProto is gone with them; TF2 takes such settings from tf.config "
               "(allow_growth: tf.config.experimental.set_memory_growth, soft placement: "
               "tf.config.set_soft_device_placement)")


def session_config_replacements(resolver, session_calls: list[cst.Call]) -> tuple[dict, list[cst.CSTNode]]:
    """Replacements removing the statements that build a config only `session_calls` read
    (`config = tf.ConfigProto(...)`, `config.gpu_options.allow_growth = True`), and those statements."""
    removed = []
    for name in _config_names(session_calls):
        removed += _config_lines(resolver, name, session_calls)
    return {id(statement): lambda _: cst.RemovalSentinel.REMOVE for statement in removed}, removed


def _config_names(session_calls: list[cst.Call]) -> list[cst.Name]:
    return [arg.value for call in session_calls for arg in call.args
            if arg.keyword is not None and arg.keyword.value == "config" and isinstance(arg.value, cst.Name)]


def _config_lines(resolver, name: cst.Name, session_calls: list[cst.Call]) -> list[cst.BaseStatement]:
    scope = resolver.scope(name)
    assignments = list(scope[name.value]) if scope is not None else []
    if len(assignments) != 1 or not isinstance(assignments[0].node, cst.Name):
        return []
    built = _statement_of(resolver, assignments[0].node)
    if built is None or not builds_config(resolver, built, name.value):
        return []
    passed = {id(node) for call in session_calls for node in walk(call)}
    lines = [built]
    for access in assignments[0].references:
        if id(access.node) in passed:
            continue
        statement = _statement_of(resolver, access.node)
        if statement is None or not sets_attribute_of(statement, name.value):
            return []
        lines.append(statement)
    return list({id(line): line for line in lines}.values())


def _statement_of(resolver, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
    while node is not None and not isinstance(node, cst.SimpleStatementLine):
        if isinstance(node, cst.BaseCompoundStatement):
            return None
        node = resolver.parent(node)
    return node


def builds_config(resolver, statement: cst.BaseStatement, name: str) -> bool:
    """`name = tf.ConfigProto(...)` (or `tf.GPUOptions(...)`)."""
    small = only_small_statement(statement)
    return isinstance(small, cst.Assign) and len(small.targets) == 1 \
        and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name \
        and isinstance(small.value, cst.Call) and resolver.tf_name(small.value.func) in CONFIG_PROTOS


def sets_attribute_of(statement: cst.BaseStatement, name: str) -> bool:
    """`name.gpu_options.allow_growth = True`: a setting of the config, reading nothing of it."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return False
    target = small.targets[0].target
    if not isinstance(target, cst.Attribute):
        return False
    while isinstance(target, cst.Attribute):
        target = target.value
    reads_config = any(isinstance(node, cst.Name) and node.value == name for node in walk(small.value))
    return isinstance(target, cst.Name) and target.value == name and not reads_config
