"""TF1 and TF2 summaries, read so that they can be compared.

A TF1 run fetching summary ops returned a serialized Summary proto; the migrated step function
returns `{tag: value}` (transforms/graph/outputs/summaries.py). `readable_summaries` turns the legacy
protos into that form for the harness: scalars as their value, the other kinds (histograms, images,
text) as opaque values, which the comparison skips.

`read_events(log_dir)` reads an event folder written either way, TF1's FileWriter (scalars as
`simple_value`, histograms as HistogramProto) or TF2's tf.summary (both as tensors): {tag: {step:
value}}, scalars as floats and histograms as (count, min, max), which both encodings hold.

This file may run on a legacy interpreter (Python 3.7, TF 1.15): no newer syntax.
"""
from __future__ import absolute_import, division, print_function

import glob
import os

import numpy as np


class Opaque(object):
    """A summary value the harness does not compare (NumPy makes it an object array)."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return "<%s summary>" % self.kind


def readable_summaries(outputs, summary_class):
    """`outputs` with each serialized Summary proto replaced by {tag: value}; (outputs, changed)."""
    if isinstance(outputs, dict):
        pairs = [(key, readable_summaries(value, summary_class)) for key, value in outputs.items()]
        return dict((key, value) for key, (value, _) in pairs), any(changed for _, (_, changed) in pairs)
    if isinstance(outputs, (list, tuple)):
        pairs = [readable_summaries(value, summary_class) for value in outputs]
        return [value for value, _ in pairs], any(changed for _, changed in pairs)
    decoded = _decoded(outputs, summary_class)
    return (outputs, False) if decoded is None else (decoded, True)


def _decoded(value, summary_class):
    if not isinstance(value, bytes) or not value:
        return None
    try:
        summary = summary_class.FromString(value)
    except Exception:  # not a Summary proto: an ordinary string fetch
        return None
    if not summary.value or not all(entry.tag for entry in summary.value):
        return None
    return dict((entry.tag, _entry_value(entry)) for entry in summary.value)


def _entry_value(entry):
    kind = entry.WhichOneof("value")
    if kind == "simple_value":
        return np.float32(entry.simple_value)
    return Opaque(kind)


def read_events(log_dir):
    """{tag: {step: value}} of every event file in `log_dir` (scalars: float; histograms: (count,
    min, max); other kinds: their kind's name)."""
    import tensorflow as tf  # only here: the rest of this module runs inside the harness sides

    iterate = tf.compat.v1.train.summary_iterator
    found = {}
    for path in sorted(glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))):
        for event in iterate(path):
            for entry in event.summary.value:
                found.setdefault(entry.tag, {})[int(event.step)] = _event_value(entry, tf)
    return found


def _event_value(entry, tf):
    kind = entry.WhichOneof("value")
    if kind == "simple_value":
        return float(entry.simple_value)
    if kind == "histo":
        return (float(entry.histo.num), float(entry.histo.min), float(entry.histo.max))
    if kind == "tensor":
        plugin = entry.metadata.plugin_data.plugin_name
        array = tf.make_ndarray(entry.tensor)
        if plugin == "scalars":
            return float(array)
        if plugin == "histograms":
            return (float(array[:, 2].sum()), float(array[0, 0]), float(array[-1, 1])) if array.size else (0.0,)
        return plugin
    return kind
