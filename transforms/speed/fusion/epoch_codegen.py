"""What TFM310 writes: the epochs function, its call before the epoch loop, each epoch's rows.

`S_loop_epochs(epochs, first, stop, *arrays)` calls, at each of `epochs` iterations of a `tf.range`
loop, `S_loop(first, stop, ...)` and the step functions the epoch loop evaluated (in the loop's
order), and stacks every output by epoch. It returns `S_loop`'s structure, or with evaluations a
tuple: (that structure, then each evaluation's outputs in its own structure).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.speed.fusion.state import StepFunction
from transforms.speed.fusion.scan import is_none

LOOP_CALL = "loop"


@dataclass
class Evaluation:
    step: StepFunction
    statement: cst.SimpleStatementLine
    assigned: bool  # `value = E(...)` rather than `E(...)`
    arguments: list[str]  # as the graph loop passes them: parameter names and literals


@dataclass
class EpochPlan:
    function: cst.FunctionDef  # S_loop
    structure: cst.BaseExpression | None  # what S_loop returns, None: nothing
    statement: cst.SimpleStatementLine  # the S_loop call's
    assigned: bool
    rest: bool  # the epoch loop does Python work besides the calls
    epochs_name: str
    outputs_name: str
    epoch_count: str
    params: list[tuple[str, str]] = field(default_factory=list)  # after `epochs`: name, TensorSpec source
    arguments: list[str] = field(default_factory=list)  # the call's, after the epoch count
    order: list[Evaluation | str] = field(default_factory=list)  # LOOP_CALL and the evaluations, in loop order

    @property
    def evaluations(self) -> list[Evaluation]:
        return [entry for entry in self.order if isinstance(entry, Evaluation)]

    def loop_leaves(self) -> list[str]:
        """Paths of the S_loop outputs the epoch loop reads (none when it ignores them)."""
        return _leaves(self.structure) if self.assigned else []

    def returns_outputs(self) -> bool:
        return bool(self.loop_leaves()) or any(e.assigned and e.step.outputs.kind != "none"
                                                    for e in self.evaluations)


def epochs_function(plan: EpochPlan, tf: str) -> str:
    """Source of `S_loop_epochs(epochs, first, stop, ...)`."""
    name, evaluations = plan.function.name.value, plan.evaluations
    specs = "".join(f"    {spec},\n" for _, spec in plan.params)
    loop_params = ", ".join(p.name.value for p in plan.function.params.params)
    leaves = plan.loop_leaves()
    called = " and ".join(f"`{e.step.name}`" for e in evaluations)
    doc = f"Runs `{name}`" + (f", then {called}," if called else "") + " `epochs` times in one graph"
    lines = [f"@{tf}.function(input_signature=[\n    {tf}.TensorSpec([], {tf}.int32),\n{specs}])",
             f"def {plan.epochs_name}(epochs, {', '.join(p for p, _ in plan.params)}):",
             f'    """{doc}' + ('; outputs stacked by epoch."""' if plan.returns_outputs() else '."""')]
    if leaves:
        lines.append(f"    outputs = {name}.get_concrete_function().structured_outputs")
        lines += [f"    epoch_{j} = {tf}.TensorArray(outputs{key}.dtype, size=epochs, element_shape=outputs{key}.shape)"
                  for j, key in enumerate(leaves)]
    stacked = [e for e in evaluations if _stacks(e)]
    for j, e in enumerate(stacked):
        lines.append(f"    evaluation_{j} = {tf}.nest.flatten({e.step.name}.get_concrete_function().structured_outputs)")
        lines.append(f"    evaluated_{j} = [{tf}.TensorArray(e.dtype, size=epochs, element_shape=e.shape) "
                     f"for e in evaluation_{j} if e is not None]")
    lines.append(f"    for epoch in {tf}.range(epochs):")
    for entry in plan.order:
        if entry == LOOP_CALL and leaves:
            lines.append(f"        epoch_outputs = {name}({loop_params})")
            lines += [f"        epoch_{j} = epoch_{j}.write(epoch, epoch_outputs{key})" for j, key in enumerate(leaves)]
        elif entry == LOOP_CALL:
            lines.append(f"        {name}({loop_params})")
        elif _stacks(entry):
            j = stacked.index(entry)
            lines.append(f"        outputs_{j} = [e for e in {tf}.nest.flatten({entry.step.name}({', '.join(entry.arguments)})) "
                         "if e is not None]")
            lines.append(f"        evaluated_{j} = [rows.write(epoch, e) for rows, e in zip(evaluated_{j}, outputs_{j})]")
        else:
            lines.append(f"        {entry.step.name}({', '.join(entry.arguments)})")
    if not plan.returns_outputs():
        return "\n".join(lines) + "\n"
    counter = iter(range(len(leaves)))
    loop_part = _rebuilt(plan.structure, lambda: f"epoch_{next(counter)}.stack()") if leaves else "None"
    if not evaluations:
        return "\n".join([*lines, f"    return {loop_part}"]) + "\n"
    parts = [loop_part]
    for e in evaluations:
        if not _stacks(e):
            parts.append("None")
            continue
        j = stacked.index(e)
        lines.append(f"    stacked_{j} = iter([rows.stack() for rows in evaluated_{j}])")
        parts.append(f"{tf}.nest.pack_sequence_as({e.step.name}.get_concrete_function().structured_outputs, "
                     f"[None if e is None else next(stacked_{j}) for e in evaluation_{j}])")
    return "\n".join([*lines, f"    return ({', '.join(parts)})"]) + "\n"


def _stacks(evaluation: Evaluation) -> bool:
    return evaluation.assigned and evaluation.step.outputs.kind != "none"


def epochs_call(plan: EpochPlan) -> str:
    call = f"{plan.epochs_name}({plan.epoch_count}, {', '.join(plan.arguments)})"
    return f"{plan.outputs_name} = {call}" if plan.returns_outputs() else call


def loop_row(plan: EpochPlan, epoch: str) -> str:
    """S_loop's outputs of epoch `epoch`, in the structure it returns them."""
    outputs = plan.outputs_name + ("[0]" if plan.evaluations else "")
    keys = iter(_leaves(plan.structure))
    return _rebuilt(plan.structure, lambda: f"{outputs}{next(keys)}[{epoch}]")


def evaluation_row(plan: EpochPlan, evaluation: Evaluation, epoch: str) -> str:
    """An evaluation's outputs at epoch `epoch`, in the structure its step function returns them."""
    outputs = f"{plan.outputs_name}[{plan.evaluations.index(evaluation) + 1}]"
    kind = evaluation.step.outputs
    if kind.kind == "none":
        return "None"
    if kind.kind == "single":
        return f"{outputs}[{epoch}]"
    if kind.kind == "dict":
        items = [f"{key}: {outputs}[{key}][{epoch}]" for key in kind.keys] + [f"{key}: None" for key in kind.none_keys]
        return "{" + ", ".join(items) + "}"
    items = [f"{outputs}[{i}][{epoch}]" if i in kind.keys else "None" for i in range(kind.length)]
    if kind.kind == "tuple":
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return "[" + ", ".join(items) + "]"


def _leaves(structure: cst.BaseExpression | None, key: str = "") -> list[str]:
    """Subscript paths (`[1]`, `[0][2]`) of the stacked tensors in a returned structure."""
    if structure is None or is_none(structure):
        return []
    if isinstance(structure, (cst.List, cst.Tuple)):
        return [leaf for j, e in enumerate(structure.elements) for leaf in _leaves(e.value, f"{key}[{j}]")]
    return [key]


def _rebuilt(structure: cst.BaseExpression, leaf) -> str:
    if is_none(structure):
        return "None"
    if isinstance(structure, cst.List):
        return "[" + ", ".join(_rebuilt(e.value, leaf) for e in structure.elements) + "]"
    if isinstance(structure, cst.Tuple):
        inner = [_rebuilt(e.value, leaf) for e in structure.elements]
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    return leaf()


def returned_structure(function: cst.FunctionDef) -> cst.BaseExpression | None:
    """What the multi-step function returns when it is a (nested) list/tuple of `x.stack()` and None."""
    last = function.body.body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            and last.body[0].value is not None):
        return None
    value = last.body[0].value
    return value if _stacked_structure(value) else None


def _stacked_structure(node: cst.BaseExpression) -> bool:
    if is_none(node):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(isinstance(e, cst.Element) and _stacked_structure(e.value)
                                           for e in node.elements)
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "stack"
            and not node.args and isinstance(node.func.value, cst.Name))
