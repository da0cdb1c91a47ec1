"""Recording a fused step loop (TFM301) as the step calls it replaces.

A multi-step function `S_loop(first, stop, *arrays)` runs the step function `S` for steps
first..stop-1 inside one graph and returns `S`'s output structure with every tensor stacked along a
new leading step axis (`None` outputs stay `None`). The migrated side records one call of it as
`stop - first` calls of `fn:S`: call k's values are row k of every stacked output, so the comparison
with the legacy `Session.run` site stays step by step.

Timing: the first call is made as two calls, steps first..first+w-1 then the rest, where w is the
harness's warm-up count (10%, at least one): the one-time costs (tracing, the runtime instantiating
the loop body) fall in the warm-up steps, as graph building and the first run fall in the legacy
side's. Running steps in two calls computes the same as in one: each step's arguments depend only on
its step number. Each call's duration is spread evenly over its steps (their recorded starts); the
harness's own time (between the two calls, joining and recording after them) is charged where it
happened.
"""
from __future__ import annotations

import time


def row(structure, index):
    """`structure` with every tensor replaced by its row `index` (None and plain values kept)."""
    if isinstance(structure, dict):
        return {key: row(value, index) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        rows = [row(value, index) for value in structure]
        return type(structure)(rows) if type(structure) in (list, tuple) else type(structure)(*rows)
    if structure is None or not hasattr(structure, "shape"):
        return structure
    return structure[index]


def concatenate(tf, first, second):
    """Two outputs of the multi-step function joined along the step axis (None stays None)."""
    if isinstance(first, dict):
        return {key: concatenate(tf, first[key], second[key]) for key in first}
    if isinstance(first, (list, tuple)):
        joined = [concatenate(tf, a, b) for a, b in zip(first, second)]
        return type(first)(joined) if type(first) in (list, tuple) else type(first)(*joined)
    return first if first is None else tf.concat([first, second], axis=0)


class FusedFunction:
    """A multi-step `tf.function` whose calls are recorded as calls of its step function. One that
    runs several step functions per step (`step_key` a list of their keys, in call order) returns one
    output structure per step function: each step's time is shared between them, in that order."""

    def __init__(self, compiled, step_key, probe):
        self._compiled = compiled
        self._keys = step_key if isinstance(step_key, list) else None
        self._key = step_key
        self._probe = probe
        self._warm = False

    def __call__(self, first, stop, *args, **kwargs):
        if not self._probe.tf.executing_eagerly():
            return self._compiled(first, stop, *args, **kwargs)
        first, stop = int(first), int(stop)
        bounds = [(first, stop)]
        if not self._warm and stop - first >= 2:
            split = first + max(1, int((stop - first) * self._probe.warmup_fraction))
            bounds = [(first, split), (split, stop)]
        self._warm = self._warm or stop > first  # an empty chunk (an evaluation at the first step) warms nothing
        parts = []
        for low, high in bounds:
            start = time.perf_counter()
            outputs = self._compiled(low, high, *args, **kwargs)
            parts.append((high - low, start, time.perf_counter(), outputs))
        outputs = parts[0][3]
        if len(parts) == 2:
            outputs = concatenate(self._probe.tf, outputs, parts[1][3])
        self.record(parts, outputs)
        return outputs

    def record(self, parts, outputs):
        """Record each part's steps spread evenly over its call; harness time where it happened."""
        recorder = self._probe.recorder
        keys = self._keys or [self._key]
        before, total = recorder.overhead, 0
        for steps, start, end, _ in parts:
            width = (end - start) / max(steps, 1)
            share = width / len(keys)
            for index in range(steps):
                step_row = row(outputs, total + index)
                for j, key in enumerate(keys):
                    step_start = start + index * width + j * share
                    recorder.record(key, step_start, step_start + share, step_row[j] if self._keys else step_row)
            total += steps
        if not total:
            return
        gap = parts[1][1] - parts[0][2] if len(parts) == 2 else 0.0
        for key in keys:
            site = recorder.site(key)
            site.pre[-total:] = [0.0] * total
            site.post[-total:] = [0.0] * total
            if gap and key == keys[0]:
                site.pre[-parts[1][0]] = gap  # between the two calls: the harness splitting the steps
        site = recorder.site(keys[-1])
        site.post[-1] = time.perf_counter() - parts[-1][2]  # joining, unstacking, recording
        recorder.overhead = before + gap + site.post[-1]

    def __getattr__(self, name):
        return getattr(self._compiled, name)
