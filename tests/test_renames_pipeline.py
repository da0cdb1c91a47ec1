"""The TFM1xx transforms together, through migrate_code: phase order, how they combine on the two
TF1 import styles, stability, and (in child processes) that migrated programs run on the installed
TensorFlow 2 and compute what the legacy program computes on tf.compat.v1."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from migrate.runner import Options, migrate_code
from transforms import selected_transforms

RENAMES = Options(select=("TFM1",))

# A TF1 program in the style that only ran on TF1 (`import tensorflow as tf`). It sets RESULT.
TF1_BODY = textwrap.dedent("""\
    import numpy as np

    x = tf.placeholder(tf.float32, [None, 3], name="x")
    labels = tf.placeholder(tf.float32, [None, 3], name="labels")
    keep = tf.placeholder_with_default(1.0, [])
    h = tf.nn.dropout(tf.nn.relu(x), keep)
    total = tf.reduce_sum(h, reduction_indices=[1], keep_dims=True)
    best = tf.to_float(tf.arg_max(h, 1))
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=h))
    label_grads = tf.gradients(loss, labels)
    picked = tf.cond(tf.reduce_any(x > 2.0), lambda: tf.log(total), lambda: total)
    step = tf.Variable(3.0, trainable=False, name="step")
    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    batches = tf.data.Dataset.from_tensor_slices([1, 2, 3]).batch(2).make_one_shot_iterator().get_next()
    feed = {x: np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]]), labels: np.eye(3)[:2]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([total, best, loss, picked, step, batches], feed)
        summary = sess.run(merged, feed)
    RESULT = [np.asarray(v).tolist() for v in values]
    RESULT += [label_grads[0] is None, len(summary) > 0]
""")
TF1_PROGRAM = "import tensorflow as tf\n\n" + TF1_BODY
COMPAT_PROGRAM = "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n" + TF1_BODY

# The first program runs in a pristine process (so a missing disable_v2_behavior() shows); the
# others each get a fresh default graph.
RUNNER = r"""
import json, sys, traceback
out = {}
for index, (name, source) in enumerate(json.load(sys.stdin)):
    if index:
        import tensorflow
        tensorflow.compat.v1.reset_default_graph()
    scope = {"__name__": "__main__"}
    try:
        exec(compile(source, name, "exec"), scope)
        out[name] = scope["RESULT"]
    except Exception as error:
        out[name] = "error: " + "".join(traceback.format_exception_only(type(error), error)).strip()
print(json.dumps(out))
"""


def run_programs(programs: list[tuple[str, str]]) -> dict:
    """Run programs one after another in one fresh Python process; RESULT or the error of each."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    child = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(programs), env=env,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_phase_order_normalizes_first_guards_after_the_renames_and_reports_what_is_missing_last():
    codes = [t.CODE for t in selected_transforms(select=("TFM1",))]
    assert codes == ["TFM104", "TFM109", "TFM108", "TFM103", "TFM102", "TFM101", "TFM106", "TFM105", "TFM107"]
    everything = [t.CODE for t in selected_transforms()]
    assert everything.index("TFM104") == 0


@pytest.mark.parametrize("program", [TF1_PROGRAM, COMPAT_PROGRAM], ids=["import_tf", "import_compat_v1"])
def test_both_import_styles_reach_the_same_tf2_code(program):
    migrated = migrate_code(program, RENAMES).module.code
    reference = migrate_code(TF1_PROGRAM, RENAMES).module.code
    assert _statements(migrated) == _statements(reference)
    assert "import tensorflow as tf\n" in migrated and "compat.v1 as tf" not in migrated
    assert "tf.compat.v1.disable_v2_behavior()" in migrated
    assert migrate_code(migrated, RENAMES).module.code == migrated, "not stable"


def test_migrated_code_uses_tf2_names_and_pins_only_tf1_only_symbols():
    migrated = migrate_code(COMPAT_PROGRAM, RENAMES).module.code
    for tf2 in ("tf.reduce_sum(h, axis=[1], keepdims=True)", "tf.cast(tf.argmax(h, 1), tf.float32)",
                "tf.nn.dropout(tf.nn.relu(x), rate=1 - keep)", "labels=tf.stop_gradient(labels)",
                "tf.math.log(total)", "tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset"):
        assert tf2 in migrated, tf2
    for pinned in ("tf.compat.v1.placeholder(", "tf.compat.v1.Session()", "tf.compat.v1.summary.scalar(",
                   "tf.compat.v1.summary.merge_all()", "tf.compat.v1.cond("):
        assert pinned in migrated, pinned


def _statements(code: str) -> list[str]:
    """The program without imports, blank lines and the inserted disable_v2_behavior() call (where
    that goes depends on the import style)."""
    return [line for line in code.splitlines()
            if line.strip() and "import " not in line and "disable_v2_behavior" not in line]


@pytest.mark.parametrize("program", [TF1_PROGRAM, COMPAT_PROGRAM], ids=["import_tf", "import_compat_v1"])
def test_every_tf1_only_use_is_reported_once_where_it_is(program):
    findings = migrate_code(program, RENAMES).findings
    for symbol in ("tf.placeholder", "tf.Session", "tf.summary.merge_all"):
        lines = [n for n, text in enumerate(program.splitlines(), 1) if f"{symbol}(" in text]
        reported = [f.line for f in findings if f.message.startswith(f"{symbol} has no TF2 equivalent")]
        assert lines and sorted(reported) == lines, symbol


@pytest.mark.slow
def test_migrated_programs_run_on_tf2_and_match_the_legacy_program():
    legacy = run_programs([("tf1_as_is", TF1_PROGRAM), ("legacy", COMPAT_PROGRAM)])
    assert legacy["tf1_as_is"].startswith("error: AttributeError"), "the TF1 program should not run as is"
    assert isinstance(legacy["legacy"], list), legacy["legacy"]
    migrated = run_programs([
        ("from_tf1", migrate_code(TF1_PROGRAM, RENAMES).module.code),
        ("from_compat", migrate_code(COMPAT_PROGRAM, RENAMES).module.code),
        ("normalize_only", migrate_code(COMPAT_PROGRAM, Options(select=("TFM104",))).module.code),
    ])
    for name, result in migrated.items():
        assert result == legacy["legacy"], (name, result)


# TensorFlow 0.x names (renamed in TF 1.0) and the same program with their TF 1.x names: RESULT.
PRE_1_0_BODY = textwrap.dedent("""\
    import numpy as np

    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable([[1.0], [-2.0], [0.5]])
    scaled = tf.mul(tf.matmul(x, w), 2.0)
    centred = tf.sub(scaled, tf.reduce_mean(scaled))
    stacked = tf.pack([centred, tf.neg(centred)])
    chosen = tf.select(centred > 0.0, centred, tf.zeros_like(centred))
    tf.scalar_summary("mean", tf.reduce_mean(chosen))
    summaries = tf.merge_all_summaries()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([stacked, chosen], {x: np.arange(6.0).reshape(2, 3)})
        summary = sess.run(summaries, {x: np.ones((1, 3))})
    RESULT = [np.asarray(v).tolist() for v in values] + [len(summary) > 0]
""")
TF1_0_NAMES = {"tf.mul(": "tf.multiply(", "tf.sub(": "tf.subtract(", "tf.pack(": "tf.stack(",
               "tf.neg(": "tf.negative(", "tf.select(": "tf.where(", "tf.scalar_summary(": "tf.summary.scalar(",
               "tf.merge_all_summaries(": "tf.summary.merge_all("}


def test_tensorflow_0_names_are_renamed_on_to_tf2_and_the_program_runs_as_its_tf1_version():
    program = "import tensorflow as tf\n\n" + PRE_1_0_BODY
    tf1_version = "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n" + PRE_1_0_BODY
    for old, new in TF1_0_NAMES.items():
        tf1_version = tf1_version.replace(old, new)
    outcome = migrate_code(program, RENAMES)
    migrated = outcome.module.code
    assert not [f for f in outcome.findings if not f.fixed], [f.message for f in outcome.findings]
    for expected in ("tf.multiply(", "tf.subtract(", "tf.stack([centred, tf.negative(centred)])",
                     "tf.compat.v1.where(", "tf.compat.v1.summary.scalar(", "tf.compat.v1.summary.merge_all()"):
        assert expected in migrated, expected
    assert migrate_code(migrated, RENAMES).module.code == migrated, "not stable"
    results = run_programs([("migrated", migrated), ("tf1_version", tf1_version)])
    assert isinstance(results["tf1_version"], list), results["tf1_version"]
    assert results["migrated"] == results["tf1_version"]
