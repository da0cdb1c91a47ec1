"""Epoch loops in one graph: TFM309 writes a per-epoch helper out in its loop, TFM310 runs the
epochs of a fused step loop in one call, and the harness still compares them step by step."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from migrate.harness import fused
from migrate.harness.programs import Program, prepare
from migrate.harness.recording import Recorder
from migrate.harness.verify import Settings, run_legacy, verify_migrated
from migrate.runner import migrate_code, migrate_path
from tests.test_speed_fusion import run_program

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SETTINGS = Settings(steps=100, timeout_s=300)


class NumpyTF:
    concat = staticmethod(lambda values, axis: np.concatenate(values, axis=axis))
    reshape = staticmethod(np.reshape)
    shape = staticmethod(lambda array: np.asarray(np.shape(array)))

    @staticmethod
    def executing_eagerly():
        return True


class Probe:
    tf = NumpyTF()
    warmup_fraction = 0.1

    def __init__(self):
        self.recorder = Recorder(1000, np.asarray)


def test_an_epochs_call_is_recorded_as_every_epochs_steps_with_warm_up_epochs_split_off():
    calls = []

    def epochs_function(epochs, first, stop, data):
        calls.append(epochs)
        steps = np.arange(first, stop, dtype=np.float32) * data
        return [None, np.stack([steps + 100 * (len(calls) - 1) for _ in range(epochs)])]

    probe = Probe()
    outputs = fused.FusedEpochs(epochs_function, "fn:train_step", probe)(20, 0, 5, 2.0)
    assert calls == [2, 18]  # 10% of the epochs first: their steps take the one-time costs
    assert outputs[1].shape == (20, 5) and outputs[0] is None
    site = probe.recorder.sites["fn:train_step"]
    assert site.calls == 100
    assert [float(site.values[k][1]) for k in (0, 4, 5, 10, 99)] == [0.0, 8.0, 0.0, 100.0, 108.0]
    assert all(b >= a for a, b in zip(site.starts, site.starts[1:]))


def test_evaluations_in_the_epochs_call_are_recorded_after_each_epochs_steps():
    done = []

    def epochs_function(epochs, first, stop, data):
        steps = np.tile(np.arange(first, stop, dtype=np.float32), (epochs, 1))
        losses = (len(done) + np.arange(epochs, dtype=np.float32)) * data
        done.extend(range(epochs))
        return [None, steps], losses

    probe = Probe()
    epochs = fused.FusedEpochs(epochs_function, "fn:train_step", probe, [None, "fn:compute_loss"])
    outputs = epochs(10, 0, 3, 0.5)
    assert outputs[0][1].shape == (10, 3) and outputs[1].shape == (10,)
    steps, losses = probe.recorder.sites["fn:train_step"], probe.recorder.sites["fn:compute_loss"]
    assert steps.calls == 30 and losses.calls == 10
    assert [float(losses.values[k][0]) for k in range(10)] == [0.5 * k for k in range(10)]
    assert [float(steps.values[k][1]) for k in (0, 1, 2, 3)] == [0.0, 1.0, 2.0, 0.0]
    # one epoch's three steps, then its evaluation, epoch after epoch
    assert steps.sequence[2] < losses.sequence[0] < steps.sequence[3] < steps.sequence[5] < losses.sequence[1] \
        < steps.sequence[6]


@pytest.mark.parametrize("module, case", [("inline_epoch_helpers", "basic"), ("inline_epoch_helpers", "in_expression"),
                                          ("fuse_epoch_loops", "basic"), ("fuse_epoch_loops", "evaluation"),
                                          ("fuse_epoch_loops", "no_outputs"), ("fuse_epoch_loops", "only_call")])
def test_rewritten_fixture_prints_what_the_original_printed(module, case, tmp_path):
    before = run_program((FIXTURES / module / f"{case}.in.py").read_text(), tmp_path, "before.py")
    after = run_program((FIXTURES / module / f"{case}.out.py").read_text(), tmp_path, "after.py")
    assert before.strip() and after == before


@pytest.mark.parametrize("example", ["batch_loop.py", "core_interactive_momentum.py"])
def test_examples_evaluating_every_epoch_run_all_epochs_in_one_call(example):
    result = migrate_path(str(ROOT / "legacy_examples" / example))
    fused = [f for f in result.findings if f.code == "TFM310" and f.fixed]
    assert len(fused) == 1 and "compute_" in fused[0].message
    assert "= train_step_loop_epochs(EPOCHS, 0," in result.new_source


@pytest.mark.parametrize("example", ["core_builder_dict.py", "core_class_model.py"])
def test_per_epoch_helper_examples_run_all_epochs_in_one_call(example):
    result = migrate_path(str(ROOT / "legacy_examples" / example))
    fixed = {f.code for f in result.findings if f.fixed}
    assert {"TFM309", "TFM301", "TFM310"} <= fixed
    assert "def train_epoch(" not in result.new_source and "= train_step_loop_epochs(EPOCHS, 0," in result.new_source


@pytest.fixture(scope="module")
def builder_dict(tmp_path_factory):
    work = tmp_path_factory.mktemp("epochs")
    legacy_path = ROOT / "legacy_examples" / "core_builder_dict.py"
    program = Program(legacy_path.name, str(legacy_path))
    prepared = prepare(program, str(work))
    legacy = run_legacy(program, SETTINGS, str(work))
    assert legacy.status == "ok", legacy.error
    return program, prepared, legacy, work


def test_epoch_fused_example_is_equivalent_step_by_step(builder_dict):
    program, prepared, legacy, work = builder_dict
    assert "train_step_loop_epochs(" in Path(prepared.migrated).read_text()
    report = verify_migrated(program, prepared, legacy, SETTINGS, str(work))
    assert report["verdict"] == "equivalent", report["reason"]
    site = next(s for s in report["sites"] if s["migrated"] == "fn:train_step")
    assert site["status"] == "match" and report["timing"]["migrated"]["steps"] == 30  # 6 epochs of 5 steps


def test_epoch_fused_example_with_a_wrong_momentum_is_caught(builder_dict, tmp_path):
    _, prepared, legacy, _ = builder_dict
    source = Path(prepared.migrated).read_text()
    assert source.count('momentum=config["momentum"]') == 1
    wrong = tmp_path / "core_builder_dict.py"
    wrong.write_text(source.replace('momentum=config["momentum"]', "momentum=0.5"))
    sites = tmp_path / "core_builder_dict.sites.json"
    sites.write_text(Path(prepared.migrated).with_suffix(".sites.json").read_text())
    legacy_path = ROOT / "legacy_examples" / "core_builder_dict.py"
    candidate = Program(legacy_path.name, str(legacy_path), str(wrong), str(sites))
    report = verify_migrated(candidate, prepare(candidate, str(tmp_path)), legacy, SETTINGS, str(tmp_path))
    assert report["verdict"] == "mismatch"
    site = next(s for s in report["sites"] if s["migrated"] == "fn:train_step")
    # the first update has no velocity yet, so the loss of step 2 (0-based) is the first to differ
    assert site["status"] == "mismatch" and site["first_divergence"]["step"] == 2


def test_epoch_evaluations_run_in_the_epochs_call_are_compared_call_by_call(tmp_path):
    legacy_path = ROOT / "legacy_examples" / "core_interactive_momentum.py"
    program = Program(legacy_path.name, str(legacy_path))
    prepared = prepare(program, str(tmp_path))
    assert prepared.fused["train_step_loop_epochs"] == {"epochs_of": "train_step_loop",
                                                        "calls": ["train_step_loop", "compute_mse"]}
    legacy = run_legacy(program, SETTINGS, str(tmp_path))
    report = verify_migrated(program, prepared, legacy, SETTINGS, str(tmp_path))
    assert report["verdict"] == "equivalent", report["reason"]
    evaluation = next(s for s in report["sites"] if s["migrated"] == "fn:compute_mse")
    # once before training (a plain call), then once per epoch (3, rows of the epochs call)
    assert evaluation["status"] == "match" and all(f["compared"] == 4 for f in evaluation["fetches"])


def test_an_epoch_loop_left_in_python_is_reported_once_with_the_reason():
    source = (FIXTURES / "fuse_step_loops" / "batches.in.py").read_text()  # prints compute_w() every epoch
    findings = migrate_code(source).findings
    outer = [(f.code, f.fixed) for f in findings if f.line == 23]
    assert outer == [("TFM310", False)]
    assert "compute_w" in next(f.message for f in findings if f.line == 23)
    assert any(f.code == "TFM301" and f.fixed and f.line == 25 for f in findings)


@pytest.mark.parametrize("case", sorted(p.name[:-7] for p in (FIXTURES / "fuse_epoch_loops").glob("*.out.py")))
def test_a_second_run_over_epoch_fused_code_reports_nothing(case):
    """The epochs function's own `tf.range` loop calls the multi-step function: not an epoch loop to judge."""
    from tests.test_fixtures import run_transform
    _, findings = run_transform("fuse_epoch_loops", (FIXTURES / "fuse_epoch_loops" / f"{case}.out.py").read_text())
    assert findings == []
