"""`tf-migrate verify` on programs shaped like real scripts: relative data paths and outputs,
unittest / tf.test programs, uncertain run-site pairings, unseeded programs under op determinism.

Every program here is a small TF1 program written for these tests, with its hand-written TF2
counterpart and run-site map.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.harness.workdir import materialise, plan_workdir, relocate

ROOT = Path(__file__).resolve().parent.parent


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def tree_digest(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under `folder` (links by their target)."""
    digests = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            digests[str(path.relative_to(folder))] = "link:" + os.readlink(path)
        elif path.is_file():
            digests[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def run_verify(cwd: Path, legacy: Path, migrated: Path | None, report: Path, *options: str,
               env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """`tf-migrate verify` as a user runs it from `cwd`; returns the process and its JSON report."""
    command = [sys.executable, "-m", "migrate", "verify", str(legacy)] + ([str(migrated)] if migrated else [])
    command += ["--steps", "20", "--timeout", "300", "--report", str(report), *options]
    environment = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900, env=environment)
    assert report.exists(), done.stderr[-4000:]
    return done, json.loads(report.read_text())


# -- working directory ----------------------------------------------------------------------------------

def test_plan_copies_the_invocation_directory_then_the_program_folder_then_nothing(tmp_path):
    user = tmp_path / "user"
    write(user / "scripts" / "train.py", "print('hi')\n")
    (user / "big.bin").write_bytes(b"\0" * 300_000)
    (user / ".git").mkdir()
    (user / ".git" / "pack").write_bytes(b"\0" * 900_000)  # never copied, never counted
    scripts = str(user / "scripts")

    plan = plan_workdir(str(user), scripts, limit_mb=0.5)
    assert (plan.mode, plan.source, plan.note) == ("copy of invocation directory", str(user), None)
    copy = materialise(plan, str(tmp_path / "side" / "cwd"))
    assert sorted(os.listdir(copy)) == ["big.bin", "scripts"]
    assert relocate(str(user / "scripts" / "train.py"), plan, copy) == os.path.join(copy, "scripts", "train.py")
    assert relocate("/elsewhere/x.py", plan, copy) == "/elsewhere/x.py"

    plan = plan_workdir(str(user), scripts, limit_mb=0.1)
    assert plan.mode == "copy of program directory" and plan.source == scripts
    assert "more than 0.1 MiB" in plan.note and f"resolve against {scripts}" in plan.note

    (user / "scripts" / "weights.bin").write_bytes(b"\0" * 200_000)
    plan = plan_workdir(str(user), scripts, limit_mb=0.1)
    assert plan.mode == "empty" and plan.source is None and "--workdir-limit" in plan.note
    assert plan_workdir(None, scripts).mode == "empty"


FIT_LEGACY = '''
    """Fits a line to data/train.csv (relative to the working directory); writes outputs beside it."""
    import numpy as np
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()

    data = np.loadtxt("data/train.csv", delimiter=",", dtype=np.float32)
    features, targets = data[:, :2], data[:, 2:]
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [2, 1])
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(20):
            _, value = sess.run([train_op, loss], {x: features, y: targets})
        saver.save(sess, "checkpoints/model")
    with open("log.txt", "a") as log:
        log.write("legacy final loss %f\\n" % value)
    with open("results/summary.txt", "w") as summary:
        summary.write("overwritten by the legacy program\\n")
    print("RESULT final_loss", float(value))
'''
FIT_TRAIN_LINE = 19

FIT_TF2 = '''
    """TF2 counterpart of fit_legacy.py."""
    import numpy as np
    import tensorflow as tf

    data = np.loadtxt("data/train.csv", delimiter=",", dtype=np.float32)
    features, targets = data[:, :2], data[:, 2:]
    w = tf.Variable(tf.keras.initializers.GlorotUniform()([2, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)


    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return None, loss


    for step in range(20):
        _, value = train_step(features, targets)
    tf.train.Checkpoint(w=w, b=b).write("checkpoints/model")
    with open("log.txt", "a") as log:
        log.write("migrated final loss %f\\n" % float(value))
    with open("results/summary.txt", "w") as summary:
        summary.write("overwritten by the migrated program\\n")
    print("RESULT final_loss", float(value))
'''


def fit_project(root: Path) -> tuple[Path, Path]:
    """A user's project: data and earlier outputs at its top, the programs in scripts/."""
    rows = [f"{i / 10:.1f},{(i % 7) / 7:.3f},{0.3 * i / 10 - 0.5 * (i % 7) / 7 + 0.2:.4f}" for i in range(40)]
    write(root / "data" / "train.csv", "\n".join(rows) + "\n")
    write(root / "log.txt", "an earlier run\n")
    write(root / "results" / "summary.txt", "the user's own summary\n")
    legacy = write(root / "scripts" / "fit_legacy.py", FIT_LEGACY)
    migrated = write(root / "scripts" / "fit_tf2.py", FIT_TF2)
    assert "sess.run([train_op, loss]" in FIT_LEGACY.splitlines()[FIT_TRAIN_LINE]
    (root / "scripts" / "fit_tf2.sites.json").write_text(
        json.dumps({"run_sites": [{"line": FIT_TRAIN_LINE, "function": "train_step"}]}))
    return legacy, migrated


def test_sides_run_in_copies_of_the_invocation_directory_and_leave_it_untouched(tmp_path):
    project = tmp_path / "project"
    legacy, migrated = fit_project(project)
    before = tree_digest(project)
    done, report = run_verify(project, legacy.relative_to(project), migrated.relative_to(project),
                              tmp_path / "report.json", "--keep-temp")
    program, = report["programs"]
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])
    assert program["working_directory"]["mode"] == "copy of invocation directory"
    assert program["working_directory"]["source"] == str(project)
    site = next(site for site in program["sites"] if site["legacy_line"] == FIT_TRAIN_LINE)
    assert site["status"] == "match" and site["legacy_calls"] == 20
    assert [item["status"] for item in program["results"]] == ["match"]
    # Checkpoints, the appended log and the overwritten summary went to the copies only...
    assert tree_digest(project) == before
    # ...which --keep-temp keeps: one per side, each with its own program's outputs.
    kept = Path(done.stderr.split("temporary files kept in ")[1].split()[0])
    try:
        logs = {path.parent.parent.name: path.read_text() for path in kept.glob("*/*/cwd/log.txt")}
        assert sorted(logs) == ["legacy", "migrated_run"]
        assert logs["legacy"].startswith("an earlier run\nlegacy final loss ")
        assert logs["migrated_run"].startswith("an earlier run\nmigrated final loss ")
        assert len(list(kept.glob("*/legacy/cwd/checkpoints/model.index"))) == 1
        assert len(list(kept.glob("*/migrated_run/cwd/checkpoints/model.index"))) == 1
    finally:
        shutil.rmtree(kept)


def test_too_big_a_directory_falls_back_with_a_message(tmp_path):
    project = tmp_path / "project"
    legacy, migrated = fit_project(project)
    (project / "scripts" / "data").mkdir()
    (project / "scripts" / "data" / "train.csv").write_text((project / "data" / "train.csv").read_text())
    write(project / "scripts" / "results" / "summary.txt", "beside the scripts\n")
    (project / "dataset.bin").write_bytes(b"\0" * 400_000)
    before = tree_digest(project)
    done, report = run_verify(project, legacy, migrated, tmp_path / "report.json", "--workdir-limit", "0.2")
    program, = report["programs"]
    assert program["working_directory"]["mode"] == "copy of program directory"
    assert "working directory: " in done.stderr and "more than 0.2 MiB" in done.stderr
    assert program["verdict"] == "equivalent", program["reason"]
    assert tree_digest(project) == before


# -- unittest / tf.test programs --------------------------------------------------------------------------

def test_exiting_after_tests_ran_is_their_verdict_not_a_crash(tmp_path):
    """Run in a fresh interpreter: TestOutcomes wraps unittest.TestResult for the whole process."""
    tests = write(tmp_path / "plain_tests.py", """
        import unittest

        class Arithmetic(unittest.TestCase):
            def test_sum(self):
                self.assertEqual(1 + 1, 2)

            def test_wrong(self):
                self.assertEqual(1 + 1, 3)

            def test_sub(self):
                for value in (1, 2):
                    with self.subTest(value=value):
                        self.assertLess(value, 2)

        unittest.main()
    """)
    exits = write(tmp_path / "exits.py", "import sys\nsys.exit(1)\n")
    driver = write(tmp_path / "driver.py", f"""
        import json
        from migrate.harness.side_common import TestOutcomes, run_script
        outcomes = TestOutcomes().install()
        status, error, _, _ = run_script({str(tests)!r}, outcomes=outcomes)
        print(json.dumps([status, error, outcomes.to_dict()]))
        status, error, _, _ = run_script({str(exits)!r}, outcomes=TestOutcomes())
        print(json.dumps([status, error]))
    """)
    done = subprocess.run([sys.executable, str(driver)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    first, second = [json.loads(line) for line in done.stdout.splitlines()[-2:]]
    assert first[:2] == ["ok", None]
    assert first[2]["outcomes"] == {"__main__.Arithmetic.test_sum": "pass", "__main__.Arithmetic.test_wrong": "fail",
                                    "__main__.Arithmetic.test_sub": "fail"}
    assert first[2]["details"]["__main__.Arithmetic.test_wrong"] == "AssertionError: 2 != 3"
    assert second == ["crashed", "the script called sys.exit(1)"]


def test_test_outcomes_are_compared_by_id_and_a_test_run_on_one_side_only_is_a_mismatch():
    from migrate.harness.outcomes import compare_tests, mismatch_reason
    legacy = {"outcomes": {"t.A.test_a": "pass", "t.A.test_b": "fail", "t.A.test_c": "pass"},
              "details": {"t.A.test_b": "AssertionError: 1 != 2"}}
    migrated = {"outcomes": {"t.A.test_a": "pass", "t.A.test_b": "fail", "t.A.test_d": "pass"}, "details": {}}
    compared = [item.to_dict() for item in compare_tests(legacy, migrated)]
    assert [(item["test"], item["status"]) for item in compared] == [
        ("t.A.test_a", "match"), ("t.A.test_b", "match"), ("t.A.test_c", "mismatch"), ("t.A.test_d", "mismatch")]
    assert mismatch_reason([item for item in compared if item["status"] == "mismatch"]) == (
        "tests differ: t.A.test_c (legacy pass, migrated not run), t.A.test_d (legacy not run, migrated pass)")
    assert compare_tests(None, None) == []


SCALE_TESTS_LEGACY = '''
    """Tests of a scaling helper, TF1 style: sessions inside tf.test.TestCase methods."""
    import unittest

    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()


    def scale(x, factor):
        return x * factor


    class ScaleTest(tf.test.TestCase):
        def test_doubles(self):
            with self.cached_session() as sess:
                doubled = sess.run(scale(tf.constant([1.0, 2.0]), 2.0))
            self.assertAllClose(doubled, [2.0, 4.0])

        def test_variable_sum(self):
            with self.session() as sess:
                values = tf.Variable([1.0, 2.0, 3.0])
                sess.run(tf.global_variables_initializer())
                self.assertAllClose(sess.run(tf.reduce_sum(values)), 6.0)

        def test_known_bug(self):
            self.assertEqual(scale(3, 2), 7)  # fails: kept failing through the migration

        @unittest.skip("needs a GPU")
        def test_on_gpu(self):
            pass


    if __name__ == "__main__":
        tf.test.main()
'''
SCALE_SITE_LINE = 16

SCALE_TESTS_TF2 = '''
    """TF2 counterpart of scale_legacy.py (run with plain unittest.main())."""
    import unittest

    import tensorflow as tf


    @tf.function
    def scale(x, factor):
        return x * factor


    class ScaleTest(tf.test.TestCase):
        def test_doubles(self):
            doubled = self.evaluate(scale(tf.constant([1.0, 2.0]), 2.0))
            self.assertAllClose(doubled, [2.0, 4.0])

        def test_variable_sum(self):
            values = tf.Variable([1.0, 2.0, 3.0])
            self.assertAllClose(self.evaluate(tf.reduce_sum(values)), 6.0)

        def test_known_bug(self):
            self.assertEqual(3 * 2, 7)

        @unittest.skip("needs a GPU")
        def test_on_gpu(self):
            pass


    if __name__ == "__main__":
        unittest.main()
'''


def scale_pair(folder: Path, migrated_source: str) -> tuple[Path, Path]:
    legacy = write(folder / "scale_legacy.py", SCALE_TESTS_LEGACY)
    migrated = write(folder / "scale_tf2.py", migrated_source)
    assert "sess.run(scale(" in SCALE_TESTS_LEGACY.splitlines()[SCALE_SITE_LINE]
    (folder / "scale_tf2.sites.json").write_text(
        json.dumps({"run_sites": [{"line": SCALE_SITE_LINE, "function": "scale"}]}))
    return legacy, migrated


def test_test_programs_with_the_same_outcomes_are_equivalent(tmp_path):
    legacy, migrated = scale_pair(tmp_path / "tests", SCALE_TESTS_TF2)
    done, report = run_verify(tmp_path, legacy, migrated, tmp_path / "report.json")
    program, = report["programs"]
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])
    outcomes = {item["test"]: (item["legacy"], item["status"]) for item in program["tests"]}
    assert outcomes == {"__main__.ScaleTest.test_doubles": ("pass", "match"),
                        "__main__.ScaleTest.test_variable_sum": ("pass", "match"),
                        "__main__.ScaleTest.test_known_bug": ("fail", "match"),
                        "__main__.ScaleTest.test_on_gpu": ("skip", "match"),
                        # tf.test.TestCase's own deprecated `test_session`, which skips itself
                        "__main__.ScaleTest.test_session": ("skip", "match")}
    assert "5 tests have the same outcomes" in program["reason"]
    assert any("failing on both sides" in note and "test_known_bug" in note for note in program["notes"])
    # The values the tests computed are compared too, where the run-site map pairs them.
    site = next(site for site in program["sites"] if site["legacy_line"] == SCALE_SITE_LINE)
    assert site["migrated"] == "fn:scale" and site["status"] == "match"


def test_a_test_whose_outcome_changes_is_a_mismatch_naming_it(tmp_path):
    broken = SCALE_TESTS_TF2.replace("tf.Variable([1.0, 2.0, 3.0])", "tf.Variable([1.0, 2.0, 4.0])")
    legacy, migrated = scale_pair(tmp_path / "tests", broken)
    _, report = run_verify(tmp_path, legacy, migrated, tmp_path / "report.json")
    program, = report["programs"]
    assert program["verdict"] == "mismatch"
    assert program["reason"].startswith("tests differ: __main__.ScaleTest.test_variable_sum (legacy pass, "
                                        "migrated fail: AssertionError")
    assert report["summary"]["exit_code"] == 1


# -- pairing: uncertain pairings are unpaired, not mismatches ----------------------------------------------

def recorded(key, leaves_per_call, calls=3, first_sequence=0):
    """A SiteData whose every call recorded `leaves_per_call` (sequence numbers from first_sequence)."""
    import numpy as np
    from migrate.harness.records import SiteData
    values = {call: list(leaves_per_call) for call in range(calls)}
    return SiteData(key, calls, [str(i) for i in range(len(leaves_per_call))], None, values, list(leaves_per_call),
                    {}, np.arange(calls, dtype=float), np.arange(calls, dtype=float) + 0.5,
                    np.arange(first_sequence, first_sequence + calls), {})


def judged(legacy_sites, migrated_sites, site_map, lines=None, rewritten=frozenset()):
    """compare_runs on recorded sites, as verify does after both sides ran."""
    from types import SimpleNamespace

    from migrate.harness.judge import compare_runs, empty_report
    from migrate.harness.programs import Prepared, Program
    from migrate.harness.tolerance import Tolerance

    def side(sites):
        return SimpleNamespace(data=SimpleNamespace(sites=sites, result={"variables": []}), stdout="", out_dir="")

    prepared = Prepared("m.py", None, site_map, lines or {}, rewritten=rewritten)
    return compare_runs(empty_report(Program("p.py", "/p.py")), prepared, side(legacy_sites), side(migrated_sites),
                        Tolerance())


def test_legacy_sites_with_different_fetches_mapped_to_one_function_are_unpaired_not_a_mismatch():
    """The wrong pairing behind "returns 1 values where legacy fetches 20": a training site and an
    evaluation site fetching 20 metrics both mapped to the training function. Before, they were merged
    into one stream and the evaluation's calls were compared with training steps: a mismatch."""
    import numpy as np
    loss, metrics = [None, np.float32(0.5)], [np.float32(k) for k in range(20)]
    legacy = {"line:30": recorded("line:30", loss, 3, 0), "line:40": recorded("line:40", metrics, 1, 3),
              "line:50": recorded("line:50", [np.float32(2.0)], 2, 4)}
    migrated = {"fn:train_step": recorded("fn:train_step", [np.float32(0.5)], 4),
                "fn:predict": recorded("fn:predict", [np.float32(2.0)], 2)}
    report = judged(legacy, migrated, {30: "train_step", 40: "train_step", 50: "predict"})
    by_lines = {tuple(site["legacy_lines"]): site for site in report["sites"]}
    merged = by_lines[(30, 40)]
    assert merged["status"] == "unpaired" and merged["first_divergence"] is None
    assert merged["unpaired_reason"] == ("legacy sites mapped to one function fetch different values "
                                         "(line 30 fetches 1, line 40 fetches 20)")
    assert by_lines[(50,)]["status"] == "match"
    assert report["verdict"] == "equivalent" and "1 run sites unpaired" in report["reason"]
    assert report["site_counts"] == {"match": 1, "mismatch": 0, "advisory": 0, "unpaired": 1, "no-values": 0}

    from migrate.harness.report import build_report, summary_table
    built = build_report([report], {})
    assert built["summary"]["unpaired_sites"] == 1
    assert "1 run sites unpaired" in summary_table(built)


def test_a_counterpart_returning_other_values_is_unpaired_with_the_reason():
    import numpy as np
    legacy = {"line:30": recorded("line:30", [np.float32(k) for k in range(20)], 2)}
    migrated = {"fn:summaries": recorded("fn:summaries", [np.float32(1.0)], 2)}
    report = judged(legacy, migrated, {30: "summaries"})
    site, = report["sites"]
    assert site["status"] == "unpaired" and site["fetches"] == []
    assert "fn:summaries returns 1 values where legacy fetches 20" in site["unpaired_reason"]
    assert report["verdict"] == "inconclusive"


def test_a_site_found_only_through_a_rewritten_line_is_unpaired():
    from migrate.harness.pairing import line_map, rewritten_lines
    import numpy as np
    old = "a = 1\nx = sess.run(loss)\ny = sess.run(acc)\nsess.run(tf.global_variables_initializer())\n"
    new = "a = 1\nx = sess.run(acc)\ny = sess.run(acc)\nsess.run(tf.compat.v1.global_variables_initializer())\n"
    lines, rewritten = line_map(old, new), rewritten_lines(old, new)
    # The diff pairs line 2 with line 2, which now runs another tensor; line 4 only had an API renamed.
    assert lines == {1: 1, 2: 2, 3: 3, 4: 4} and rewritten == {2}
    legacy = {"line:2": recorded("line:2", [np.float32(1.0)]), "line:3": recorded("line:3", [np.float32(2.0)])}
    migrated = {"line:2": recorded("line:2", [np.float32(2.0)]), "line:3": recorded("line:3", [np.float32(2.0)])}
    report = judged(legacy, migrated, {}, lines, rewritten)
    first, second = sorted(report["sites"], key=lambda site: site["legacy_line"])
    assert first["status"] == "unpaired" and "line 2 was rewritten as line 2" in first["unpaired_reason"]
    assert second["status"] == "match" and second["paired_by"] == "source diff"
    assert report["verdict"] == "equivalent"


# -- programs that set no seeds, with op determinism off and on ----------------------------------------------

def unseeded_pair(folder: Path, determinism_in_script: bool) -> tuple[Path, Path]:
    """fit_legacy.py (its variable `w` initialised by an unseeded random op) and a TF2 counterpart
    whose `w` starts from an unseeded tf.random.uniform: neither program sets a seed anywhere."""
    legacy, migrated = fit_project(folder)
    tf2 = FIT_TF2.replace("tf.keras.initializers.GlorotUniform()([2, 1])", "tf.random.uniform([2, 1], -1.0, 1.0)")
    assert tf2 != FIT_TF2 and "seed" not in tf2 + FIT_LEGACY
    if determinism_in_script:  # after the imports, on the line the legacy program leaves blank (lines stay put)
        legacy_lines = FIT_LEGACY.splitlines()
        assert legacy_lines[6] == ""
        # TF 1.x had no enable_op_determinism(); a TF1-style program on TF 2 reaches the v2 one.
        legacy_lines[6] = "    tf.compat.v2.config.experimental.enable_op_determinism()"
        write(legacy, "\n".join(legacy_lines) + "\n")
        tf2 = tf2.replace("import tensorflow as tf\n", "import tensorflow as tf\n    tf.config.experimental.enable_op_determinism()\n")
    write(migrated, tf2)
    return legacy, migrated


@pytest.mark.parametrize("determinism", ["off", "TF_DETERMINISTIC_OPS=1", "enable_op_determinism()"])
def test_programs_setting_no_seeds_are_equivalent_with_op_determinism_on_or_off(tmp_path, determinism):
    legacy, migrated = unseeded_pair(tmp_path / "project", determinism == "enable_op_determinism()")
    env = {key: value for key, value in os.environ.items() if key != "TF_DETERMINISTIC_OPS"}
    if determinism == "TF_DETERMINISTIC_OPS=1":
        env["TF_DETERMINISTIC_OPS"] = "1"
    done, report = run_verify(tmp_path / "project", legacy, migrated, tmp_path / "report.json", env=env)
    program, = report["programs"]
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])
    assert {pair["migrated"]: pair["how"] for pair in program["alignment"]["pairs"]} == {"w": "name", "b": "name"}
    site = next(site for site in program["sites"] if site["legacy_line"] == FIT_TRAIN_LINE)
    assert site["status"] == "match" and site["fetches"][0]["compared"] == 20


# -- run sites in the program's other modules ---------------------------------------------------------------

MODULE_MODEL = """
import numpy as np
import tensorflow as tf


class Regression(object):
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 2])
        self.y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(np.array([[0.5], [-0.25]], dtype=np.float32), name="w")
        self.loss = tf.reduce_mean(tf.square(tf.matmul(self.x, w) - self.y))
        self.train_op = tf.train.GradientDescentOptimizer(0.1).minimize(self.loss)

    def fit(self, sess, data, targets, steps):
        for _ in range(steps):
            _, loss = sess.run([self.train_op, self.loss], feed_dict={self.x: data, self.y: targets})
        return loss
"""

MODULE_MAIN = """
import numpy as np
import tensorflow as tf
from model import Regression

data = np.random.RandomState(0).randn(16, 2).astype(np.float32)
targets = data.sum(axis=1, keepdims=True)
model = Regression()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    model.fit(sess, data, targets, 5)
"""


def compat_version(source: str) -> str:
    """`source` on tf.compat.v1, with a line added after the imports (so its lines move by one)."""
    for name in ("placeholder", "train.GradientDescentOptimizer", "train.exponential_decay", "Session",
                 "global_variables_initializer"):
        source = source.replace(f"tf.{name}", f"tf.compat.v1.{name}")
    return source.replace("import tensorflow as tf\n", "import tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n")


def test_run_sites_in_the_programs_modules_are_recorded_and_paired_by_their_line_diff(tmp_path):
    legacy = write(tmp_path / "legacy" / "train.py", MODULE_MAIN)
    write(tmp_path / "legacy" / "model.py", MODULE_MODEL)
    migrated = write(tmp_path / "migrated" / "train.py", compat_version(MODULE_MAIN))
    write(tmp_path / "migrated" / "model.py", compat_version(MODULE_MODEL))
    done, report = run_verify(tmp_path, legacy, migrated, tmp_path / "report.json")
    program, = report["programs"]
    site = next(site for site in program["sites"] if site["legacy_module"])
    fit_line = MODULE_MODEL.lstrip().splitlines().index(
        "            _, loss = sess.run([self.train_op, self.loss], feed_dict={self.x: data, self.y: targets})") + 1
    assert (site["legacy_module"], site["legacy_line"]) == ("model.py", fit_line)
    assert site["migrated"] == f"line:{fit_line + 1}@model.py" and site["paired_by"] == "source diff"
    assert site["status"] == "match" and site["legacy_calls"] == site["migrated_calls"] == 5
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])


# -- runs whose writes TF1 leaves unordered -----------------------------------------------------------------

RACY_LEGACY = """
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
w = tf.Variable(np.array([[0.5], [-0.25]], dtype=np.float32), name="w")
scale = tf.Variable(2.0, name="scale")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
step = tf.train.GradientDescentOptimizer(0.5).minimize(loss, var_list=[w])
clip = w.assign(tf.clip_by_value(w, -0.01, 0.01))
doubled = scale * 2.0
data = np.random.RandomState(0).randn(8, 2).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(4):
        sess.run([step, clip, doubled], feed_dict={x: data})
"""


def test_unordered_writes_make_what_reads_them_advisory_and_nothing_else(tmp_path):
    legacy = write(tmp_path / "legacy" / "racy.py", RACY_LEGACY)
    migrated = write(tmp_path / "migrated" / "racy.py", compat_version(RACY_LEGACY))
    done, report = run_verify(tmp_path, legacy, migrated, tmp_path / "report.json")
    program, = report["programs"]
    race_line = RACY_LEGACY.lstrip().splitlines().index("        sess.run([step, clip, doubled], feed_dict={x: data})") + 1
    assert program["ordering"]["racing_variables"] == [{"variable": "w", "line": race_line, "module": None}]
    site = next(site for site in program["sites"] if site["legacy_line"] == race_line)
    clipped, doubled = site["fetches"]
    assert clipped["compared"] == 0 and clipped["advisory"] == 4
    assert doubled["compared"] == 4 and doubled["max_abs"] == 0.0
    assert any("advisory from call 0" in note for note in site["notes"])
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])


STEP_FETCHED_LEGACY = """
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
w = tf.Variable(np.array([[0.5], [-0.25]], dtype=np.float32), name="w")
global_step = tf.Variable(0, trainable=False, name="global_step")
rate = tf.train.exponential_decay(0.5, global_step, decay_steps=1, decay_rate=0.5)
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
train = tf.train.GradientDescentOptimizer(rate).minimize(loss, global_step=global_step)
data = np.random.RandomState(0).randn(8, 2).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(4):
        sess.run([train, loss, global_step], feed_dict={x: data})
"""


def test_a_variable_fetched_beside_its_update_makes_only_that_fetch_advisory(tmp_path):
    """The global step's increment is ordered after the update that reads the decayed rate: the
    weights, and the loss computed from them, stay strict."""
    legacy = write(tmp_path / "legacy" / "step.py", STEP_FETCHED_LEGACY)
    migrated = write(tmp_path / "migrated" / "step.py", compat_version(STEP_FETCHED_LEGACY))
    done, report = run_verify(tmp_path, legacy, migrated, tmp_path / "report.json")
    program, = report["programs"]
    line = STEP_FETCHED_LEGACY.lstrip().splitlines().index(
        "        sess.run([train, loss, global_step], feed_dict={x: data})") + 1
    assert program["ordering"]["racing_variables"] == [] and program["ordering"]["unsettled_variables"] == 0
    assert program["ordering"]["fetched_racing"] == [{"variable": "global_step", "line": line, "module": None}]
    site = next(site for site in program["sites"] if site["legacy_line"] == line)
    loss, step = site["fetches"]
    assert loss["compared"] == 4 and step["compared"] == 0 and step["advisory"] == 4
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])

    # the loss is still compared strictly: a migrated program that trains differently is caught
    wrong = write(tmp_path / "wrong" / "step.py", compat_version(STEP_FETCHED_LEGACY).replace(
        "decay_rate=0.5", "decay_rate=0.6"))
    done, report = run_verify(tmp_path, legacy, wrong, tmp_path / "report2.json")
    assert report["programs"][0]["verdict"] == "mismatch", report["programs"][0]["reason"]


def test_result_lines_printed_after_unordered_writes_are_advisory_and_earlier_ones_strict(tmp_path):
    printing = RACY_LEGACY.replace(
        "    for _ in range(4):\n",
        '    print("RESULT before %r" % float(sess.run(doubled)))\n    for _ in range(4):\n',
    ) + 'print("RESULT after %r" % float(w_final))\n'
    printing = printing.replace("        sess.run([step, clip, doubled], feed_dict={x: data})\n",
                                "        sess.run([step, clip, doubled], feed_dict={x: data})\n"
                                "    w_final = sess.run(w).sum()\n")
    legacy = write(tmp_path / "legacy" / "racy.py", printing)
    # the migrated program picks another order than the legacy run did: its final weights differ
    migrated = write(tmp_path / "migrated" / "racy.py", compat_version(printing).replace(
        'float(w_final)', 'float(w_final + 1.0)'))
    done, report = run_verify(tmp_path, legacy, migrated, tmp_path / "report.json")
    program, = report["programs"]
    statuses = {item["key"]: item["status"] for item in program["results"]}
    assert statuses == {"before": "match", "after": "advisory-mismatch"}, program["results"]
    assert program["verdict"] == "equivalent", (program["reason"], done.stderr[-3000:])

    shifted = write(tmp_path / "shifted" / "racy.py", compat_version(printing).replace(
        'float(sess.run(doubled))', 'float(sess.run(doubled) + 1.0)'))
    done, report = run_verify(tmp_path, legacy, shifted, tmp_path / "report2.json")
    program, = report["programs"]
    assert program["verdict"] == "mismatch" and "RESULT before" in program["reason"], program["reason"]
