"""The harness and fused step loops (TFM301): a multi-step call is recorded as the step calls it
replaces, so a fused migration is still compared step by step, and still caught when wrong."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from migrate.harness import fused
from migrate.harness.pairing import fused_map, load_fused_map, write_site_map
from migrate.harness.programs import Program, prepare
from migrate.harness.recording import Recorder
from migrate.harness.verify import Settings, run_legacy, verify_migrated

ROOT = Path(__file__).resolve().parent.parent
LEGACY = ROOT / "legacy_examples" / "core_batch_norm.py"
TRAIN_LINE = 33  # core_batch_norm.py: sess.run([train_op, loss], ...) in the 6-step loop
SETTINGS = Settings(steps=50, timeout_s=300)


class FakeTF:
    @staticmethod
    def executing_eagerly():
        return True

    @staticmethod
    def concat(values, axis):
        return np.concatenate(values, axis=axis)


class FakeProbe:
    tf = FakeTF()
    warmup_fraction = 0.1

    def __init__(self):
        self.recorder = Recorder(100, np.asarray)


def test_a_fused_call_is_recorded_as_its_steps_with_the_warm_up_split_off():
    calls = []

    def multi_step(first, stop, data):
        calls.append((first, stop))
        return [None, np.arange(first, stop, dtype=np.float32) * data, {"step": np.arange(first, stop)}]

    probe = FakeProbe()
    function = fused.FusedFunction(multi_step, "fn:train_step", probe)
    outputs = function(0, 30, 2.0)
    assert calls == [(0, 3), (3, 30)]  # first call: 10% warm-up steps, then the rest
    assert list(outputs[1]) == [2.0 * k for k in range(30)] and outputs[0] is None
    site = probe.recorder.sites["fn:train_step"]
    assert site.calls == 30
    assert [float(site.values[k][1]) for k in (0, 7, 29)] == [0.0, 14.0, 58.0]
    assert site.values[5][0] is None and site.values[5][2] == 5 and site.paths == ["0", "1", "2.step"]
    assert all(b >= a for a, b in zip(site.starts, site.starts[1:]))
    assert site.post[:-1] == [0.0] * 29 and site.post[-1] > 0  # recording time: after the last step
    assert site.pre[3] >= 0 and sum(site.pre[:3]) == 0 and sum(site.pre[4:]) == 0
    function(30, 40, 1.0)  # warm now: one call
    assert calls[-1] == (30, 40) and site.calls == 40


def test_fused_steps_travel_through_the_sites_file(tmp_path):
    source = "def train_step(x):\n    pass\n\n\ndef train_step_loop(first, stop, x):\n    pass\n"
    found = fused_map(source, ["train_step", "compute_loss"])
    assert found == {"train_step_loop": "train_step"}
    path = tmp_path / "prog.sites.json"
    write_site_map(str(path), [(31, "train_step")], found)
    assert load_fused_map(str(path)) == found
    assert json.loads(path.read_text())["run_sites"] == [{"line": 31, "function": "train_step"}]


def test_a_fused_call_of_several_step_functions_is_recorded_as_each_ones_steps(tmp_path):
    def multi_step(first, stop):
        return ([None, np.arange(first, stop, dtype=np.float32)], 10.0 * np.arange(first, stop))

    probe = FakeProbe()
    fused.FusedFunction(multi_step, ["fn:d_step", "fn:g_step"], probe)(0, 20)
    d, g = probe.recorder.sites["fn:d_step"], probe.recorder.sites["fn:g_step"]
    assert d.calls == g.calls == 20 and float(d.values[7][1]) == 7.0 and float(g.values[7][0]) == 70.0
    assert all(d.starts[k] < g.starts[k] <= d.starts[k + 1] for k in range(19))  # d, then g, at each step
    source = ("def d_step(x):\n    pass\n\n\ndef d_step_loop(first, stop):\n"
              "    for i in range(first, stop):\n        d_step(1)\n        g_step()\n")
    found = fused_map(source, ["d_step", "g_step"])
    assert found == {"d_step_loop": ["d_step", "g_step"]}
    path = tmp_path / "prog.sites.json"
    write_site_map(str(path), [(31, "d_step"), (32, "g_step")], found)
    assert load_fused_map(str(path)) == found


def test_a_fused_call_fed_batches_drawn_ahead_splits_their_rows_with_the_warm_up(tmp_path):
    """TFM301 feeds a loop drawing its batches with `next_batch` their stack, one row per step of the
    call: the warm-up split must hand each part its own rows, not the whole stack again."""
    def multi_step(first, stop, rows, scale):
        assert len(rows) == stop - first
        return np.asarray(rows, dtype=np.float32) * scale

    probe = FakeProbe()
    function = fused.FusedFunction(multi_step, "fn:train_step", probe, rows=[0])
    outputs = function(100, 130, np.arange(100, 130), 2.0)
    assert list(outputs) == [2.0 * k for k in range(100, 130)]
    site = probe.recorder.sites["fn:train_step"]
    assert site.calls == 30 and [float(site.values[k][0]) for k in (0, 3, 29)] == [200.0, 206.0, 258.0]
    source = ("def train_step(x, scale):\n    pass\n\n\ndef train_step_loop(first, stop, x_values, scale):\n"
              "    for index in range(first, stop):\n        x = x_values[index - first]\n"
              "        train_step(x, scale)\n")
    found = fused_map(source, ["train_step"])
    assert found == {"train_step_loop": {"step_function": "train_step", "rows": [0]}}
    path = tmp_path / "prog.sites.json"
    write_site_map(str(path), [(31, "train_step")], found)
    assert load_fused_map(str(path)) == found


def test_an_evaluation_run_in_the_fused_loop_is_recorded_as_its_calls_at_the_evaluated_steps(tmp_path):
    flags = [step % 5 == 0 for step in range(20)]

    def multi_step(first, stop, data, evaluates):
        evaluated = [step for step in range(first, stop) if evaluates[step]]
        return ([np.arange(first, stop, dtype=np.float32) * data, None], {"loss": 100.0 + np.asarray(evaluated)})

    probe = FakeProbe()
    function = fused.FusedFunction(multi_step, ["fn:compute_values", "fn:train_step"], probe,
                                   evaluation="fn:compute_values")
    outputs = function(0, 20, 2.0, flags)  # split 0..1, 2..19: the evaluation's rows joined too
    train, evaluation = probe.recorder.sites["fn:train_step"], probe.recorder.sites["fn:compute_values"]
    assert train.calls == 20 and evaluation.calls == 4 and list(outputs[1]["loss"]) == [100.0, 105.0, 110.0, 115.0]
    assert [float(evaluation.values[k][0]) for k in range(4)] == [100.0, 105.0, 110.0, 115.0]
    assert evaluation.paths == ["loss"]
    assert float(train.values[7][0]) == 14.0
    # evaluated before the step at 0, 5, 10, 15, as the loop ran them
    assert all(evaluation.starts[k] < train.starts[5 * k] for k in range(4))
    assert all(evaluation.starts[k] > train.starts[5 * k - 1] for k in range(1, 4))
    source = ("def train_step_loop(first, stop, x, evaluates):\n    for i in range(first, stop):\n"
              "        if evaluates[i]:\n            compute_values(x)\n        train_step(x)\n")
    found = fused_map(source, ["train_step", "compute_values"])
    assert found == {"train_step_loop": {"step_function": ["compute_values", "train_step"],
                                         "evaluation": "compute_values"}}
    path = tmp_path / "prog.sites.json"
    write_site_map(str(path), [(31, "train_step"), (30, "compute_values")], found)
    assert load_fused_map(str(path)) == found


@pytest.fixture(scope="module")
def batch_norm(tmp_path_factory):
    """One legacy run of core_batch_norm.py and its (fused) migration, shared below."""
    work = tmp_path_factory.mktemp("batch_norm")
    program = Program(LEGACY.name, str(LEGACY))
    prepared = prepare(program, str(work))
    assert prepared.fused == {"train_step_loop": "train_step"}, "the default migration fuses this loop"
    legacy = run_legacy(program, SETTINGS, str(work))
    assert legacy.status == "ok", legacy.error
    return program, prepared, legacy, work


def train_site(report):
    return next(site for site in report["sites"] if site["legacy_line"] == TRAIN_LINE)


def test_fused_migration_of_a_legacy_example_is_equivalent_step_by_step(batch_norm):
    program, prepared, legacy, work = batch_norm
    report = verify_migrated(program, prepared, legacy, SETTINGS, str(work))
    assert report["verdict"] == "equivalent", report["reason"]
    site = train_site(report)
    assert site["migrated"] == "fn:train_step" and site["status"] == "match"
    assert all(fetch["compared"] == 6 for fetch in site["fetches"])
    assert report["timing"]["migrated"]["steps"] == 6


def test_fused_migration_with_a_wrong_learning_rate_is_caught(batch_norm, tmp_path):
    _, prepared, legacy, _ = batch_norm
    source = Path(prepared.migrated).read_text()
    assert source.count("SGD(learning_rate=0.2)") == 1 and "def train_step_loop(" in source
    wrong = tmp_path / "core_batch_norm.py"
    wrong.write_text(source.replace("SGD(learning_rate=0.2)", "SGD(learning_rate=0.5)"))
    sites = tmp_path / "core_batch_norm.sites.json"
    sites.write_text(Path(prepared.migrated).with_suffix(".sites.json").read_text())
    candidate = Program(LEGACY.name, str(LEGACY), str(wrong), str(sites))
    report = verify_migrated(candidate, prepare(candidate, str(tmp_path)), legacy, SETTINGS, str(tmp_path))
    assert report["verdict"] == "mismatch"
    site = train_site(report)
    assert site["status"] == "mismatch" and site["first_divergence"]["step"] == 1
