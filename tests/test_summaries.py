"""v1 summaries -> tf.summary v2 (transforms/graph/outputs/summaries.py), checked on what matters to a user:
the event files the migrated program writes hold the same tags, steps and values as the legacy ones.
Also the harness's reading of fetched TF1 summaries (migrate/harness/summaries.py)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from migrate.harness.summaries import Opaque, read_events, readable_summaries
from test_sessions_to_functions_examples import EXAMPLES, migrated, results, run


def test_migrated_summaries_write_the_legacy_tags_steps_and_values(tmp_path: Path) -> None:
    legacy_logs, new_logs = tmp_path / "legacy_logs", tmp_path / "new_logs"
    legacy = run(["-m", "migrate.legacy_runtime", str(EXAMPLES / "summaries_v1.py"), "--logdir", str(legacy_logs)],
                 tmp_path)
    program = migrated("summaries_v1", tmp_path)
    assert "create_file_writer" in program.read_text()
    new = run([str(program), "--logdir", str(new_logs)], tmp_path)
    assert results(legacy) == results(new)  # same training, number for number

    before, after = read_events(str(legacy_logs)), read_events(str(new_logs))
    assert set(before) == set(after) == {"summaries/loss", "summaries/bias", "summaries/weights"}
    for tag in before:
        assert sorted(before[tag]) == sorted(after[tag]) == [0, 3, 6, 9], tag
    for step, value in before["summaries/loss"].items():
        assert math.isclose(value, after["summaries/loss"][step], rel_tol=1e-6)
    for step, value in before["summaries/bias"].items():
        assert math.isclose(value, after["summaries/bias"][step], rel_tol=1e-6, abs_tol=1e-7)
    for step, (count, low, high) in before["summaries/weights"].items():
        new_count, new_low, new_high = after["summaries/weights"][step]
        assert count == new_count == 1.0
        assert math.isclose(low, new_low, rel_tol=1e-6) and math.isclose(high, new_high, rel_tol=1e-6)


def test_fetched_tf1_summaries_are_recorded_as_tag_dicts() -> None:
    import tensorflow as tf

    summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(tag="loss", simple_value=0.5),
                                          tf.compat.v1.Summary.Value(tag="w", histo=tf.compat.v1.HistogramProto())])
    outputs, changed = readable_summaries([summary.SerializeToString(), np.float32(2.0)], tf.compat.v1.Summary)
    assert changed
    assert outputs[0]["loss"] == np.float32(0.5) and isinstance(outputs[0]["w"], Opaque)
    assert outputs[1] == np.float32(2.0)
    assert readable_summaries([b"not a summary", "text"], tf.compat.v1.Summary) == ([b"not a summary", "text"], False)
