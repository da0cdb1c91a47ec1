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
