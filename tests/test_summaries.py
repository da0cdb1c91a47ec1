"""v1 summaries -> tf.summary v2 (transforms/graph/outputs/summaries.py), checked on what matters to a user:
the event files the migrated program writes hold the same tags, steps and values as the legacy ones.
Also the harness's reading of fetched TF1 summaries (migrate/harness/summaries.py)."""
from __future__ import annotations

import math
import runpy
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


EVALUATED_SUMMARIES = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.zeros([3, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
loss_summary = tf.summary.scalar("loss", loss)
weights_summary = tf.summary.histogram("weights", w)
merged = tf.summary.merge_all()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
batch = np.ones((4, 3), np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    writer = tf.summary.FileWriter(LOG_DIR)
    for step in range(20):
        sess.run(train_op, feed_dict={x: batch})
        if step % 5 == 0:
            summary = sess.run(merged, feed_dict={x: batch})
            writer.add_summary(summary, step)
    writer.close()
'''


def test_summaries_are_written_by_one_graph_traced_once_and_evaluated_in_the_fused_loop(tmp_path: Path) -> None:
    """Eagerly, each summary op of each write is a call of its own (28 summaries: 20 ms a step on a
    CPU); the migrated writes run them in one tf.function, fed a tensor step so that every step uses
    the same trace. TFM301 still runs the evaluation in its graph loop: the summary helpers are
    recognised as such."""
    from migrate.runner import migrate_code

    outcome = migrate_code(EVALUATED_SUMMARIES)
    assert any(f.code == "TFM301" and "running compute_" in f.message for f in outcome.findings), outcome.findings
    program = outcome.module.code
    assert "@tf.function(autograph=False, reduce_retracing=True)\ndef write_summary_ops(" in program
    path = tmp_path / "migrated.py"  # AutoGraph reads the multi-step function's source from its file
    path.write_text(program)
    namespace = runpy.run_path(str(path), init_globals={"LOG_DIR": str(tmp_path / "logs")})
    assert namespace["write_summary_ops"].experimental_get_tracing_count() == 1
    events = read_events(str(tmp_path / "logs"))
    assert sorted(events) == ["loss", "weights"]
    assert sorted(events["loss"]) == sorted(events["weights"]) == [0, 5, 10, 15]
    assert events["loss"][0] > events["loss"][15]


def test_a_program_already_using_the_helper_names_keeps_its_summaries() -> None:
    from migrate.runner import migrate_code

    source = "def write_summary_ops(values):\n    return values\n\n\n" + EVALUATED_SUMMARIES
    findings = [f for f in migrate_code(source).findings if f.code == "TFM201"]
    assert [f.line for f in findings] == [1] and "already uses the name `write_summary_ops`" in findings[0].message
