"""TFM304 (transforms/speed/feed_batches_from_datasets.py): minibatch loops slicing NumPy arrays read the
same batches from a tf.data pipeline with prefetch, when asked (`input_pipeline: tf.data`)."""
from __future__ import annotations

from pathlib import Path

import libcst as cst

from migrate.harness.programs import Program
from migrate.harness.tune import VARIANTS, tune
from migrate.harness.verify import Settings
from migrate.runner import Options
from transforms import transform_by_module_name
from transforms.base import FINDINGS_KEY, TransformContext

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = '''import numpy as np
import tensorflow as tf

w = tf.Variable(tf.zeros([3, 1]))


@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None], tf.int64)])
def train_step(x, y):
    return tf.reduce_sum(tf.matmul(x, w)) + tf.cast(tf.reduce_sum(y), tf.float32)


for epoch in range(2):
    for start in range(0, len(train_x), BATCH):
        value = train_step(train_x[start:start + BATCH], train_y[start:start + BATCH])
        print(start, float(value))
'''
EXPECTED_LOOP = '''for epoch in range(2):
    train_step_batches = (tf.data.Dataset.from_tensor_slices((tf.cast(train_x, tf.float32), tf.cast(train_y, tf.int64)))
                          .batch(BATCH).prefetch(tf.data.AUTOTUNE))
    for start, (train_x_batch, train_y_batch) in zip(range(0, len(train_x), BATCH), train_step_batches):
        value = train_step(train_x_batch, train_y_batch)
        print(start, float(value))
'''


def migrate(source: str, setting: str = "tf.data") -> tuple[str, list]:
    context = TransformContext(filename="train.py", scratch={"settings": {"input_pipeline": setting}})
    transform = transform_by_module_name("feed_batches_from_datasets")(context)
    return transform.transform_module(cst.parse_module(source)).code, context.scratch.get(FINDINGS_KEY, [])


def test_a_slicing_loop_reads_the_same_batches_from_a_dataset():
    output, findings = migrate(PROGRAM)
    assert output.endswith(EXPECTED_LOOP)
    assert [f.code for f in findings] == ["TFM304"]
    assert migrate(output)[0] == output  # stable


def test_off_unless_asked():
    assert migrate(PROGRAM, "off")[0] == PROGRAM


def test_loops_that_might_read_other_rows_are_left_alone():
    unchanged = [
        PROGRAM.replace("range(0, len(train_x), BATCH)", "range(1, len(train_x), BATCH)"),  # not from row 0
        PROGRAM.replace("range(0, len(train_x), BATCH)", "range(0, 100, BATCH)"),  # length not the array's
        PROGRAM.replace("print(start, float(value))", "print(train_x[start])"),  # array read elsewhere
        PROGRAM.replace("train_x[start:start + BATCH], train_y[start:start + BATCH]",
                        "train_x[start:start + 2 * BATCH], train_y[start:start + 2 * BATCH]"),  # other rows
        PROGRAM.replace("print(start, float(value))", "start += 1"),  # loop variable rebound
    ]
    for source in unchanged:
        output, findings = migrate(source)
        assert output == source and not findings


def test_metrics_example_fed_from_tf_data_is_still_equivalent(tmp_path: Path, monkeypatch):
    # TFM301 now fuses both of this example's minibatch loops (the "data" variant leaves TFM304 nothing
    # to do there): with the fusion left out, TFM304 feeds them from tf.data
    monkeypatch.setitem(VARIANTS, "data_unfused", Options(ignore=("TFM301",), settings=(("input_pipeline", "tf.data"),)))
    path = ROOT / "legacy_examples" / "core_metrics_eval.py"
    trial, = tune(Program(path.name, str(path)), Settings(timeout_s=300.0), ("data_unfused",), 1, str(tmp_path))
    assert trial.equivalent, trial.reason
    assert "tf.data.Dataset.from_tensor_slices" in Path(trial.migrated).read_text()


def test_generator_and_next_batch_loops_read_the_same_batches_from_tf_data(tmp_path: Path):
    """TFM307: in the generator example's `data` variant the `next_batch` loop reads its batches through
    from_generator (the generator itself is written out and fused first: TFM308, TFM301), and the
    harness judges it equivalent to the TF1 program (same draws, same order)."""
    path = ROOT / "legacy_examples" / "feed_generator_minibatches.py"
    trial, = tune(Program(path.name, str(path)), Settings(timeout_s=300.0), ("data",), 1, str(tmp_path))
    assert trial.equivalent, trial.reason
    migrated = Path(trial.migrated).read_text()
    assert migrated.count("tf.data.Dataset.from_generator(") == 1
    assert "lambda: (feeder.next_batch(BATCH) for _ in range(FINE_TUNE_STEPS))" in migrated
    assert "train_step_loop(" in migrated


def test_generator_loops_are_fed_as_they_are_by_default():
    source = (ROOT / "tests" / "fixtures" / "feed_generators_from_datasets" / "generator.in.py").read_text()
    context = TransformContext(filename="train.py", scratch={"settings": {}})
    transform = transform_by_module_name("feed_generators_from_datasets")(context)
    assert transform.transform_module(cst.parse_module(source)).code == source
