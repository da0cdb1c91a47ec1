"""Names shared by the step-loop fusion (TFM301) and the harness that checks its output."""
from __future__ import annotations

LOOP_SUFFIX = "_loop"


def loop_function_name(step_function: str) -> str:
    """The multi-step function that runs `step_function` over a range of steps in one graph."""
    return step_function + LOOP_SUFFIX


def outputs_name(step_function: str) -> str:
    """The variable holding a multi-step function's stacked outputs."""
    return step_function + "_outputs"


def rows_name(step_function: str) -> str:
    """The variable holding a multi-step function's outputs unstacked: one tensor per step."""
    return step_function + "_rows"


EPOCHS_SUFFIX = "_epochs"


def epochs_function_name(step_function: str) -> str:
    """The function that runs `step_function`'s multi-step function once per epoch, all epochs in one graph."""
    return loop_function_name(step_function) + EPOCHS_SUFFIX


def epochs_outputs_name(step_function: str) -> str:
    """The variable holding an epochs function's outputs: the multi-step outputs stacked once more, by epoch."""
    return step_function + "_epochs_outputs"


STEP_SUFFIX = "_step"


def merged_function_name(step_functions: list[str]) -> str:
    """The function that runs `step_functions` once each, in turn (TFM311): `D_step`, `G_step` ->
    `D_and_G_step`; names not all ending in `_step` are joined whole."""
    if all(name.endswith(STEP_SUFFIX) for name in step_functions):
        return "_and_".join(name[: -len(STEP_SUFFIX)] for name in step_functions) + STEP_SUFFIX
    return "_and_".join(step_functions)
