"""Unit tests of the equivalence harness's parts that need no TensorFlow: tolerance, comparison,
weight alignment, site pairing, randomness, timing, discovery, reports, subprocess robustness."""
from __future__ import annotations

import ast
import base64
import json
import os
import sys
import textwrap
from collections import namedtuple
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from migrate.harness import report as report_module
from migrate.harness.alignment import Matcher
from migrate.harness.compare import compare_site
from migrate.harness.html_report import render_html
from migrate.harness.judge import compare_runs
from migrate.harness.launcher import run_side
from migrate.harness.pairing import SiteMapError, line_map, load_site_map, pair_sites
from migrate.harness.programs import UsageError, discover
from migrate.harness.randomness import advisory_from, find_taint
from migrate.harness.records import OPAQUE, SiteData, merge_sites
from migrate.harness.result_lines import compare_results, parse_results
from migrate.harness.recording import Recorder, copy_of_array, flatten
from migrate.harness.timing import side_timing, speedup
from migrate.harness.tolerance import Tolerance, compare_leaf

HARNESS = Path(__file__).resolve().parent.parent / "migrate" / "harness"


def site(key, values, calls=None, sequence=None, facts=None, paths=None, inputs=None, last=None):
    """A SiteData whose call k recorded `values[k]` (a list of leaves)."""
    calls = len(values) if calls is None else calls
    sequence = np.arange(calls) if sequence is None else np.asarray(sequence)
    recorded = dict(enumerate(values))
    return SiteData(key, calls, paths or [str(i) for i in range(len(values[0]))], None, recorded,
                    last if last is not None else values[-1], inputs or {}, np.arange(calls, dtype=float),
                    np.arange(calls, dtype=float) + 0.5, sequence, facts or {})


def losses(*numbers):
    return [[None, np.float32(number)] for number in numbers]


# -- tolerance ------------------------------------------------------------------------------------------

def test_early_steps_use_atol_and_later_steps_rtol():
    tolerance = Tolerance(atol=1e-5, rtol=0.05)
    assert tolerance.at_step(9)[1] <= 1e-5 and tolerance.at_step(10)[1] == 0.05
    assert compare_leaf(np.float32(1.0), np.float32(1.00003), *tolerance.at_step(0)).close is False
    # Large magnitudes get relative slack: a loss of 1e4 differing in its 6th digit is round-off...
    assert compare_leaf(np.float32(10000.0), np.float32(10000.06), *tolerance.at_step(0)).close is True
    # ...but not a wrong number.
    assert compare_leaf(np.float32(10000.0), np.float32(10001.0), *tolerance.at_step(0)).close is False
    assert compare_leaf(np.float32(1.0), np.float32(1.04), *tolerance.at_step(10)).close is True
    assert compare_leaf(np.float32(1.0), np.float32(1.06), *tolerance.at_step(10)).close is False


def test_after_the_early_steps_a_tensor_may_pass_in_norm():
    """Round-off grown through training: elements near zero move by more than 5% of themselves while
    the tensor as a whole is within 5%; early calls stay element by element."""
    tolerance = Tolerance(atol=1e-5, rtol=0.05)
    legacy = np.array([0.9, -0.5, 0.3, 1e-3], np.float32)
    grown = legacy + np.array([0.002, -0.001, 0.001, 0.001], np.float32)
    assert tolerance.normwise_at(10) and not tolerance.normwise_at(9)
    assert not compare_leaf(legacy, grown, 1e-5, 0.05).close
    assert compare_leaf(legacy, grown, 1e-5, 0.05, normwise=True).close
    assert not compare_leaf(legacy, grown, *tolerance.at_step(0), normwise=tolerance.normwise_at(0)).close
    # A real difference is still one in norm: a flipped sign, or a tensor 10% off.
    assert not compare_leaf(legacy, -legacy, 1e-5, 0.05, normwise=True).close
    assert not compare_leaf(legacy, legacy * 1.1, 1e-5, 0.05, normwise=True).close
    assert not compare_leaf(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), 1e-5, 0.05, normwise=True).close


def test_leaf_comparison_reports_errors_shapes_nans_and_exact_kinds():
    errors = compare_leaf(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-5, 0.0)
    assert not errors.close and errors.max_abs == pytest.approx(0.5) and errors.max_rel == pytest.approx(0.25)
    assert "shape" in compare_leaf(np.zeros((2, 3)), np.zeros((3, 2)), 1, 1).problem
    assert compare_leaf(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), 0, 0).close
    assert not compare_leaf(np.array([np.nan]), np.array([1.0]), 1e9, 1e9).close
    assert compare_leaf(np.array([np.inf]), np.array([np.inf]), 0, 0).close
    assert not compare_leaf(np.array([3]), np.array([4]), 1e-5, 0.0).close
    assert not compare_leaf(np.array(b"a"), np.array(b"b"), 1, 1).close


# -- comparing run sites ------------------------------------------------------------------------------

def test_recorded_arrays_keep_the_values_the_run_returned():
    """A program may write into the arrays sess.run gave it (`action[0] = explore()`): the record
    keeps what the run returned, not what the array holds later."""
    recorder = Recorder(5, np.asarray, copy_of_array)
    fetched = np.zeros(3)
    recorder.record("site", 0.0, 1.0, [fetched, 2.5])
    fetched[0] = 7.0
    assert recorder.sites["site"].values[0][0].tolist() == [0.0, 0.0, 0.0]
    assert recorder.sites["site"].last[1] == 2.5


def test_a_string_fetch_is_recorded_as_an_array_on_both_sides(tmp_path):
    """`sess.run(greeting)` gives the legacy side bytes; the migrated side reads a string tensor as
    bytes too (to look for a summary proto in it): both record an array, so the values are compared."""
    from migrate.harness import migrated_side
    no_tensors = SimpleNamespace(Tensor=type("Tensor", (), {}), Variable=type("Variable", (), {}))
    snapshot, convert = migrated_side.make_converters(no_tensors)
    sides = {"legacy": Recorder(5, np.asarray, copy_of_array), "migrated": Recorder(5, convert, snapshot)}
    for side, recorder in sides.items():
        recorder.record("site", 0.0, 1.0, [b"Hello World!"])
        folder = tmp_path / side
        folder.mkdir()
        assert recorder.write(str(folder))[0]["leaf_kinds"] == [["array"]], side


def test_identical_sites_match_and_none_leaves_are_dropped():
    legacy = site("line:7", losses(3.0, 2.0, 1.0))
    migrated = site("fn:train_step", [[np.float32(v)] for v in (3.0, 2.0, 1.0)])
    compared = compare_site(legacy, migrated, "run-site map", Tolerance(), None)
    assert compared.status == "match" and compared.fetches[0].compared == 3


def test_first_divergence_names_the_step_and_fetch():
    legacy = site("line:7", [[np.float32(1), np.float32(5)]] * 6)
    values = [[np.float32(1), np.float32(5)]] * 4 + [[np.float32(1), np.float32(6)]] * 2
    compared = compare_site(legacy, site("fn:step", values), "run-site map", Tolerance(), None)
    assert compared.status == "mismatch"
    assert compared.first_divergence["step"] == 4 and compared.first_divergence["fetch"] == 1
    assert compared.fetches[1].max_abs == pytest.approx(1.0) and compared.fetches[0].first_bad_step is None


def test_call_count_differences_are_mismatches_and_structure_differences_unpaired():
    legacy = site("line:7", losses(1.0, 1.0))
    two_values = site("fn:step", [[np.float32(1), np.float32(2)]] * 2)
    compared = compare_site(legacy, two_values, "m", Tolerance(), None)
    assert compared.status == "unpaired" and "returns 2 values where legacy fetches 1" in compared.unpaired_reason
    fewer = site("fn:step", [[np.float32(1)]])
    compared = compare_site(legacy, fewer, "m", Tolerance(), None)
    assert compared.status == "mismatch" and "number of calls" in compared.first_divergence["problem"]


def test_unpaired_site_with_values_is_reported_and_opaque_leaves_skipped():
    assert compare_site(site("line:7", losses(1.0)), None, "unpaired", Tolerance(), None).status == "unpaired"
    legacy = site("line:7", [[OPAQUE, np.float32(1)]])
    compared = compare_site(legacy, site("fn:f", [[OPAQUE, np.float32(1)]]), "m", Tolerance(), None)
    assert compared.status == "match" and compared.fetches[0].problem.startswith("not an array")


def test_an_evaluation_after_many_training_steps_gets_the_later_tolerance():
    """Its call index is 0, but its values went through 30 training steps of round-off."""
    legacy = site("line:9", [[np.float32(0.50)]], sequence=[31])
    drifted = site("fn:evaluate", [[np.float32(0.5002)]])
    assert compare_site(legacy, drifted, "m", Tolerance(), None).status == "mismatch"  # no training before
    assert compare_site(legacy, drifted, "m", Tolerance(), None, tuple(range(31))).status == "match"
    assert compare_site(legacy, drifted, "m", Tolerance(), None, tuple(range(5))).status == "mismatch"


def test_random_sites_are_advisory_except_calls_proved_deterministic():
    facts = {"random_ops": ["RandomUniform"], "deterministic_calls": [0]}
    legacy = site("line:7", [[np.float32(1)], [np.float32(2)]], facts=facts)
    migrated = site("fn:f", [[np.float32(1)], [np.float32(9)]])
    compared = compare_site(legacy, migrated, "m", Tolerance(), None)
    assert compared.status == "match"
    assert compared.fetches[0].compared == 1 and compared.fetches[0].advisory_failures == 1
    wrong_first = site("fn:f", [[np.float32(7)], [np.float32(2)]])
    assert compare_site(legacy, wrong_first, "m", Tolerance(), None).status == "mismatch"


def test_calls_after_the_taint_are_advisory():
    legacy = site("line:7", losses(1.0, 2.0, 3.0))
    migrated = site("fn:f", [[np.float32(v)] for v in (1.0, 2.5, 3.5)])
    assert compare_site(legacy, migrated, "m", Tolerance(), advisory_from=1).status == "match"
    assert compare_site(legacy, migrated, "m", Tolerance(), advisory_from=2).status == "mismatch"


def test_inputs_are_compared_as_fed_values_among_arguments():
    data = np.arange(6.0).reshape(2, 3)
    legacy = site("line:7", losses(1.0), inputs={0: [data, np.array(0.5)]})
    same = site("fn:f", [[np.float32(1)]], inputs={0: [np.array(0.5), data.astype(np.float32)]})
    assert compare_site(legacy, same, "m", Tolerance(), None).inputs.startswith("same")
    other = site("fn:f", [[np.float32(1)]], inputs={0: [data + 1, np.array(0.5)]})
    assert compare_site(legacy, other, "m", Tolerance(), None).inputs.startswith("differ from call 0")


def test_merged_sites_form_one_stream_in_execution_order():
    before = site("line:30", [[np.float32(1)]], sequence=[1])
    after = site("line:34", [[np.float32(2)]], sequence=[5])
    merged = merge_sites([after, before])
    assert merged.lines == [30, 34] and merged.calls == 2
    assert [leaves[0] for _, leaves in sorted(merged.values.items())] == [1, 2]
    assert list(merged.sequence) == [1, 5] and merged.last[0] == 2


# -- weight alignment ---------------------------------------------------------------------------------

def manifest(*entries):
    return [{"name": name, "key": f"w{i}", "shape": list(shape), "dtype": "float32", "trainable": trainable}
            for i, (name, shape, trainable) in enumerate(entries)]


def test_alignment_by_name_then_suffix_then_order():
    matcher = Matcher.from_manifest(manifest(("hidden/W", (4, 8), True), ("dense/kernel", (8, 2), True),
                                             ("unnamed", (2,), True), ("global_step", (), False)))
    assert matcher.match("hidden/W:0", (4, 8), True).how == "name"
    assert matcher.match("sequential/dense/kernel:0", (8, 2), True).how == "name suffix"
    by_order = matcher.match("Variable:0", (2,), True)
    assert by_order.how == "order+shape" and by_order.legacy.name == "unnamed"
    assert [item["legacy"] for item in matcher.unused()] == ["global_step"]


def test_transposed_weight_is_not_aligned_by_any_rule():
    matcher = Matcher.from_manifest(manifest(("out/W", (8, 1), True), ("other", (1, 8), True)))
    decision = matcher.match("out/W", (1, 8), True)
    assert decision.legacy is None and "transposed" in decision.reason
    assert matcher.summary()["unaligned_migrated"][0]["migrated"] == "out/W"


def test_repeated_eager_names_pair_with_uniquified_legacy_names_by_order():
    matcher = Matcher.from_manifest(manifest(("Variable", (3, 20), True), ("Variable_1", (20,), True)))
    assert matcher.match("Variable:0", (3, 20), True).how == "name"
    second = matcher.match("Variable:0", (20,), True)
    assert second.how == "order+shape" and second.legacy.name == "Variable_1"


def test_non_trainable_variables_are_never_paired_by_position():
    matcher = Matcher.from_manifest(manifest(("beta1_power", (), False), ("scale", (), True)))
    decision = matcher.match("adam/learning_rate", (), False)
    assert decision.legacy is None and "non-trainable" in decision.reason


def test_ambiguous_names_fall_back_to_order_and_say_so():
    matcher = Matcher.from_manifest(manifest(("a/kernel", (3, 3), True), ("b/kernel", (3, 3), True)))
    decision = matcher.match("kernel", (3, 3), True)
    assert decision.how == "order+shape" and "ambiguous" in decision.reason and decision.legacy.name == "a/kernel"
    mismatch = Matcher.from_manifest(manifest(("a", (3,), True)))
    assert mismatch.match("z", (4,), True).legacy is None


# -- pairing sites ------------------------------------------------------------------------------------

def test_line_map_follows_inserted_and_replaced_lines():
    old = "a\nb\nsess.run(x)\nc\n"
    new = "import q\na\nB\nsess.run(x)\nc\n"
    mapping = line_map(old, new)
    assert mapping[3] == 4 and mapping[1] == 2 and mapping[2] == 3


def test_pairing_prefers_the_site_map_then_the_source_diff():
    pairs = pair_sites(["line:3", "line:9", "line:12"], ["fn:step", "line:10"], {3: "step"}, {9: 10, 12: 13})
    assert [(p.migrated_key, p.how) for p in pairs] == [
        ("fn:step", "run-site map"), ("line:10", "source diff"), (None, "unpaired")]


def test_site_map_errors_are_explained(tmp_path):
    bad = tmp_path / "x.sites.json"
    bad.write_text("{}")
    with pytest.raises(SiteMapError, match="cannot read run-site map"):
        load_site_map(str(bad))
    bad.write_text(json.dumps({"run_sites": [{"line": 4, "function": "f"}]}))
    assert load_site_map(str(bad)) == {4: "f"}


# -- RESULT lines, randomness, timing -----------------------------------------------------------------

def test_result_lines_are_parsed_and_compared():
    legacy = parse_results("noise\nRESULT loss 0.5\nRESULT preds [1.0, 2.0]\nRESULT name abc\n")
    assert legacy == {"loss": 0.5, "preds": [1.0, 2.0], "name": "abc"}
    migrated = {"loss": 0.51, "preds": [1.0, 2.5]}
    compared = {c.key: c.status for c in compare_results(legacy, migrated, Tolerance(), lambda key: key == "preds")}
    assert compared == {"loss": "match", "preds": "advisory-mismatch", "name": "missing"}


def test_taint_starts_at_first_random_state_change_after_capture():
    init = site("line:5", [[None]], sequence=[0], facts={"random_ops": ["RandomUniform"], "mutates_state": True})
    train = site("line:9", [[None]] * 3, sequence=[2, 3, 4],
                 facts={"random_ops": ["RandomUniform"], "mutates_state": True})
    evaluate = site("line:7", [[np.float32(1)]] * 2, sequence=[1, 5])
    finding = find_taint({"a": init, "b": train, "c": evaluate}, capture_sequence=1)
    assert finding.taint_sequence == 2 and finding.site_line == 9
    assert advisory_from(evaluate, finding) == 1
    assert find_taint({"a": init}, capture_sequence=1).taint_sequence is None
    train.facts["deterministic_calls"] = [0, 1]  # probed: dropout with keep_prob=1.0, say
    assert find_taint({"a": init, "b": train}, capture_sequence=1).taint_sequence == 4


def test_steady_state_timing_excludes_warmup_and_harness_time():
    starts = np.array([0.0, 5.0, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9])
    timed = SiteData("line:1", 11, [], None, {}, [], {}, starts, starts + 0.05, np.arange(11))
    timing = side_timing(timed, 6.0, 0.001)
    assert timing.warmup_steps == 1 and timing.steps_per_s == pytest.approx(10.0)
    # Probes took 0.05 s after each call: the program itself ran twice as fast as the raw rate.
    probed = SiteData("line:1", 11, [], None, {}, [], {}, starts, starts + 0.05, np.arange(11),
                      pre=np.zeros(11), post=np.full(11, 0.05))
    assert side_timing(probed, 6.0, 0.55).steps_per_s == pytest.approx(20.0)
    faster = side_timing(SiteData("fn:f", 11, [], None, {}, [], {}, starts / 2, starts, np.arange(11)), 3.0, 0.0)
    ratio, basis = speedup(timing, faster)
    assert ratio == pytest.approx(2.0) and basis.startswith("steady-state step time (indicative only")
    long_starts = np.arange(0.0, 3.0, 0.1)
    long_run = SiteData("line:1", 30, [], None, {}, [], {}, long_starts, long_starts, np.arange(30))
    assert side_timing(long_run, 3.0, 0.0).reliable and not timing.reliable
    assert speedup(side_timing(long_run, 3.0, 0.0), side_timing(long_run, 3.0, 0.0)) == (
        pytest.approx(1.0), "steady-state step time")
    assert speedup(side_timing(None, 4.0, 0), side_timing(None, 2.0, 0)) == (2.0, "script wall time")
    assert speedup(side_timing(None, 5.0, 1.0), side_timing(None, 2.0, 0))[0] == pytest.approx(2.0)


def timed_site(key, starts, sequence=None):
    starts = np.asarray(starts, dtype=float)
    calls = len(starts)
    return SiteData(key, calls, ["0"], None, {k: [np.float32(k)] for k in range(calls)}, [np.float32(0)], {},
                    starts, starts + 0.001, np.arange(calls) if sequence is None else np.asarray(sequence))


def test_one_off_work_between_steps_is_not_charged_to_the_steps():
    # 20 steps 10 ms apart, but an evaluation traced or a checkpoint written after step 9 took 2 s.
    starts = np.concatenate([np.arange(10) * 0.01, 2.0 + np.arange(10) * 0.01])
    timing = side_timing(timed_site("line:1", starts), 3.0, 0.0)
    assert timing.steps_per_s == pytest.approx(100.0)
    assert timing.steady_s == pytest.approx(starts[-1] - starts[timing.warmup_steps])  # the window it measured


def test_step_site_is_the_legacy_stream_its_migrated_function_answers(tmp_path):
    # The training loop split around a checkpoint: legacy lines 10 (8 steps) and 20 (4 steps) are
    # both train_step, whose 12 calls (the first 8 fused) are compared, and timed, as one stream.
    legacy_starts = np.concatenate([np.arange(8) * 0.01, 1.0 + np.arange(4) * 0.01])
    legacy_sites = {"line:10": timed_site("line:10", legacy_starts[:8], range(8)),
                    "line:20": timed_site("line:20", legacy_starts[8:], range(8, 12)),
                    "line:30": timed_site("line:30", [1.5, 1.6], [12, 13])}
    migrated_sites = {"fn:train_step": timed_site("fn:train_step", legacy_starts / 2),
                      "fn:compute_loss": timed_site("fn:compute_loss", [1.5, 1.6])}

    def side(sites):
        return SimpleNamespace(data=SimpleNamespace(sites=sites, result={"wall_s": 3.0}), stdout="", out_dir=str(tmp_path))

    prepared = SimpleNamespace(site_map={10: "train_step", 20: "train_step", 30: "compute_loss"}, lines={},
                               rewritten=frozenset())
    report = {"sites": [], "notes": []}
    compare_runs(report, prepared, side(legacy_sites), side(migrated_sites), Tolerance())
    timing = report["timing"]
    assert timing["legacy"]["step_site"] == "line:10,20" and timing["legacy"]["steps"] == 12
    assert timing["migrated"]["step_site"] == "fn:train_step" and timing["migrated"]["steps"] == 12
    assert timing["speedup"] == pytest.approx(2.0)


def test_flatten_orders_dicts_and_walks_sequences():
    Pair = namedtuple("Pair", "a b")
    assert flatten({"b": 1, "a": [2, None]}) == [("a.0", 2), ("a.1", None), ("b", 1)]
    assert flatten(Pair(1, 2)) == [("0", 1), ("1", 2)] and flatten(5) == [("", 5)]


def test_scripts_run_as_main_with_results_tapped(tmp_path, capsys):
    from migrate.harness.recording import Recorder
    from migrate.harness.side_common import run_script

    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import harness_test_channel
        def main():
            print("RESULT early 1")
            harness_test_channel.recorder.counter += 3  # as if three run-site calls happened
            print("RESULT late", [1, 2])
            print("RESULT where", repr(__file__))
            sys.exit(0)
        if __name__ == "__main__":
            sys.modules["__main__"].main()  # what tf.app.run() does
    """))
    recorder = Recorder(5, np.asarray)
    saved_main = sys.modules["__main__"]
    sys.modules["harness_test_channel"] = SimpleNamespace(recorder=recorder)
    try:
        status, error, _, printed_at = run_script(str(script), "/elsewhere/prog.py", recorder)
    finally:
        del sys.modules["harness_test_channel"]
    assert sys.modules["__main__"] is saved_main
    assert (status, error) == ("ok", None)
    assert printed_at == {"early": 0, "late": 3, "where": 3}
    assert "RESULT where '/elsewhere/prog.py'" in capsys.readouterr().out
    script.write_text("raise ValueError('bad')\n")
    status, error, _, _ = run_script(str(script))
    assert status == "crashed" and "ValueError: bad" in error


# -- discovery ------------------------------------------------------------------------------------------

def test_discovery_pairs_legacy_and_tf2_files(tmp_path):
    for name in ("a_legacy.py", "a_tf2.py", "b.py", "_helper.py", "notes.txt"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "a_tf2.sites.json").write_text('{"run_sites": []}')
    programs = discover(str(tmp_path), None, None)
    assert [(p.name, p.migrated and os.path.basename(p.migrated)) for p in programs] == [
        ("a_legacy.py", "a_tf2.py"), ("b.py", None)]
    assert programs[0].sites.endswith("a_tf2.sites.json")


def test_discovery_with_a_migrated_folder_and_usage_errors(tmp_path):
    legacy, migrated = tmp_path / "old", tmp_path / "new"
    legacy.mkdir(), migrated.mkdir()
    (legacy / "p.py").write_text("x = 1\n")
    (legacy / "q.py").write_text("x = 1\n")
    (migrated / "p.py").write_text("x = 2\n")
    programs = discover(str(legacy), str(migrated), None)
    assert programs[0].migrated == str(migrated / "p.py") and programs[1].problem
    with pytest.raises(UsageError):
        discover(str(legacy / "p.py"), str(migrated), None)
    with pytest.raises(UsageError):
        discover(str(legacy), str(migrated / "p.py"), None)


# -- the side scripts stay runnable on a TF 1.15 / Python 3.7 interpreter -----------------------------

LEGACY_SIDE_IMPORTS = {"__future__", "builtins", "importlib", "json", "os", "random", "resource", "sys", "time",
                       "traceback", "types", "unittest", "numpy", "tensorflow", "migrate"}


@pytest.mark.parametrize("name", ["legacy_side.py", "side_common.py", "recording.py", "graph_facts.py"])
def test_legacy_side_scripts_parse_as_python_37_and_import_little(name):
    tree = ast.parse((HARNESS / name).read_text(), feature_version=(3, 7))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= LEGACY_SIDE_IMPORTS, imported - LEGACY_SIDE_IMPORTS
    source = (HARNESS / name).read_text()
    assert "removeprefix" not in source and "removesuffix" not in source and ":=" not in source


# -- subprocess robustness (plain Python stand-ins for the side entry scripts) ------------------------

def fake_entry(tmp_path, body: str) -> str:
    path = tmp_path / "entry.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_a_hanging_side_is_stopped_at_the_timeout(tmp_path):
    entry = fake_entry(tmp_path, "import time\ntime.sleep(60)\n")
    run = run_side(entry, sys.executable, {}, str(tmp_path / "w"), timeout_s=1.0, memory_mb=4096, env=dict(os.environ))
    assert run.status == "timeout" and run.seconds < 10


def test_a_side_over_its_memory_limit_is_stopped(tmp_path):
    entry = fake_entry(tmp_path, "import time\nblock = bytearray(400 * 2**20)\ntime.sleep(60)\n")
    run = run_side(entry, sys.executable, {}, str(tmp_path / "w"), timeout_s=30, memory_mb=150, env=dict(os.environ))
    assert run.status == "memory" and run.observed_peak_mb > 150


def test_a_side_that_dies_without_results_is_reported(tmp_path):
    entry = fake_entry(tmp_path, "import os, sys\nprint('partial')\nsys.stdout.flush()\nos._exit(3)\n")
    run = run_side(entry, sys.executable, {}, str(tmp_path / "w"), timeout_s=30, memory_mb=4096, env=dict(os.environ))
    assert run.status == "died" and run.exit_code == 3 and "partial" in run.stdout


def test_a_side_result_is_read_back(tmp_path):
    entry = fake_entry(tmp_path, """
        import json, os, sys
        config = json.load(open(sys.argv[1]))
        result = {"status": "ok", "wall_s": 1.5, "seen": config["x"]}
        json.dump(result, open(os.path.join(config["out_dir"], "result.json"), "w"))
    """)
    run = run_side(entry, sys.executable, {"x": 7}, str(tmp_path / "w"), timeout_s=30, memory_mb=4096,
                   env=dict(os.environ))
    assert run.status == "ok" and run.data.result["seen"] == 7 and run.data.sites == {}


# -- the command and the verdict ---------------------------------------------------------------------

def test_command_usage_errors_exit_2(tmp_path):
    from click.testing import CliRunner
    from migrate.harness.command import verify

    program = tmp_path / "p.py"
    program.write_text("x = 1\n")
    runner = CliRunner()
    hidden = runner.invoke(verify, [str(program), "--device", "gpu"], env={"CUDA_VISIBLE_DEVICES": "-1"})
    assert hidden.exit_code == 2 and "hides every GPU" in hidden.output
    assert runner.invoke(verify, [str(program), "--report", "r.pdf"]).exit_code == 2
    assert runner.invoke(verify, [str(tmp_path), str(program)]).exit_code == 2
    (tmp_path / "p.py").unlink()
    assert "no Python programs" in runner.invoke(verify, [str(tmp_path)]).output


def test_mismatch_reason_names_the_first_divergence_in_execution_order():
    from migrate.harness.judge import _verdict

    def diverging(line, step, sequence):
        return {"legacy_line": line, "migrated": f"fn:f{line}", "status": "mismatch",
                "first_divergence": {"step": step, "fetch": 0, "name": "loss:0", "problem": None,
                                     "sequence": sequence}}

    report = {"sites": [diverging(34, 0, 41), diverging(33, 1, 2)], "results": [], "notes": [],
              "alignment": {"captured": True}}
    judged = _verdict(report)
    assert judged["verdict"] == "mismatch" and judged["reason"].startswith("line 33 -> fn:f33")


# -- reports ------------------------------------------------------------------------------------------

def program_report(name, verdict, speed):
    fetch = {"index": 0, "name": "loss:0", "compared": 3, "max_abs": 1e-7, "max_rel": 1e-6, "first_bad_step": None,
             "problem": None, "advisory": 0, "advisory_failures": 0, "advisory_max_abs": 0.0}
    timing = {"legacy": {"wall_s": 2.0, "step_site": "line:3", "steps": 30, "warmup_steps": 3, "steps_per_s": 10.0,
                         "instrumentation_s": 0.01},
              "migrated": {"wall_s": 1.0, "step_site": "fn:f", "steps": 30, "warmup_steps": 3,
                           "steps_per_s": 10.0 * speed, "instrumentation_s": 0.01},
              "speedup": speed, "speedup_basis": "steady-state step time"}
    return {"name": name, "legacy_path": name, "migrated_path": None, "migrated_by": "user", "migration": None,
            "verdict": verdict, "reason": "because <tags> & co", "sides": {}, "unpaired_migrated": [],
            "sites": [{"legacy_line": 3, "legacy_lines": [3], "migrated": "fn:f", "paired_by": "run-site map",
                       "legacy_calls": 30, "migrated_calls": 30, "status": "match", "fetches": [fetch],
                       "first_divergence": None, "random_ops": [], "advisory_from_step": None,
                       "inputs": "same in 30 recorded calls", "notes": []}],
            "results": [{"key": "loss", "legacy": 0.5, "migrated": 0.5, "status": "match", "max_abs": float("inf"),
                         "max_rel": 0.0, "problem": None}],
            "alignment": {"pairs": [], "unaligned_migrated": [], "unused_legacy": []}, "randomness": None,
            "timing": timing, "notes": []}


def sample_report():
    settings = {"steps": 100, "tolerance": Tolerance().to_dict(), "device": "cpu"}
    return report_module.build_report([program_report("fast.py", "equivalent", 2.0),
                                       program_report("wrong.py", "mismatch", 0.5)], settings)


def test_exit_codes_follow_the_verdicts():
    assert sample_report()["summary"]["exit_code"] == 1
    counts = {verdict: 0 for verdict in report_module.VERDICTS}
    assert report_module.exit_code(dict(counts, equivalent=2)) == 0
    assert report_module.exit_code(dict(counts, equivalent=1, error=1)) == 2
    assert report_module.exit_code(dict(counts, error=1, inconclusive=1)) == 1


def test_json_and_markdown_reports(tmp_path):
    report = sample_report()
    report_module.write_report(report, str(tmp_path / "r.json"))
    loaded = json.loads((tmp_path / "r.json").read_text())
    assert loaded["programs"][0]["results"][0]["max_abs"] == "inf" and loaded["summary"]["mismatch"] == 1
    report_module.write_report(report, str(tmp_path / "r.md"))
    markdown = (tmp_path / "r.md").read_text()
    assert "| fast.py | equivalent | 1/1 |" in markdown and "## wrong.py" in markdown
    assert "2.00x" in report_module.summary_table(report)
    with pytest.raises(ValueError):
        report_module.write_report(report, str(tmp_path / "r.txt"))


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.open, self.images, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        elif tag not in ("meta", "br"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (self.open[-3:], tag)
        self.open.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_html(text: str) -> _Collector:
    """Well-formed (every tag closed in order) with the chart embedded as a PNG data URI."""
    collector = _Collector()
    collector.feed(text)
    collector.close()
    assert collector.open == []
    charts = [image for image in collector.images if image.get("src", "").startswith("data:image/png;base64,")]
    assert len(charts) == 1
    assert base64.b64decode(charts[0]["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    return collector


def test_html_report_is_one_well_formed_file_with_the_chart_inline():
    page = render_html(sample_report())
    collector = check_html(page)
    text = "".join(collector.text)
    assert "because <tags> & co" in text and "wrong.py" in text and "<tags>" not in page


def test_string_tensors_are_recorded_and_compared_exactly(tmp_path):
    from migrate.harness.recording import Recorder

    recorder = Recorder(10, np.asarray)
    fetched = np.array([b"T", b"Te", b"Ten"], dtype=object)  # what Session.run gives for a tf.string tensor
    recorder.record("line:1", 0.0, 0.0, [fetched, np.array([object()], dtype=object)], None, None, 0.0, 0.0)
    described = recorder.write(str(tmp_path))
    assert described[0]["leaf_kinds"] == [["array", "opaque"]]
    stored = np.load(tmp_path / "records.npz")["s0_c0_l0"]
    assert stored.tolist() == [b"T", b"Te", b"Ten"]
    assert compare_leaf(stored, np.array([b"T", b"Te", b"Ten"]), 1e-5, 0.05).close
    assert not compare_leaf(stored, np.array([b"T", b"Te", b"Tem"]), 1e-5, 0.05).close


def _final_weights_input(tmp_path, legacy, migrated, sessions_run=1, counts_agree=True):
    from migrate.harness.final_weights import FILE_NAME, FinalWeightsInput, load

    for side, arrays in (("legacy", legacy), ("migrated", migrated)):
        (tmp_path / side).mkdir()
        np.savez(tmp_path / side / FILE_NAME, **arrays)
    assert load(str(tmp_path / "absent")) is None
    manifest = [{"name": "w", "key": "w0", "trainable": True}, {"name": "step", "key": "w1", "trainable": False},
                {"name": "d/w", "key": "w2", "trainable": True}]
    return FinalWeightsInput(load(str(tmp_path / "legacy")), load(str(tmp_path / "migrated")), manifest, sessions_run,
                             training_calls=50, call_counts_agree=counts_agree)


def test_final_weights_compare_trainable_variables_and_say_what_is_advisory(tmp_path):
    from migrate.harness.final_weights import compare_final_weights

    ones = np.ones([4, 2], np.float32)
    given = _final_weights_input(tmp_path, {"w0": ones, "w1": np.array(3), "w2": ones},
                                 {"w0": ones * 1.01, "w1": np.array(7), "w2": ones * 2})
    weights, note = compare_final_weights(given, Tolerance(), randomness_advisory=False, unsettled={"d/w": 4})
    assert note is None
    assert [(item.variable, item.status) for item in weights] == [("w", "match"), ("d/w", "advisory-mismatch")]
    assert "unsettled" in weights[1].advisory_reason
    weights, _ = compare_final_weights(given, Tolerance(), randomness_advisory=True, unsettled={})
    assert [item.status for item in weights] == ["advisory-match", "advisory-mismatch"]


def test_final_weights_are_skipped_where_they_would_not_describe_the_same_point(tmp_path):
    from migrate.harness.final_weights import compare_final_weights

    arrays = {"w0": np.ones(3)}
    for sessions_run, counts_agree, expected in ((2, True, "in 2 sessions"), (1, False, "different number")):
        folder = tmp_path / f"{sessions_run}{counts_agree}"
        folder.mkdir()
        given = _final_weights_input(folder, arrays, arrays, sessions_run, counts_agree)
        weights, note = compare_final_weights(given, Tolerance(), False, {})
        assert weights == [] and expected in note


def test_final_weights_of_a_mixed_precision_run_are_advisory(tmp_path):
    from migrate.harness.final_weights import compare_final_weights

    ones = np.ones([4, 2], np.float32)
    given = _final_weights_input(tmp_path, {"w0": ones, "w2": ones}, {"w0": ones, "w2": ones * 1.2})
    weights, _ = compare_final_weights(given, Tolerance(), False, {}, mixed_precision="mixed_float16")
    assert [item.status for item in weights] == ["advisory-match", "advisory-mismatch"]
    assert "mixed_float16" in weights[1].advisory_reason


def test_final_weights_drawn_through_other_random_masks_deny_a_reproduction_claim():
    from migrate.harness.final_weights import RANDOMNESS_REASON, FinalWeight
    from migrate.harness.randomness import randomness_reproduced
    from migrate.harness.result_lines import ResultComparison

    accuracy = [ResultComparison("accuracy", 0.98, 0.98, "advisory-match", 0.0, 0.0)]
    agreeing = [FinalWeight("w", "advisory-match", 0.0, 0.0, None, RANDOMNESS_REASON)]
    differing = [FinalWeight("w", "advisory-mismatch", 0.3, 5.0, None, RANDOMNESS_REASON)]
    assert randomness_reproduced([], accuracy, agreeing)
    assert not randomness_reproduced([], accuracy, differing)
    assert randomness_reproduced([], [], agreeing)
