"""Consecutive step calls run by one function (TFM311): the rewritten programs compute what the
originals did, and the harness still compares each step function call by call (and catches a merged
function running its steps in the wrong order)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from migrate.harness import fused
from migrate.harness.pairing import fused_map, load_fused_map, write_site_map
from migrate.harness.programs import Program, prepare
from migrate.harness.verify import Settings, run_legacy, verify_migrated
from tests.test_speed_fusion import run_program
from tests.test_speed_harness import FakeProbe

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "merge_step_calls"
LEGACY = ROOT / "legacy_examples" / "gan_python_batches.py"
D_LINE, G_LINE = 79, 80  # gan_python_batches.py: the discriminator's and the generator's sess.run
SETTINGS = Settings(steps=40, timeout_s=300)


@pytest.mark.parametrize("case", ["gan", "three_steps_one_unused", "underscore_read"])
def test_merged_calls_print_what_the_separate_calls_printed(case, tmp_path):
    before = run_program((FIXTURES / f"{case}.in.py").read_text(), tmp_path, "separate.py")
    after = run_program((FIXTURES / f"{case}.out.py").read_text(), tmp_path, "merged.py")
    assert after == before and before


def test_a_merged_call_is_recorded_as_one_call_of_each_step_in_order():
    probe = FakeProbe()
    merged = fused.MergedSteps(lambda x, z: (x * 2.0, [None, z + 1.0]), ["fn:d_step", "fn:g_step"], probe)
    for value in range(3):
        merged(np.float32(value), np.float32(10 * value))
    d, g = probe.recorder.sites["fn:d_step"], probe.recorder.sites["fn:g_step"]
    assert d.calls == g.calls == 3
    assert [float(d.values[k][0]) for k in range(3)] == [0.0, 2.0, 4.0]
    assert g.values[2][0] is None and float(g.values[2][1]) == 21.0
    assert all(d.starts[k] <= d.ends[k] <= g.starts[k] <= g.ends[k] <= d.starts[k + 1] for k in range(2))


def test_merged_functions_travel_through_the_sites_file(tmp_path):
    source = ("def d_step(x):\n    pass\n\n\ndef d_and_g_step(x, z):\n"
              "    return d_step.python_function(x), g_step.python_function(z)\n")
    found = fused_map(source, ["d_step", "g_step"])
    assert found == {"d_and_g_step": {"merges": ["d_step", "g_step"]}}
    path = tmp_path / "prog.sites.json"
    write_site_map(str(path), [(31, "d_step"), (32, "g_step")], found)
    assert load_fused_map(str(path)) == found


@pytest.fixture(scope="module")
def gan(tmp_path_factory):
    """One legacy run of gan_python_batches.py and its migration, shared below."""
    work = tmp_path_factory.mktemp("gan")
    program = Program(LEGACY.name, str(LEGACY))
    prepared = prepare(program, str(work))
    merged = {"D_solver_and_G_solver_step": {"merges": ["D_solver_step", "G_solver_step"]}}
    assert prepared.fused == merged, "the default migration runs both steps in one call"
    legacy = run_legacy(program, SETTINGS, str(work))
    assert legacy.status == "ok", legacy.error
    return program, prepared, legacy, work


def site_at(report, line):
    return next(site for site in report["sites"] if site["legacy_line"] == line)


def test_merged_migration_is_equivalent_call_by_call(gan):
    program, prepared, legacy, work = gan
    report = verify_migrated(program, prepared, legacy, SETTINGS, str(work))
    assert report["verdict"] == "equivalent", report["reason"]
    for line, function in ((D_LINE, "fn:D_solver_step"), (G_LINE, "fn:G_solver_step")):
        site = site_at(report, line)
        assert site["migrated"] == function and site["status"] == "match"
        assert all(fetch["compared"] == 40 for fetch in site["fetches"])


def test_a_merged_function_running_its_steps_in_the_wrong_order_is_caught(gan, tmp_path):
    _, prepared, legacy, _ = gan
    source = Path(prepared.migrated).read_text()
    merged_return = "    return D_solver_step.python_function(X, Z), G_solver_step.python_function(Z_1)\n"
    assert source.count(merged_return) == 1
    wrong = tmp_path / LEGACY.name
    wrong.write_text(source.replace(merged_return, "    generated = G_solver_step.python_function(Z_1)\n"
                                                   "    return D_solver_step.python_function(X, Z), generated\n"))
    sites = tmp_path / "gan_python_batches.sites.json"
    sites.write_text(Path(prepared.migrated).with_suffix(".sites.json").read_text())
    candidate = Program(LEGACY.name, str(LEGACY), str(wrong), str(sites))
    report = verify_migrated(candidate, prepare(candidate, str(tmp_path)), legacy, SETTINGS, str(tmp_path))
    assert report["verdict"] == "mismatch"
    site = site_at(report, D_LINE)  # the discriminator's first loss is computed with the generator already trained
    assert site["status"] == "mismatch" and site["first_divergence"]["step"] == 0
