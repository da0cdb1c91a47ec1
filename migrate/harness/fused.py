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
its step number (arguments holding a row per step of the call are split between the two). Each call's duration is spread evenly over its steps (their recorded starts); the
harness's own time (between the two calls, joining and recording after them) is charged where it
happened.
"""
from __future__ import annotations

import time



def map_tensors(structure, function):
    """`structure` with `function` applied to every tensor (None and plain values kept)."""
    if isinstance(structure, dict):
        return {key: map_tensors(value, function) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        mapped = [map_tensors(value, function) for value in structure]
        return type(structure)(mapped) if type(structure) in (list, tuple) else type(structure)(*mapped)
    if structure is None or not hasattr(structure, "shape"):
        return structure
    return function(structure)


def row(structure, index):
    """`structure` with every tensor replaced by its row `index` (None and plain values kept)."""
    return map_tensors(structure, lambda tensor: tensor[index])


def _as_list(flags):
    return flags.numpy().tolist() if hasattr(flags, "numpy") else list(flags)


def record_call(recorder, key, start, end, value):
    """Record one call of `key`; (its site, its index there)."""
    recorder.record(key, start, end, value)
    site = recorder.site(key)
    return site, len(site.pre) - 1


def settle(recorder, made, split: int, parts, before: float) -> None:
    """Charge the harness's time for the calls `made` ((site, index) each) by one or two calls of a
    fused function (`parts`; the second call's records start at `made[split]`) where it happened:
    between the two calls (the harness splitting them) and after the last (joining, unstacking,
    recording); none to the calls themselves. `before`: the recorder's overhead before them."""
    for site, index in made:
        site.pre[index] = site.post[index] = 0.0
    gap = parts[1][1] - parts[0][2] if len(parts) == 2 else 0.0
    if gap:
        site, index = made[split]
        site.pre[index] = gap
    site, index = made[-1]
    site.post[index] = time.perf_counter() - parts[-1][2]
    recorder.overhead = before + gap + site.post[index]


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
    output structure per step function: each step's time is shared between them, in that order.

    One running an evaluation at some steps (`evaluation`: its key, also in `step_key` at its place
    in the order) takes, as its last argument, one boolean per step telling where it runs, and returns
    (the step's outputs, the evaluation's outputs stacked for those steps only): the evaluation's
    rows are recorded as its calls, at those steps, in their order with the step's.

    Arguments at the positions `rows` (counted after `first, stop`) hold one row per step of the
    call, row 0 for step `first` (batches drawn ahead in Python, `fusion/draws.py`): a call made as
    two gets each part's rows."""

    def __init__(self, compiled, step_key, probe, evaluation=None, rows=()):
        self._compiled = compiled
        self._keys = step_key if isinstance(step_key, list) else None
        self._key = step_key
        self._probe = probe
        self._warm = False
        self._evaluation = evaluation
        self._rows = frozenset(rows)

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
            part = [arg[low - first:high - first] if i in self._rows else arg for i, arg in enumerate(args)]
            start = time.perf_counter()
            outputs = self._compiled(low, high, *part, **kwargs)
            parts.append((high - low, start, time.perf_counter(), outputs))
        outputs = parts[0][3]
        if len(parts) == 2:
            outputs = concatenate(self._probe.tf, outputs, parts[1][3])
        flags = None
        if self._evaluation is not None:
            flags = [bool(flag) for flag in _as_list(args[-1])][first:stop]
        self.record(parts, outputs, flags)
        return outputs

    def _step_keys(self, evaluated: bool):
        """The keys recorded at one step, in call order, and where each finds its outputs."""
        if self._evaluation is None:
            keys = self._keys or [self._key]
            return [(key, j if self._keys else None) for j, key in enumerate(keys)]
        return [(key, 1 if key == self._evaluation else 0) for key in self._keys
                if evaluated or key != self._evaluation]

    def record(self, parts, outputs, flags=None):
        """Record each part's steps spread evenly over its call; harness time where it happened."""
        recorder = self._probe.recorder
        before, total, evaluations, made, firsts = recorder.overhead, 0, 0, [], []
        for steps, start, end, _ in parts:
            firsts.append(len(made))  # where each call's records start
            width = (end - start) / max(steps, 1)
            for index in range(steps):
                evaluated = flags is not None and flags[total + index]
                recorded = self._step_keys(evaluated)
                share = width / len(recorded)
                step_row = row(outputs[0] if flags is not None else outputs, total + index)
                for j, (key, where) in enumerate(recorded):
                    step_start = start + index * width + j * share
                    if flags is not None and where == 1:
                        value = row(outputs[1], evaluations)
                    elif flags is not None:
                        value = step_row
                    else:
                        value = step_row[where] if where is not None else step_row
                    made.append(record_call(recorder, key, step_start, step_start + share, value))
                evaluations += evaluated
            total += steps
        if made:
            settle(recorder, made, firsts[-1], parts, before)

    def __getattr__(self, name):
        return getattr(self._compiled, name)


class MergedSteps:
    """A function running several step functions once each, in turn (TFM311), returning one output
    structure per step function: each call is recorded as one call of each of them (`step_keys`, in
    order), the call's time shared evenly between them in that order."""

    def __init__(self, compiled, step_keys, probe):
        self._compiled = compiled
        self._keys = step_keys
        self._probe = probe

    def __call__(self, *args, **kwargs):
        if not self._probe.tf.executing_eagerly():
            return self._compiled(*args, **kwargs)
        start = time.perf_counter()
        outputs = self._compiled(*args, **kwargs)
        share = (time.perf_counter() - start) / len(self._keys)
        for index, key in enumerate(self._keys):
            self._probe.recorder.record(key, start + index * share, start + (index + 1) * share, outputs[index])
        return outputs

    def __getattr__(self, name):
        return getattr(self._compiled, name)


class FusedEpochs:
    """Recording a fused epoch loop (TFM310) as the step calls it replaces.

    `S_loop_epochs(epochs, first, stop, *arrays)` runs the multi-step function `S_loop(first, stop,
    ...)` `epochs` times in one graph, the same steps every epoch, with the step functions the epoch
    loop evaluated (`calls`: in the loop's order, None standing for S_loop); every output is stacked
    along a leading epoch axis. It returns S_loop's structure, or with evaluations (S_loop's
    structure, each evaluation's outputs). One call is recorded epoch by epoch: S_loop's steps as
    calls of `fn:S` (`stop - first` per epoch), each evaluation as one call of its own key, in order.

    Timing as for `S_loop`: the first call is made as two, the warm-up epochs (10% of them, at least
    one) then the rest, so the one-time costs fall in warm-up calls; a call's time is spread evenly
    over the calls it records, the harness's own time charged where it happened.
    """

    def __init__(self, compiled, step_key, probe, calls=None):
        self._compiled = compiled
        self._probe = probe
        self._steps = FusedFunction(None, step_key, probe)  # S_loop's per-step keys and their outputs
        self._calls = calls or [None]
        self._warm = False

    def __call__(self, epochs, first, stop, *args, **kwargs):
        if not self._probe.tf.executing_eagerly():
            return self._compiled(epochs, first, stop, *args, **kwargs)
        epochs, per_epoch = int(epochs), max(int(stop) - int(first), 0)
        bounds = [epochs]
        if not self._warm and epochs >= 2:
            warm = max(1, int(epochs * self._probe.warmup_fraction))
            bounds = [warm, epochs - warm]
        self._warm = self._warm or epochs > 0
        parts = []
        for count in bounds:
            start = time.perf_counter()
            outputs = self._compiled(count, first, stop, *args, **kwargs)
            parts.append((count, start, time.perf_counter(), outputs))
        outputs = parts[0][3]
        if len(parts) == 2:
            outputs = concatenate(self._probe.tf, outputs, parts[1][3])
        if len(self._calls) == 1 and epochs * per_epoch:
            steps = [(count * per_epoch, start, end, None) for count, start, end, _ in parts]
            self._steps.record(steps, by_step(self._probe.tf, outputs))
        elif len(self._calls) > 1 and epochs:
            self._record_epochs(parts, outputs, per_epoch)
        return outputs

    def _record_epochs(self, parts, outputs, per_epoch: int) -> None:
        recorder = self._probe.recorder
        before, made, epoch, firsts = recorder.overhead, [], 0, []
        evaluations = iter(range(1, len(self._calls)))
        where = {call: next(evaluations) for call in self._calls if call is not None}
        step_keys = self._steps._step_keys(False)
        calls_per_epoch = sum(per_epoch * len(step_keys) if call is None else 1 for call in self._calls)
        for count, start, end, _ in parts:
            firsts.append(len(made))  # where each call's records start
            width, at = (end - start) / max(count * calls_per_epoch, 1), start
            for _ in range(count):
                for call in self._calls:
                    if call is not None:
                        made.append(record_call(recorder, call, at, at + width, row(outputs[where[call]], epoch)))
                        at += width
                        continue
                    steps = row(outputs[0], epoch)
                    for index in range(per_epoch):
                        for key, position in step_keys:
                            value = row(steps, index)
                            made.append(record_call(recorder, key, at, at + width,
                                                    value if position is None else value[position]))
                            at += width
                epoch += 1
        settle(recorder, made, firsts[-1], parts, before)

    def __getattr__(self, name):
        return getattr(self._compiled, name)


def by_step(tf, structure):
    """`structure` with every [epochs, steps, ...] tensor reshaped to [epochs * steps, ...]."""
    return map_tensors(structure, lambda t: tf.reshape(t, tf.concat([[-1], tf.shape(t)[2:]], axis=0)))
