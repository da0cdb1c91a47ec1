"""Module-level finishing touches once the graph block is converted: the file imports TensorFlow 2
itself (`import tensorflow.compat.v1 as tf` becomes `import tensorflow as tf`), TF1 start-up calls
outside the block (`tf.disable_v2_behavior()`, `tf.set_random_seed`) are removed or converted, and
the generated code's `tf.` prefix is bound."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.graph.writing.contrib_imports import drop_unused_contrib_imports
from transforms.common.syntax import Refusal, code, expr, replace_nodes
from transforms.common.qualnames import dotted_name

_TF_MODULES = ("tensorflow", "tensorflow.compat.v1")


def finish_module(program, new_statements: list[cst.BaseStatement], replacements: dict) -> cst.Module:
    module, owner = program.module, program.owner
    if owner is module:
        body = new_statements
    else:
        replaced = owner.with_changes(body=owner.body.with_changes(body=new_statements))
        body = []
        for statement in module.body:
            if statement is owner:
                body.append(replaced)
                continue
            result = replace_nodes(statement, replacements)
            results = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
            body += [_start_up(program, node) for node in results]
    body = drop_unused_contrib_imports([_import_tf2(statement) for statement in body if statement is not None])
    _bind_tf(program, module)
    return module.with_changes(body=body)


def _start_up(program, statement: cst.BaseStatement) -> cst.BaseStatement | None:
    """A module-level `tf.disable_v2_behavior()` goes, `tf.set_random_seed(s)` becomes TF2's call."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return statement
    small = statement.body[0]
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return statement
    name = program.tf_name(small.value.func)
    category = categorize(name)[0] if name else None
    if category is Category.DROPPED:
        return None
    if category is Category.SEED:
        arguments = ", ".join(code(arg) for arg in small.value.args)
        return statement.with_changes(body=[small.with_changes(value=expr(f"tf.random.set_seed({arguments})"))])
    return statement


def _import_tf2(statement: cst.BaseStatement) -> cst.BaseStatement:
    if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Import)):
        return statement
    small = statement.body[0]
    names = [alias.with_changes(name=cst.parse_expression("tensorflow"))
             if dotted_name(alias.name) == "tensorflow.compat.v1" and alias.asname else alias for alias in small.names]
    return statement.with_changes(body=[small.with_changes(names=names)])


def _bind_tf(program, module: cst.Module) -> None:
    """The generated code says `tf.`: that must be TensorFlow (imported if the file did not bind it)."""
    bindings = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    bindings += [dotted_name(a.name) for a in small.names if _bound_name(a) == "tf"]
                elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    bindings += ["from-import" for a in small.names if _bound_name(a) == "tf"]
    if any(binding not in _TF_MODULES for binding in bindings):
        raise Refusal(None, "the name 'tf' is bound to something other than TensorFlow")
    if not bindings:
        program.transform.add_import("tensorflow", asname="tf")


def _bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    return dotted_name(alias.name).split(".")[0]
