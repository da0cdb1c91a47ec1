"""End-to-end tests of `tf-migrate verify`: real TensorFlow subprocesses on both sides.

The harness must pass correct migrations and catch deliberately wrong ones, each reported as a
mismatch at the right run site. The wrong migrations are made here from the correct hand-written TF2
counterpart by one textual change each, so the only difference is the bug under test.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.harness.programs import Program, prepare
from migrate.harness.report import build_report
from migrate.harness.verify import Settings, run_legacy, verify_migrated
from tests.test_harness_units import check_html

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "harness_cases"
SETTINGS = Settings(steps=50, timeout_s=300)
TRAIN_LINE = 33  # mlp_legacy.py: sess.run([train_op, loss], ...)
NOISE_TRAIN_LINE = 29  # noise_legacy.py: the same


def sess_run_lines(path: Path) -> set[int]:
    return {number for number, line in enumerate(path.read_text().splitlines(), 1) if "sess.run(" in line}


def test_site_maps_of_the_cases_point_at_session_run_calls():
    for sites in CASES.glob("*_tf2.sites.json"):
        legacy = CASES / sites.name.replace("_tf2.sites.json", "_legacy.py")
        lines = {item["line"] for item in json.loads(sites.read_text())["run_sites"]}
        assert lines <= sess_run_lines(legacy), (sites.name, lines - sess_run_lines(legacy))
    assert TRAIN_LINE in sess_run_lines(CASES / "mlp_legacy.py")


@pytest.fixture(scope="module")
def mlp_legacy(tmp_path_factory):
    """One legacy run of mlp_legacy.py, shared by every migrated candidate below."""
    work = tmp_path_factory.mktemp("mlp_legacy")
    program = Program("mlp_legacy.py", str(CASES / "mlp_legacy.py"))
    run = run_legacy(program, SETTINGS, str(work))
    assert run.status == "ok", run.error
    return run


def verify_case_candidate(case, tmp_path, legacy_run, replacements=()):
    """Verify a copy of harness case `<case>_tf2.py` with `replacements` (old -> new, each present
    exactly once) against `<case>_legacy.py`; `legacy_run`: that program's legacy run, or None to
    run it here."""
    source = (CASES / f"{case}_tf2.py").read_text()
    for old, new in replacements:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    candidate = tmp_path / f"{case}_tf2.py"
    candidate.write_text(source)
    sites = tmp_path / f"{case}_tf2.sites.json"
    shutil.copy(CASES / sites.name, sites)
    program = Program(f"{case}_legacy.py", str(CASES / f"{case}_legacy.py"), str(candidate), str(sites))
    if legacy_run is None:
        legacy_run = run_legacy(program, SETTINGS, str(tmp_path))
        assert legacy_run.status == "ok", legacy_run.error
    return verify_migrated(program, prepare(program, str(tmp_path)), legacy_run, SETTINGS, str(tmp_path))


def verify_candidate(tmp_path, legacy_run, replacements):
    return verify_case_candidate("mlp", tmp_path, legacy_run, replacements)


def train_site(report):
    return next(site for site in report["sites"] if site["legacy_line"] == TRAIN_LINE)


def test_correct_migration_is_equivalent(tmp_path, mlp_legacy):
    report = verify_candidate(tmp_path, mlp_legacy, [])
    assert report["verdict"] == "equivalent", report["reason"]
    site = train_site(report)
    assert site["status"] == "match" and site["fetches"][0]["compared"] == 40
    assert site["inputs"] == "same in 40 recorded calls"
    assert [pair["how"] for pair in report["alignment"]["pairs"]] == ["name"] * 6
    assert report["timing"]["legacy"]["steps_per_s"] > 0 and report["timing"]["speedup"] > 0
    assert undocumented_keys(build_report([report], SETTINGS.to_dict())) == set()


def undocumented_keys(value, found=None) -> set:
    """Keys of the JSON report that migrate/harness/SCHEMA.md does not mention as `key`."""
    schema = (ROOT / "migrate" / "harness" / "SCHEMA.md").read_text()
    found = set() if found is None else found
    if isinstance(value, dict):
        for key, item in value.items():
            if f"`{key}`" not in schema:
                found.add(key)
            if key != "versions":  # library names, listed in prose
                undocumented_keys(item, found)
    elif isinstance(value, list):
        for item in value:
            undocumented_keys(item, found)
    return found


def test_flipped_sign_is_caught_at_the_training_step(tmp_path, mlp_legacy):
    # Gradient ascent instead of descent. (Flipping the sign of a bias in the forward pass would not
    # do: SGD then flips its update too, and the outputs really are the same.)
    report = verify_candidate(tmp_path, mlp_legacy, [("zip(tape.gradient(loss, variables), variables)",
                                                      "zip([-g for g in tape.gradient(loss, variables)], variables)")])
    assert report["verdict"] == "mismatch"
    site = train_site(report)
    # The loss of step 0 is computed before the first update, so it agrees; the next one does not.
    assert site["status"] == "mismatch" and site["first_divergence"]["step"] == 1
    assert site["migrated"] == "fn:train_step" and f"line {TRAIN_LINE}" in report["reason"]


def test_wrong_learning_rate_is_caught_at_the_training_step(tmp_path, mlp_legacy):
    report = verify_candidate(tmp_path, mlp_legacy, [("SGD(learning_rate=0.05)", "SGD(learning_rate=0.5)")])
    assert report["verdict"] == "mismatch"
    site = train_site(report)
    assert site["status"] == "mismatch" and site["first_divergence"]["step"] == 1
    assert site["first_divergence"]["name"] == "Mean:0"
    assert {item["key"]: item["status"] for item in report["results"]} == {"final_loss": "mismatch"}


def test_transposed_weights_are_caught_and_their_alignment_explained(tmp_path, mlp_legacy):
    report = verify_candidate(tmp_path, mlp_legacy, [
        ("GlorotUniform()([fan_in, units])", "GlorotUniform()([units, fan_in])"),
        ("tf.matmul(inputs, self.W) + self.b", "tf.matmul(inputs, self.W, transpose_b=True) + self.b")])
    assert report["verdict"] == "mismatch"
    assert train_site(report)["first_divergence"]["step"] == 0
    unaligned = {item["migrated"]: item["reason"] for item in report["alignment"]["unaligned_migrated"]}
    assert "transposed" in unaligned["hidden1/W"] and "transposed" in unaligned["out/W"]
    # hidden2/W is square: it aligns by name, and only the values can tell it is used transposed.
    assert "hidden2/W" in {pair["migrated"] for pair in report["alignment"]["pairs"]}
    assert any("hidden1/W not aligned" in note for note in report["notes"])


def test_verify_a_folder_end_to_end_with_an_html_report(tmp_path):
    """A batch with two correct pairs and a crashing program: the crash does not stop the batch."""
    folder = tmp_path / "programs"
    folder.mkdir()
    for name in ("mlp_legacy.py", "mlp_tf2.py", "mlp_tf2.sites.json",
                 "dropout_legacy.py", "dropout_tf2.py", "dropout_tf2.sites.json"):
        shutil.copy(CASES / name, folder / name)
    (folder / "crashes.py").write_text(
        "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nraise RuntimeError('boom')\n")
    report_path = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "migrate", "verify", str(folder), "--steps", "20",
                           "--report", str(report_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 1, done.stderr[-3000:]
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()[2:] if line.strip()
            and line.split()[0].endswith(".py")}
    assert rows == {"crashes.py": "failed", "dropout_legacy.py": "equivalent", "mlp_legacy.py": "equivalent"}
    assert "RuntimeError: boom" in done.stderr
    page = report_path.read_text()
    text = "".join(check_html(page).text)
    assert "dropout_legacy.py" in text and "randomness" in text and "failed" in text
    # Nothing written beside the programs or in the working folder but the report.
    assert sorted(os.listdir(tmp_path)) == ["programs", "report.html"]
    assert len(os.listdir(folder)) == 7


@pytest.mark.slow
def test_compat_level_migration_keeping_sessions_on_another_interpreter(tmp_path):
    """A migration that kept Session.run (lines shifted by an added header) is paired by source diff
    and its graph variables get the legacy weights at its first Session.run. The legacy side runs on an
    explicitly named interpreter (--legacy-python), so without tf-migrate's legacy runtime."""
    migrated = tmp_path / "mlp_compat.py"
    migrated.write_text("# migrated: sessions kept\n\n" + (CASES / "mlp_legacy.py").read_text())
    program = Program("mlp_legacy.py", str(CASES / "mlp_legacy.py"), str(migrated))
    settings = Settings(steps=50, timeout_s=300, legacy_python=sys.executable)
    legacy = run_legacy(program, settings, str(tmp_path))
    report = verify_migrated(program, prepare(program, str(tmp_path)), legacy, settings, str(tmp_path))
    assert report["verdict"] == "equivalent", report["reason"]
    assert report["sides"]["legacy"]["runtime"] == "tf.compat.v1 (disable_v2_behavior)"
    train = train_site(report)
    assert train["migrated"] == f"line:{TRAIN_LINE + 2}" and train["paired_by"] == "source diff"
    assert train["status"] == "match" and train["fetches"][0]["max_abs"] == 0.0
    assert len(report["alignment"]["pairs"]) == 6


@pytest.mark.slow
def test_keras_classifier_with_adam_and_dict_fetches_is_equivalent(tmp_path):
    program = Program("classifier_legacy.py", str(CASES / "classifier_legacy.py"), str(CASES / "classifier_tf2.py"),
                      str(CASES / "classifier_tf2.sites.json"))
    legacy = run_legacy(program, SETTINGS, str(tmp_path))
    report = verify_migrated(program, prepare(program, str(tmp_path)), legacy, SETTINGS, str(tmp_path))
    assert report["verdict"] == "equivalent", report["reason"]
    assert {pair["how"] for pair in report["alignment"]["pairs"]} == {"name suffix"}
    assert [site["status"] for site in report["sites"]] == ["no-values", "match", "match", "match"]


@pytest.mark.slow
def test_html_report_renders_in_headless_chromium(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    from tests.test_harness_units import sample_report
    from migrate.harness.report import write_report
    write_report(sample_report(), str(tmp_path / "report.html"))
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,1400",
                    f"--screenshot={shot}", (tmp_path / "report.html").as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000


@pytest.fixture(scope="module")
def noise_legacy(tmp_path_factory):
    """One legacy run of noise_legacy.py (random noise and dropout in every training step)."""
    work = tmp_path_factory.mktemp("noise_legacy")
    run = run_legacy(Program("noise_legacy.py", str(CASES / "noise_legacy.py")), SETTINGS, str(work))
    assert run.status == "ok", run.error
    return run


def noise_train_site(report: dict) -> dict:
    return next(site for site in report["sites"] if site["legacy_line"] == NOISE_TRAIN_LINE)


def verify_noise_candidate(tmp_path, legacy_run, replacements=()):
    return verify_case_candidate("noise", tmp_path, legacy_run, replacements)


def test_randomness_inside_training_is_reproduced_and_compared_strictly(tmp_path, noise_legacy):
    report = verify_noise_candidate(tmp_path, noise_legacy)
    assert report["verdict"] == "equivalent", report["reason"]
    assert report["randomness"]["reproduced"] is True
    train = noise_train_site(report)
    assert train["status"] == "match" and train["fetches"][0]["compared"] == 15
    assert train["fetches"][0]["max_abs"] == 0.0
    assert report["results"][0]["status"] == "match"  # printed after 15 random steps, compared strictly


def test_a_wrong_noise_level_is_never_called_equivalent(tmp_path, noise_legacy):
    report = verify_noise_candidate(tmp_path, noise_legacy, [("stddev=0.1", "stddev=0.2")])
    assert report["verdict"] == "inconclusive", report["reason"]
    assert "reproduced" not in report["randomness"]
    assert noise_train_site(report)["fetches"][0]["random_failures"] > 0


@pytest.mark.slow
def test_independent_randomness_leaves_random_training_advisory(tmp_path):
    settings = Settings(steps=50, timeout_s=300, aligned_randomness=False)
    program = Program("noise_legacy.py", str(CASES / "noise_legacy.py"), str(CASES / "noise_tf2.py"),
                      str(CASES / "noise_tf2.sites.json"))
    legacy = run_legacy(program, settings, str(tmp_path))
    report = verify_migrated(program, prepare(program, str(tmp_path)), legacy, settings, str(tmp_path))
    assert report["verdict"] == "inconclusive", report["reason"]
    assert noise_train_site(report)["status"] == "advisory"


TRAIN_ONLY_LINE = 24  # train_only_legacy.py: sess.run(train_op, ...), the program's only values-free site


def verify_train_only(tmp_path, replacements=()):
    return verify_case_candidate("train_only", tmp_path, None, replacements)


def test_training_that_fetches_no_values_is_judged_by_its_final_weights(tmp_path):
    report = verify_train_only(tmp_path)
    site = next(site for site in report["sites"] if site["legacy_line"] == TRAIN_ONLY_LINE)
    assert site["status"] == "no-values" and site["legacy_calls"] == site["migrated_calls"] == 20
    assert report["verdict"] == "equivalent", report["reason"]
    assert report["final_weights"]["compared"] == 1 and report["final_weights"]["max_abs"] < 1e-6
    assert "1 trained variables agree at the end" in report["reason"]


def test_final_weights_catch_a_wrong_learning_rate(tmp_path):
    report = verify_train_only(tmp_path, [("learning_rate=0.1", "learning_rate=0.09")])
    assert report["verdict"] == "mismatch", report["reason"]
    assert report["final_weights"]["mismatched"] == ["w"]
    assert report["reason"].startswith("final weights: w differs after training")


def test_final_weights_are_not_compared_after_a_different_number_of_steps(tmp_path):
    report = verify_train_only(tmp_path, [("for step in range(20):", "for step in range(19):")])
    assert report["final_weights"]["compared"] == 0
    assert "called a different number of times" in report["final_weights"]["note"]


def test_randomness_the_streams_do_not_reproduce_is_judged_with_independent_streams(tmp_path):
    """core_layers_dropout.py trains through tf.layers.dropout, which its migration draws through a
    Keras layer: the aligned streams cannot reproduce the masks. Its accuracy still agrees (too coarse
    to prove anything) while the trained weights do not, so the randomness counts as not reproduced;
    the harness then runs both sides again with their own streams, where the legacy side's re-runs
    prove the evaluation before training deterministic, and judges from that."""
    from migrate.harness.verify import verify_program

    example = ROOT / "legacy_examples" / "core_layers_dropout.py"
    report = verify_program(Program(example.name, str(example)), SETTINGS, str(tmp_path))
    assert report["verdict"] == "equivalent", report["reason"]
    assert "aligned_attempt" in report["randomness"] and "reproduced" not in report["randomness"]
    weights = report["final_weights"]
    assert weights["compared"] == 0 and weights["advisory"] == 6
