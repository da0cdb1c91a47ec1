"""tf.data iterators in a wrapped graph: initializable (`dataset.make_initializable_iterator()`) and
reinitializable (`tf.data.Iterator.from_structure(types, shapes)` with `make_initializer(dataset)`).

A function pruned from the wrapped graph makes the resources its ops create afresh at each call
unless they are shared by name: the run of `iterator.initializer` and the runs reading
`iterator.get_next()` would each see an iterator of their own, and every read would fail as
uninitialised. Given a `shared_name` (unique in the program), every pruned function reaches the one
iterator, which keeps its position between runs and starts again at each initializer run, as in a
session. One-shot iterators (initialised by their first read, with no name to share) and the other
stateful inputs (queues, readers) are still refused (plan.py)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import calls_under, fresh_name, keyword_arg, walk

INITIALIZABLE = "make_initializable_iterator"
OUTPUT_PROPERTIES = ("output_types", "output_shapes", "output_classes")
# where each iterator constructor takes its shared_name when it is given positionally
SHARED_NAME_POSITION = {"method": 0, "tf.data.make_initializable_iterator": 1, "tf.data.Iterator.from_structure": 2}


def iterator_kind(transform, call: cst.Call) -> str | None:
    """"method" for `dataset.make_initializable_iterator(...)`, the TF name for the tf.data
    constructors of SHARED_NAME_POSITION, else None."""
    name = transform.tf_name(call.func)
    if name in SHARED_NAME_POSITION:
        return name
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == INITIALIZABLE:
        return "method"  # on a dataset, however it is spelled (a chain of its methods has no TF name)
    return None


def shared_iterators(transform, module: cst.Module, taken: set[str], tf: str) -> dict[int, object]:
    """Replacements (by id of the original nodes) giving each iterator the module makes without a
    shared_name one of its own, `tf_migrate/<the name it is bound to>`; and the structure a
    reinitializable iterator is made with read as TF2 reads it (`output_structure_reads`)."""
    bound = {id(node.value): node.targets[0].target.value for node in walk(module)
             if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)}
    replacements = {}
    for call in calls_under(module):
        kind = iterator_kind(transform, call)
        if kind is None or _has_shared_name(call, SHARED_NAME_POSITION[kind]):
            continue
        name = fresh_name(f"tf_migrate/{bound.get(id(call), 'iterator')}", taken)
        replacements[id(call)] = lambda updated, name=name: updated.with_changes(
            args=[*updated.args, keyword_arg("shared_name", cst.SimpleString(f'"{name}"'))])
        if kind == "tf.data.Iterator.from_structure":
            replacements.update(output_structure_reads(call, tf))
    return replacements


def output_structure_reads(call: cst.Call, tf: str) -> dict[int, object]:
    """`Iterator.from_structure(dataset.output_types, dataset.output_shapes)`: TF2's datasets, which
    the wrapped graph makes, have no such properties; `tf.compat.v1.data.get_output_types(dataset)`
    (and `_shapes`, `_classes`) read the same structure."""
    replacements = {}
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Attribute) and value.attr.value in OUTPUT_PROPERTIES:
            function = cst.parse_expression(f"{tf}.compat.v1.data.get_{value.attr.value}")
            replacements[id(value)] = lambda updated, function=function: cst.Call(function, [cst.Arg(updated.value)])
    return replacements


def _has_shared_name(call: cst.Call, position: int) -> bool:
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return len(positional) > position or any(arg.star or (arg.keyword and arg.keyword.value == "shared_name")
                                             for arg in call.args)
