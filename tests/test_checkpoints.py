"""Issue #6: a migrated program keeps its users' trained weights.

legacy_examples/core_saver_resume.py saves with tf.train.Saver; TFM201 turns that into
tf.train.Checkpoint + CheckpointManager and a restore function that also reads TF1 (name-based)
checkpoints. Here the LEGACY program (on migrate.legacy_runtime) writes a checkpoint, the MIGRATED
program restores it from the same directory (`--resume`) and must print the same evaluation
results as the legacy program did after its own restore. The restore function must refuse a
checkpoint that does not hold the program's variables instead of skipping them.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from test_sessions_to_functions_examples import EXAMPLES, migrated, results, run

NAME = "core_saver_resume"
RESTORED = ("restored_step", "restored_loss", "restored_predictions")


@pytest.fixture(scope="module")
def migrated_program(tmp_path_factory) -> Path:
    return migrated(NAME, tmp_path_factory.mktemp("migrated"))


def test_migrated_program_restores_the_legacy_checkpoint(migrated_program: Path, tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints"
    legacy = results(run(["-m", "migrate.legacy_runtime", str(EXAMPLES / f"{NAME}.py"),
                          "--checkpoint_dir", str(checkpoints)], tmp_path))
    assert (checkpoints / "model.ckpt-8.index").exists()  # a TF1 name-based checkpoint
    resumed = results(run([str(migrated_program), "--checkpoint_dir", str(checkpoints), "--resume"], tmp_path))
    assert set(resumed) == set(RESTORED)
    assert {key: resumed[key] for key in RESTORED} == {key: legacy[key] for key in RESTORED}


def test_restore_refuses_a_checkpoint_of_other_variables(migrated_program: Path, tmp_path: Path) -> None:
    import tensorflow as tf

    spec = importlib.util.spec_from_file_location("migrated_saver_resume", migrated_program)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    weights = tf.Variable(tf.ones([2]), name="hidden/weights")
    other = tf.Variable(tf.zeros([2]), name="other")
    path = tf.compat.v1.train.Saver({"hidden/weights": weights, "other": other}).save(None, str(tmp_path / "tf1"))
    target = tf.Variable(tf.zeros([2]))
    bias = tf.Variable(tf.zeros([2]))
    names = {"hidden/weights": target, "hidden/biases": bias}
    with pytest.raises(ValueError, match=r"missing \['hidden/biases'\], unknown \['other'\]"):
        module.restore_checkpoint(tf.train.Checkpoint(target=target, bias=bias), path, names)
    del names["hidden/biases"]
    module.restore_checkpoint(tf.train.Checkpoint(target=target), path, names, tf1_optimizer_variables=("other",))
    assert target.numpy().tolist() == [1.0, 1.0]
