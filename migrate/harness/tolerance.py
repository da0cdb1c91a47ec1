"""When two recorded values count as the same, following TF's migration guide: within 1e-5 for the
first 10 training steps, within 5% afterwards (training amplifies float round-off step by step).
A call's step is its index at its run site or, when more, the number of training calls the legacy
program made before it (see compare.compare_site).

After the early steps a tensor is judged as a whole: within 5% element by element, or within 5% in
norm (`||migrated - legacy||_2 <= atol * sqrt(n) + rtol * ||legacy||_2`). Round-off grows through
training into every weight, so after hundreds of steps elements near zero differ by far more than 5%
of themselves while the tensor as a whole is still well within 5%. Measured on
legacy_examples/rnn_lstm_classifier.py at 300 steps (float32): the migration's held-out LSTM outputs
differ by at most 0.0195 (354 of 12288 elements beyond 5% of themselves; 0.35% in norm), and the
*legacy program against itself* already fails the element-wise rule: its initial weights moved by one
ulp (1 element, max 2.5e-4), or its forget bias kept inside the bias variable as Keras keeps it
(3 elements, max 4.2e-4). Run in float64 instead, the same migration stays within 1.1e-6 of legacy
(loss within 7e-6 relative over all 300 steps; what remains is TF1's float32 Adam beta-power
accumulators): the difference is round-off growth, not a different computation. Early calls, where
wrong signs, learning rates and transposed weights show, keep the strict element-wise rule."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EARLY_STEPS = 10
# Early steps are judged by `atol`, plus the guide's 1e-5 as relative slack, so that large magnitudes
# (a loss of 1e4 after a few Adam steps, where TF1's fused kernel and Keras round differently) are
# not failed for their last bits.
EARLY_RTOL = 1e-5
# Denominator floor of the reported relative error, so exact zeros do not make it infinite.
REL_FLOOR = 1e-12
# Slack for a migrated program running in mixed precision: about ten times the machine epsilon of
# its compute dtype (float16 2**-10, bfloat16 2**-7), as absolute and early relative tolerance.
MIXED_PRECISION_SLACK = {"mixed_float16": 1e-2, "mixed_bfloat16": 8e-2}


@dataclass(frozen=True)
class Tolerance:
    atol: float = 1e-5
    rtol: float = 0.05
    early_steps: int = EARLY_STEPS
    early_rtol: float = EARLY_RTOL

    def at_step(self, step: int) -> tuple[float, float]:
        """(atol, rtol) for the given 0-based call index of a run site."""
        return (self.atol, self.early_rtol) if step < self.early_steps else (self.atol, self.rtol)

    def normwise_at(self, step: int) -> bool:
        """Whether a call at this 0-based index may also pass by the norm-wise rule (after the early steps)."""
        return step >= self.early_steps

    def for_policy(self, policy: str | None) -> Tolerance:
        """The tolerance for a migrated side that ran under this Keras dtype policy: wider for a
        mixed one (its float16/bfloat16 activations round far more than float32), else unchanged."""
        slack = MIXED_PRECISION_SLACK.get(policy or "")
        if slack is None:
            return self
        return Tolerance(atol=max(self.atol, slack), rtol=max(self.rtol, 2 * slack), early_steps=self.early_steps,
                         early_rtol=max(self.early_rtol, slack))

    def to_dict(self) -> dict:
        return {"atol": self.atol, "rtol": self.rtol, "early_steps": self.early_steps,
                "early_rtol": self.early_rtol}


@dataclass(frozen=True)
class LeafComparison:
    """Errors between a legacy value and its migrated counterpart, and whether they are close."""

    close: bool
    max_abs: float
    max_rel: float
    problem: str | None = None  # shape or type mismatch: not comparable element by element


def compare_leaf(legacy, migrated, atol: float, rtol: float, normwise: bool = False) -> LeafComparison:
    """Compare two arrays elementwise: |migrated - legacy| <= atol + rtol * |legacy|; with `normwise`
    (after training), also close when ||migrated - legacy||_2 <= atol * sqrt(n) + rtol * ||legacy||_2.

    NaNs (and infinities of one sign) count as equal only where both sides have them; complex
    numbers and strings must be exactly equal.
    """
    legacy, migrated = np.asarray(legacy), np.asarray(migrated)
    if legacy.shape != migrated.shape:
        return LeafComparison(False, float("inf"), float("inf"),
                              f"shape {list(migrated.shape)} where legacy has {list(legacy.shape)}")
    if not (_numeric(legacy) and _numeric(migrated)):
        same = bool(np.array_equal(legacy, migrated))
        return LeafComparison(same, 0.0 if same else float("inf"), 0.0 if same else float("inf"),
                              None if same else "non-numeric values differ")
    if legacy.size == 0:
        return LeafComparison(True, 0.0, 0.0)
    expected, actual = legacy.astype(np.float64), migrated.astype(np.float64)
    same = (expected == actual) | (np.isnan(expected) & np.isnan(actual))
    with np.errstate(invalid="ignore", over="ignore"):
        difference = np.where(same, 0.0, np.abs(actual - expected))
    difference = np.where(np.isnan(difference), np.inf, difference)
    relative = difference / np.maximum(np.abs(expected), REL_FLOOR)
    close = bool(np.all(difference <= atol + rtol * np.abs(np.nan_to_num(expected))))
    if normwise and not close and np.all(np.isfinite(difference)):
        finite = np.where(same, 0.0, expected)
        close = bool(np.linalg.norm(difference) <= atol * np.sqrt(difference.size) + rtol * np.linalg.norm(finite))
    return LeafComparison(close, float(difference.max()), float(relative.max()))


def _numeric(array: np.ndarray) -> bool:
    return array.dtype.kind in "fiub"
