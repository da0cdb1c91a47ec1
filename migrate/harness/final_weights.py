"""The trained weights at the end of both runs, compared variable by variable.

Many training programs fetch nothing but their train op (`sess.run(train_step, feed_dict=...)`), and
the evaluation that would print a number comes after a loop that the program, or a run budget, may
never leave: their run sites carry no values. Their weights still do. The legacy side reads every
variable whose initial value it captured once more, when the session holding them closes (or when
the program ends with it open); the migrated side reads the trainable variables the harness loaded
one for one from those initial values (not converted RNN weights). Each trainable variable both
sides read is compared with the tolerance of the training step reached.

Final weights are compared only where they describe the same point of both runs: the legacy program
ran its recorded calls in one session, and every paired run site was called as often on both sides
(a program stopped after a different number of steps would differ for that reason alone).
A variable is compared as advisory, reported but never deciding the verdict, when randomness that
was not reproduced changed the state, when unordered writes left it unsettled (ordering.py), or when
the migrated program trained in mixed precision: float16 / bfloat16 gradients move every weight a
little differently at each step, by design, and its run sites' values are the judge of that.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import numpy as np

from migrate.harness.tolerance import Tolerance, compare_leaf

FILE_NAME = "final_weights.npz"
RANDOMNESS_REASON = "random ops changed the state and their draws were not reproduced"


@dataclass
class FinalWeight:
    variable: str  # the legacy variable's name
    status: str  # match, mismatch, advisory-match, advisory-mismatch
    max_abs: float
    max_rel: float
    problem: str | None = None
    advisory_reason: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FinalWeightsInput:
    """What the comparison needs from the two runs."""

    legacy: dict | None  # key -> final value, as load() read them (None: no final weights)
    migrated: dict | None
    manifest: list  # the legacy side's weight manifest: name, key, trainable
    sessions_run: int
    training_calls: int  # state-changing legacy calls before the final read
    call_counts_agree: bool


def compare_final_weights(given: FinalWeightsInput, tolerance: Tolerance, randomness_advisory: bool,
                          unsettled: dict, mixed_precision: str | None = None) -> tuple[list[FinalWeight], str | None]:
    """The comparisons, and a note saying why none were made (None when some were)."""
    reason = _not_comparable(given)
    if reason is not None:
        return [], reason
    legacy, migrated = given.legacy, given.migrated
    atol, rtol = tolerance.at_step(given.training_calls)
    normwise = tolerance.normwise_at(given.training_calls)
    compared = []
    for entry in given.manifest:
        key, name = entry["key"], entry["name"]
        if not entry.get("trainable") or key not in legacy or key not in migrated:
            continue
        errors = compare_leaf(legacy[key], migrated[key], atol, rtol, normwise=normwise)
        advisory = _advisory_reason(name, randomness_advisory, unsettled, mixed_precision)
        status = ("advisory-" if advisory else "") + ("match" if errors.close else "mismatch")
        compared.append(FinalWeight(name, status, errors.max_abs, errors.max_rel, errors.problem, advisory))
    if not compared:
        return [], "no trainable variable was read on both sides"
    return compared, None


def _not_comparable(given: FinalWeightsInput) -> str | None:
    if given.legacy is None or given.migrated is None:
        return "no final weights were read on one side (none captured, or none loaded one for one)"
    if given.sessions_run != 1:
        return f"the legacy program ran its calls in {given.sessions_run} sessions"
    if not given.call_counts_agree:
        return "a paired run site was called a different number of times on the two sides"
    return None


def _advisory_reason(name: str, randomness_advisory: bool, unsettled: dict, mixed_precision: str | None) -> str | None:
    if f"{name}:0" in unsettled or name in unsettled:
        return "unordered writes in the legacy program left this variable unsettled"
    if randomness_advisory:
        return RANDOMNESS_REASON
    if mixed_precision:
        return f"the migrated program trained in mixed precision ({mixed_precision})"
    return None


def load(out_dir: str) -> dict | None:
    """A side's final weights by key, or None when it wrote none."""
    path = os.path.join(out_dir, FILE_NAME) if out_dir else ""
    if not os.path.isfile(path):
        return None
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def summary(weights: list[FinalWeight], note: str | None) -> dict:
    strict = [item for item in weights if not item.status.startswith("advisory-")]
    return {"compared": len(strict), "advisory": len(weights) - len(strict),
            "mismatched": [item.variable for item in strict if item.status == "mismatch"],
            "max_abs": max((item.max_abs for item in strict), default=0.0),
            "note": note, "variables": [item.to_dict() for item in weights]}
