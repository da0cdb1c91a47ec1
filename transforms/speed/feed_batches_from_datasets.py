"""TFM304: Python batch feeding -> a tf.data pipeline with prefetch (`--input-pipeline tf.data`).

A loop slicing NumPy arrays into minibatches for a step function,

    for start in range(0, len(train_x), BATCH):
        train_step(train_x[start:start + BATCH], train_y[start:start + BATCH])

reads the same batches, in the same order, from a dataset whose next batch is prepared while the
step runs:

    train_step_batches = (tf.data.Dataset.from_tensor_slices((tf.cast(train_x, tf.float32), tf.cast(train_y, tf.int64)))
                          .batch(BATCH).prefetch(tf.data.AUTOTUNE))
    for start, (train_x_batch, train_y_batch) in zip(range(0, len(train_x), BATCH), train_step_batches):
        train_step(train_x_batch, train_y_batch)

The arrays are cast once to the dtypes of the step function's input_signature (what feeding the
slices converted them to on every call); `batch` keeps the last, smaller batch as slicing did. Only
loops that provably read the same rows are rewritten: `range(0, len(A) or A.shape[0], B)` over one
of the sliced arrays, every slice `X[i:i + B]` with the loop's own step, the sliced arrays used in
the loop body only there and the loop variable never rebound. Whether this beats slicing depends on
the machine (it pays where the host-to-device copy can overlap the step: GPUs); off by default,
`tf-migrate tune` measures it.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.values import source as code_of
from transforms.common.syntax import fresh_name, walk as _walk
from transforms.base import TFTransform
from transforms.speed.fusion.state import TF_FUNCTION_IDENTIFIERS

SETTING = "input_pipeline"


class FeedBatchesFromDatasets(TFTransform):
    CODE = "TFM304"
    DESCRIPTION = "Feed minibatches sliced from NumPy arrays through tf.data with prefetch (--input-pipeline tf.data)"
    PHASE = 32
    TRIGGERS = ("function",)
    IDENTIFIERS = TF_FUNCTION_IDENTIFIERS
    ENABLED_BY = (SETTING, ("tf.data",))

    def visit_Module(self, node: cst.Module) -> None:
        self.enabled = self.context.scratch.get("settings", {}).get(SETTING, "off") == "tf.data"
        self.steps = step_signatures(node, self.tf_name) if self.enabled else {}
        self.taken = {n.value for n in _walk(node) if isinstance(n, cst.Name)}

    def leave_For(self, original: cst.For, updated: cst.For):
        if not self.steps:
            return updated
        plan = self._plan(updated)
        if plan is None:
            return updated
        call, slices, step = plan
        dataset = fresh_name(f"{call.func.value}_batches", self.taken)
        batch_names = [fresh_name(f"{array}_batch", self.taken) for array in dict.fromkeys(a for _, a in slices)]
        by_array = dict(zip(dict.fromkeys(a for _, a in slices), batch_names))
        dtypes = self.steps[call.func.value]
        casts = [f"tf.cast({array}, {dtypes[position]})" for array, position in _first_positions(slices).items()]
        tensors = casts[0] if len(casts) == 1 else f"({', '.join(casts)})"
        indent = " " * (len(dataset) + 4)
        creation = cst.parse_statement(f"{dataset} = (tf.data.Dataset.from_tensor_slices({tensors})\n"
                                       f"{indent}.batch({step}).prefetch(tf.data.AUTOTUNE))\n")
        targets = batch_names[0] if len(batch_names) == 1 else f"({', '.join(batch_names)})"
        header = cst.parse_statement(f"for {code_of(updated.target)}, {targets} in zip({code_of(updated.iter)}, "
                                     f"{dataset}):\n    pass\n")
        new_call = call.with_changes(args=[
            arg.with_changes(value=cst.Name(by_array[dict(slices)[index]])) if index in dict(slices) else arg
            for index, arg in enumerate(call.args)])
        body = updated.body.visit(_Replace(call, new_call))
        loop = updated.with_changes(target=header.target, iter=header.iter, body=body)
        self.report(original, f"minibatches for {call.func.value}() read from a tf.data pipeline with prefetch",
                    fixed=True)
        return cst.FlattenSentinel([creation.with_changes(leading_lines=updated.leading_lines),
                                    loop.with_changes(leading_lines=[])])

    def _plan(self, loop: cst.For):
        """(the step call, [(argument index, sliced array)], batch size code), or None."""
        if not (isinstance(loop.target, cst.Name) and loop.orelse is None):
            return None
        bounds = _range_arguments(loop.iter)
        if bounds is None or code_of(bounds[0]) != "0":
            return None
        variable, step = loop.target.value, code_of(bounds[2])
        calls = [node for node in _walk(loop.body) if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                 and node.func.value in self.steps]
        sliced = [(call, _slices(call, variable, step)) for call in calls]
        sliced = [(call, found) for call, found in sliced if found]
        if len(sliced) != 1:
            return None
        call, slices = sliced[0]
        arrays = {array for _, array in slices}
        if not _length_of(bounds[1], arrays) or _rebinds(loop.body, {variable}):
            return None
        uses = [n for n in _walk(loop.body) if isinstance(n, cst.Name) and n.value in arrays]
        if len(uses) != len(slices):  # the arrays are read or changed elsewhere in the loop
            return None
        return call, slices, step


class _Replace(cst.CSTTransformer):
    def __init__(self, old: cst.Call, new: cst.Call) -> None:
        self.old, self.new = old, new

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self.new if original is self.old else updated


def input_signatures(module: cst.Module, tf_name) -> dict[str, cst.List]:
    """Step functions (`@tf.function(input_signature=[...])`) -> their input_signature list."""
    found = {}
    for node in _walk(module):
        if not isinstance(node, cst.FunctionDef):
            continue
        for decorator in node.decorators:
            call = decorator.decorator
            if isinstance(call, cst.Call) and tf_name(call.func) == "tf.function":
                signature = next((a.value for a in call.args if a.keyword and a.keyword.value == "input_signature"),
                                 None)
                if isinstance(signature, cst.List):
                    found[node.name.value] = signature
    return found


def step_signatures(module: cst.Module, tf_name) -> dict[str, list[str]]:
    """Step functions (`@tf.function(input_signature=[tf.TensorSpec(shape, dtype), ...])`) -> dtypes."""
    found = {name: _dtypes(signature) for name, signature in input_signatures(module, tf_name).items()}
    return {name: dtypes for name, dtypes in found.items() if dtypes is not None}


def _dtypes(signature) -> list[str] | None:
    if not isinstance(signature, cst.List):
        return None
    dtypes = []
    for element in signature.elements:
        spec = element.value
        if not isinstance(spec, cst.Call) or len(spec.args) < 2:
            return None
        dtype = next((a.value for a in spec.args if a.keyword and a.keyword.value == "dtype"), spec.args[1].value)
        dtypes.append(code_of(dtype))
    return dtypes


def _range_arguments(node: cst.BaseExpression):
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"
            and len(node.args) == 3 and not any(a.keyword or a.star for a in node.args)):
        return [a.value for a in node.args]
    return None


def _slices(call: cst.Call, variable: str, step: str) -> list[tuple[int, str]]:
    """(argument index, array) for each argument `array[variable:variable + step]`."""
    found = []
    for index, arg in enumerate(call.args):
        value = arg.value
        if arg.keyword or arg.star or not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)):
            continue
        if len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Slice):
            continue
        piece = value.slice[0].slice
        if piece.lower is None or piece.upper is None:
            continue
        if piece.step is None and code_of(piece.lower) == variable and \
                code_of(piece.upper).replace(" ", "") == f"{variable}+{step}".replace(" ", ""):
            found.append((index, value.value.value))
    return found


def _first_positions(slices: list[tuple[int, str]]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for index, array in slices:
        positions.setdefault(array, index)
    return positions


def _length_of(node: cst.BaseExpression, arrays: set[str]) -> bool:
    """`len(A)` or `A.shape[0]` for one of `arrays`."""
    text = code_of(node).replace(" ", "")
    return any(text in (f"len({array})", f"{array}.shape[0]") for array in arrays)


def _rebinds(body: cst.CSTNode, names: set[str]) -> bool:
    for node in _walk(body):
        targets = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        if any(isinstance(n, cst.Name) and n.value in names for t in targets for n in _walk(t)):
            return True
    return False
