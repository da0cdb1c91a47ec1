"""Input-loop rewrites beyond their fixtures. TFM305 (bound_iterator_loops): a loop that ran its step
until the dataset ran out runs the same steps as a counted loop, which TFM301 then fuses. TFM306
(vectorize_dataset_maps): an element-wise map moved after `batch` yields the same batches. TFM307
(feed_generators_from_datasets): Python-made batches read through from_generator are the same. TFM308
(inline_batch_generators): a generator written out in its loop feeds the same rows, and TFM301 fuses it."""
from __future__ import annotations

from pathlib import Path

import pytest

from migrate.harness.programs import Program
from migrate.harness.tune import tune
from migrate.harness.verify import Settings
from migrate.runner import migrate_code, migrate_path
from tests.test_speed_fusion import run_program

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.mark.parametrize("case", ["basic", "in_function"])
def test_counted_loop_prints_what_the_exhaustion_loop_printed(case: str, tmp_path: Path) -> None:
    folder = FIXTURES / "bound_iterator_loops"
    before = run_program((folder / f"{case}.in.py").read_text(), tmp_path, "until.py")
    after = run_program((folder / f"{case}.out.py").read_text(), tmp_path, "counted.py")
    assert "RESULT" in before and after == before


def test_the_counted_loop_is_fused_and_still_prints_the_same(tmp_path: Path) -> None:
    source = (FIXTURES / "bound_iterator_loops" / "basic.in.py").read_text()
    migrated = migrate_code(source).module.code
    assert "while True" not in migrated and "train_step_loop(0, batch_count)" in migrated
    assert run_program(migrated, tmp_path, "fused.py") == run_program(source, tmp_path, "until.py")


def test_the_epoch_bounded_example_reaches_a_fused_loop() -> None:
    result = migrate_path(str(ROOT / "legacy_examples" / "data_epochs_layers.py"))
    assert result.level == "tf2"
    assert "batch_count = len(dataset)" in result.new_source
    assert "train_step_loop(0, batch_count)" in result.new_source
    codes = {f.code for f in result.findings if f.fixed}
    assert {"TFM305", "TFM301"} <= codes


def test_a_map_moved_after_batch_yields_the_same_batches(tmp_path: Path) -> None:
    folder = FIXTURES / "vectorize_dataset_maps"
    before = run_program((folder / "basic.in.py").read_text(), tmp_path, "per_element.py")
    after = run_program((folder / "basic.out.py").read_text(), tmp_path, "per_batch.py")
    assert before.count("RESULT") == 12 and after == before


def test_the_epoch_bounded_example_maps_whole_batches() -> None:
    result = migrate_path(str(ROOT / "legacy_examples" / "data_epochs_layers.py"))
    assert ".batch(BATCH).map(normalise).repeat(EPOCHS)" in result.new_source


def test_batches_made_in_python_read_through_from_generator_are_the_same(tmp_path: Path) -> None:
    """TFM307: the generator's shuffles and the next_batch draws happen ahead, in tf.data's thread, in
    the same order: the printed losses are identical."""
    folder = FIXTURES / "feed_generators_from_datasets"
    before = run_program((folder / "generator.in.py").read_text(), tmp_path, "python_fed.py")
    after = run_program((folder / "generator.out.py").read_text(), tmp_path, "from_generator.py")
    assert before.count("RESULT") == 8 and after == before


def test_a_generator_written_out_in_its_loop_prints_the_same(tmp_path: Path) -> None:
    """TFM308: the permutation drawn at the first batch, the same rows in the same order."""
    folder = FIXTURES / "inline_batch_generators"
    before = run_program((folder / "basic.in.py").read_text(), tmp_path, "generator.py")
    after = run_program((folder / "basic.out.py").read_text(), tmp_path, "written_out.py")
    assert before.count("RESULT") == 7 and after == before


def test_the_generator_example_is_fused_and_equivalent(tmp_path: Path) -> None:
    path = ROOT / "legacy_examples" / "feed_generator_minibatches.py"
    trial, = tune(Program(path.name, str(path)), Settings(timeout_s=300.0), ("fused",), 1, str(tmp_path))
    assert trial.equivalent, trial.reason
    migrated = Path(trial.migrated).read_text()
    assert "order = rng.permutation(len(train_x))" in migrated
    assert "train_step_loop(0, len(range(0, len(train_x), BATCH)), train_x, train_y, order)" in migrated
