"""The fixed number of time steps of sequences an RNN reads from a dataset (for `unroll=True`).

    sequences = rng.randn(160, 10, 2).astype(np.float32)          # rng = np.random.RandomState(31)
    dataset = tf.data.Dataset.from_tensor_slices((sequences, targets)).shuffle(160, seed=9).batch(20).repeat()
    batch_sequences, batch_targets = dataset.make_one_shot_iterator().get_next()
    outputs, state = tf.nn.dynamic_rnn(cell, batch_sequences, dtype=tf.float32)     # T = 10

The element `k` of the iterator's next value is component `k` of `from_tensor_slices`, a module
NumPy array made with a literal shape `[N, T, ...]` (`randn`, `rand`, `normal(size=...)`, `zeros`,
... optionally `.astype(...)`), sliced along N and batched once by steps that keep every element's
shape (`shuffle`, `repeat`, `batch`, `prefetch`, `cache`, `take`, `skip`): its batches are
`[batch, T, ...]` with T known when the step function is traced. Anything else gives None.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import code, walk

SHAPE_KEEPING = frozenset({"shuffle", "repeat", "prefetch", "cache", "take", "skip"})
SHAPE_ARGUMENTS = frozenset({"randn", "rand"})  # rng.randn(d0, d1, ...)
SIZE_KEYWORD = frozenset({"normal", "uniform", "standard_normal", "random_sample", "random", "randint"})
SHAPE_FIRST = frozenset({"zeros", "ones", "empty"})
NUMPY_GENERATORS = frozenset({"RandomState", "default_rng"})


def dataset_time_steps(name: str, resolver, module: cst.Module) -> int | None:
    """T of the batches `name` holds when it is bound once, to element k of a dataset iterator's next value."""
    assignments = resolver.block_assignments(name)
    if len(assignments) != 1:
        return None
    found = _unpacked_value(assignments[0].node, resolver)
    if found is None:
        return None
    value, index = found
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "get_next" and not value.args):
        return None
    components = _batched_components(_iterated_dataset(value.func.value, module), module)
    if components is None or (index is None and len(components) != 1):
        return None
    component = components[index or 0] if (index or 0) < len(components) else None
    shape = numpy_shape(component, module) if component is not None else None
    return shape[1] if shape is not None and len(shape) >= 3 else None


def bound_value(name: str, resolver) -> cst.BaseExpression | None:
    """The value of a graph-block name bound once, by `name = <value>`."""
    assignments = resolver.block_assignments(name)
    found = _unpacked_value(assignments[0].node, resolver) if len(assignments) == 1 else None
    return found[0] if found is not None and found[1] is None else None


def _unpacked_value(target: cst.Name, resolver) -> tuple[cst.BaseExpression, int | None] | None:
    """(the value assigned, the position of `target` in a flat tuple target or None for a plain name)."""
    parent = resolver.parent(target)
    if isinstance(parent, cst.AssignTarget):
        assign = resolver.parent(parent)
        return (assign.value, None) if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None
    if not isinstance(parent, cst.Element):
        return None
    sequence = resolver.parent(parent)
    holder = resolver.parent(sequence) if isinstance(sequence, (cst.Tuple, cst.List)) else None
    assign = resolver.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    return assign.value, [e is parent for e in sequence.elements].index(True)


def _iterated_dataset(source: cst.BaseExpression, module: cst.Module) -> cst.BaseExpression | None:
    """The dataset an iterator expression reads: `<dataset>.make_one_shot_iterator()`, `iter(<dataset>)`,
    `tf.data.make_one_shot_iterator(<dataset>)`, or a module name bound once to one of them."""
    if isinstance(source, cst.Name):
        source = module_value(module, source.value)
    if not isinstance(source, cst.Call):
        return None
    func = source.func
    if isinstance(func, cst.Attribute) and func.attr.value == "make_one_shot_iterator" and not source.args:
        return func.value
    one_argument = len(source.args) == 1 and not source.args[0].keyword and not source.args[0].star
    named = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    return source.args[0].value if one_argument and named in ("iter", "make_one_shot_iterator") else None


def _batched_components(pipeline: cst.BaseExpression | None, module: cst.Module,
                        batches: int = 0) -> list[cst.BaseExpression] | None:
    """The arrays `from_tensor_slices` slices, when the pipeline then batches them exactly once."""
    while isinstance(pipeline, cst.Call) and isinstance(pipeline.func, cst.Attribute):
        method = pipeline.func.attr.value
        if method == "from_tensor_slices":
            if batches != 1 or len(pipeline.args) != 1 or pipeline.args[0].keyword or pipeline.args[0].star:
                return None
            data = pipeline.args[0].value
            if isinstance(data, (cst.Tuple, cst.List)):
                return [e.value for e in data.elements if isinstance(e, cst.Element)]
            return [data]
        if method not in SHAPE_KEEPING and method != "batch":
            return None
        batches += method == "batch"
        pipeline = pipeline.func.value
    if isinstance(pipeline, cst.Name):
        return _batched_components(module_value(module, pipeline.value), module, batches)
    return None


def numpy_shape(node: cst.BaseExpression, module: cst.Module) -> list[int] | None:
    """The literal shape of a NumPy array expression (a module name bound once to one, too)."""
    if isinstance(node, cst.Name):
        node = module_value(module, node.value)
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "astype":
        node = node.func.value
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _is_numpy(node.func.value, module)):
        return None
    method, args = node.func.attr.value, node.args
    if method in SHAPE_ARGUMENTS and all(not a.keyword and not a.star for a in args):
        return _integers([a.value for a in args], module)
    if method in SIZE_KEYWORD:
        size = next((a.value for a in args if a.keyword is not None and a.keyword.value == "size"), None)
        return _integers(_elements(size), module)
    if method in SHAPE_FIRST and args and not args[0].keyword:
        return _integers(_elements(args[0].value), module)
    return None


def _is_numpy(node: cst.BaseExpression, module: cst.Module) -> bool:
    """`np`, `np.random` (numpy imported under that name) or a name bound to `np.random.RandomState(...)`."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "random" and _is_numpy_module(node.value, module)
    if not isinstance(node, cst.Name):
        return False
    if _is_numpy_module(node, module):
        return True
    value = module_value(module, node.value)
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in NUMPY_GENERATORS and _is_numpy(value.func.value, module))


def _is_numpy_module(node: cst.BaseExpression, module: cst.Module) -> bool:
    if not isinstance(node, cst.Name):
        return False
    for statement in walk(module):
        if isinstance(statement, cst.Import):
            for alias in statement.names:
                bound = alias.asname.name.value if alias.asname else code(alias.name)
                if bound == node.value and code(alias.name) == "numpy":
                    return True
    return False


def _elements(node: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [e.value for e in node.elements if isinstance(e, cst.Element)]
    return [node] if node is not None else None


def _integers(nodes: list[cst.BaseExpression] | None, module: cst.Module) -> list[int] | None:
    if not nodes:
        return None
    values = [int(n.value) if isinstance(n, cst.Integer) else module_integer(module, n.value)
              if isinstance(n, cst.Name) else None for n in nodes]
    return None if None in values else values


def module_value(module: cst.Module, name: str) -> cst.BaseExpression | None:
    """The value of a name bound exactly once in the module, by a module-level `name = <value>`."""
    bindings = [node for node in walk(module) if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign,
                                                                   cst.For, cst.AsName, cst.Param))
                and any(isinstance(n, cst.Name) and n.value == name
                        for n in walk(getattr(node, "target", None) or getattr(node, "name", None) or node))]
    values = [small.value for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
              for small in statement.body if isinstance(small, cst.Assign) and len(small.targets) == 1
              and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name]
    return values[0] if len(bindings) == 1 and len(values) == 1 else None


def module_integer(module: cst.Module, name: str) -> int | None:
    """The integer a module name always holds: its one binding is `NAME = <integer literal>`."""
    value = module_value(module, name)
    return int(value.value) if isinstance(value, cst.Integer) else None
