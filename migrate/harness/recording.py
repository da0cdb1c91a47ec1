"""Recording run-site calls cheaply inside a side subprocess: flattening fetched structures, and a
`Recorder` that keeps timestamps, the first N calls' values and inputs, and the last call's values,
then writes them to `records.npz` for the parent.

Runs on the legacy side too, possibly on a user's TF 1.15 / Python 3.7 interpreter
(`--legacy-python`): standard library and NumPy only, Python 3.7 syntax.
"""
from __future__ import absolute_import, division, print_function

import os
import time

import numpy as np

# Keys of the flattened structure: "" for a bare value, otherwise "0", "1.loss", ...
ROOT_PATH = ""


def flatten(structure, prefix=ROOT_PATH):
    """(path, leaf) pairs of a nested fetch/return structure, in a deterministic order.

    Dicts are walked in sorted key order so that a legacy `sess.run({...})` and a migrated function
    returning the same dict line up leaf by leaf; lists, tuples and namedtuples by position.
    """
    if isinstance(structure, dict):
        pairs = []
        for key in sorted(structure, key=str):
            pairs.extend(flatten(structure[key], _join(prefix, str(key))))
        return pairs
    if isinstance(structure, (list, tuple)):
        pairs = []
        for index, item in enumerate(structure):
            pairs.extend(flatten(item, _join(prefix, str(index))))
        return pairs
    return [(prefix, structure)]


def _join(prefix, key):
    return key if prefix == ROOT_PATH else prefix + "." + key


class SiteRecord(object):
    """Everything recorded for one run site: call timing, the first `limit` calls' values, the last call."""

    def __init__(self, key, limit):
        self.key = key
        self.limit = limit
        self.starts = []
        self.ends = []
        self.pre = []  # harness seconds spent before each call (between the previous call and it)
        self.post = []  # harness seconds spent after each call
        self.sequence = []
        self.values = {}  # call index -> list of leaves (converted when written)
        self.inputs = {}  # call index -> list of input leaves
        self.last = None
        self.paths = None
        self.fetch_names = None
        self.facts = {}

    @property
    def calls(self):
        return len(self.starts)


def copy_of_array(leaf):
    """A NumPy array's copy (sess.run's arrays belong to the program, which may write into them
    after the run); anything else as it is."""
    return leaf.copy() if isinstance(leaf, np.ndarray) else leaf


class Recorder(object):
    """Collects run-site calls cheaply: a few list appends per call; conversion waits for `write()`.

    `convert` turns one recorded leaf into a NumPy array (the migrated side keeps tensors as they
    are until the end, so recording never forces a device sync inside the timed loop); `snapshot`,
    if given, is applied to each leaf when it is recorded (to copy values that may change later).
    """

    def __init__(self, limit, convert, snapshot=None):
        self.limit = limit
        self.convert = convert
        self.snapshot = snapshot
        self.sites = {}
        self.order = []
        self.counter = 0
        self.overhead = 0.0

    def site(self, key):
        record = self.sites.get(key)
        if record is None:
            record = self.sites[key] = SiteRecord(key, self.limit)
            self.order.append(key)
        return record

    def record(self, key, start, end, outputs, inputs=None, fetch_names=None, pre=0.0, post=0.0):
        """Note one call of a run site that started at `start` and returned `outputs` at `end`.

        `pre` and `post`: seconds the harness spent around the call (bookkeeping, probes); with this
        method's own time they are subtracted from the measured speed of the program.
        """
        began = time.perf_counter()
        record = self.site(key)
        call = record.calls
        record.starts.append(start)
        record.ends.append(end)
        record.sequence.append(self.counter)
        self.counter += 1
        flat = flatten(outputs)
        if record.paths is None:
            record.paths = [path for path, _ in flat]
            if fetch_names is not None:
                record.fetch_names = fetch_names
        leaves = [leaf for _, leaf in flat]
        if self.snapshot is not None:
            leaves = [self.snapshot(leaf) for leaf in leaves]
        if call < self.limit:
            record.values[call] = leaves
            if inputs is not None:
                record.inputs[call] = inputs
        record.last = leaves
        own = time.perf_counter() - began
        record.pre.append(pre)
        record.post.append(post + own)
        self.overhead += pre + post + own

    def write(self, out_dir):
        """Write records.npz and return the JSON-able description of every site."""
        arrays = {}
        described = []
        for number, key in enumerate(self.order):
            record = self.sites[key]
            described.append(self._describe(number, record, arrays))
        np.savez(os.path.join(out_dir, "records.npz"), **arrays)
        return described

    def _describe(self, number, record, arrays):
        prefix = "s%d" % number
        arrays[prefix + "_start"] = np.asarray(record.starts, dtype=np.float64)
        arrays[prefix + "_end"] = np.asarray(record.ends, dtype=np.float64)
        arrays[prefix + "_seq"] = np.asarray(record.sequence, dtype=np.int64)
        arrays[prefix + "_pre"] = np.asarray(record.pre, dtype=np.float64)
        arrays[prefix + "_post"] = np.asarray(record.post, dtype=np.float64)
        recorded = sorted(record.values)
        kinds = {}
        for call in recorded:
            kinds[call] = self._store(arrays, "%s_c%d" % (prefix, call), record.values[call])
        last_kinds = self._store(arrays, prefix + "_last", record.last or [])
        input_counts = {}
        for call in sorted(record.inputs):
            input_counts[call] = len(self._store(arrays, "%s_i%d" % (prefix, call), record.inputs[call]))
        return {
            "key": record.key, "index": number, "calls": record.calls, "paths": record.paths or [],
            "fetch_names": record.fetch_names, "recorded_calls": recorded,
            "leaf_kinds": [kinds[call] for call in recorded], "last_kinds": last_kinds,
            "input_calls": sorted(input_counts), "input_counts": [input_counts[c] for c in sorted(input_counts)],
            "facts": record.facts,
        }

    def _store(self, arrays, prefix, leaves):
        """Store convertible leaves as `<prefix>_l<k>`; return each leaf's kind: array, none or opaque."""
        kinds = []
        for index, leaf in enumerate(leaves):
            if leaf is None:
                kinds.append("none")
                continue
            try:
                value = np.asarray(self.convert(leaf))
            except Exception:  # an object no array can hold: reported as opaque, never compared
                kinds.append("opaque")
                continue
            if value.dtype == object:
                value = _string_array(value)
                if value is None:
                    kinds.append("opaque")
                    continue
            arrays["%s_l%d" % (prefix, index)] = value
            kinds.append("array")
        return kinds


def _string_array(value):
    """A fixed-width string array for an object array of bytes (TensorFlow's string tensors) or of
    str, so that it can be stored and compared exactly (a fixed-width bytes array drops trailing NUL
    bytes); None for any other object array."""
    items = value.ravel().tolist()
    for kind in (bytes, str):
        if items and all(isinstance(item, kind) for item in items):
            return np.array(items, dtype=kind).reshape(value.shape)
    return None
