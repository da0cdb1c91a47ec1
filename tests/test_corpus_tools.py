"""The corpus tools (benchmarks/corpus/) on a tiny mirror made here: no fetched code, no TensorFlow."""
from __future__ import annotations

import builtins
import importlib
import json
import os
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks" / "corpus"), str(ROOT / "benchmarks" / "corpus" / "stand_ins")]

import build_manifest  # noqa: E402
import materialise  # noqa: E402
import summary  # noqa: E402
from corpus_stand_ins import activate, hook, mnist, run_budget  # noqa: E402
from static_pass import graph_mode_names, imported_modules  # noqa: E402

PROGRAM = """import tensorflow as tf
from helpers import util

x = tf.placeholder(tf.float32, [None, 3])
with tf.Session() as sess:
    print(sess.run(x, feed_dict={x: util.ones()}))
"""
MODULE = "import tensorflow as tf\n\ndef dense(x):\n    return tf.layers.dense(x, 3)\n"
UTIL = "def ones():\n    return [[1.0, 1.0, 1.0]]\n"


def git(folder: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_DATE="2018-01-01T00:00:00", GIT_COMMITTER_DATE="2018-01-01T00:00:00")
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    """`<mirrors>/me+toy/repo/.git` holding a TF1 program, a TF1 module and a plain helper package."""
    work = tmp_path / "mirrors" / "me+toy" / "repo"
    (work / "helpers").mkdir(parents=True)
    (work / "train.py").write_text(PROGRAM)
    (work / "layers.py").write_text(MODULE)
    (work / "helpers" / "__init__.py").write_text("")
    (work / "helpers" / "util.py").write_text(UTIL)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "toy")
    return tmp_path / "mirrors"


def toy_entries(mirrors: Path) -> list[dict]:
    gitdir = materialise.git_dir(str(mirrors), "me/toy")
    return build_manifest.repo_entries("me/toy", gitdir)


def test_manifest_selects_tf1_files_and_classifies_them(mirror: Path):
    entries = {e["path"]: e for e in toy_entries(mirror)}
    assert set(entries) == {"train.py", "layers.py"}  # helpers/util.py has no TensorFlow
    assert entries["train.py"]["kind"] == "main" and entries["layers.py"]["kind"] == "module"
    assert entries["train.py"]["blob"] == materialise.git_blob_sha(PROGRAM.encode())


def test_support_files_follow_local_imports(mirror: Path):
    gitdir = materialise.git_dir(str(mirror), "me/toy")
    blobs = build_manifest.tree_blobs(gitdir, build_manifest.pinned_commit(gitdir))
    read = {"train.py": PROGRAM, "helpers/__init__.py": "", "helpers/util.py": UTIL}.__getitem__
    assert build_manifest.support_files("train.py", (), blobs, read) == ["helpers/__init__.py", "helpers/util.py"]


def test_materialise_writes_checked_files_and_names_problems(mirror: Path, tmp_path: Path):
    entries = toy_entries(mirror)
    program = next(e for e in entries if e["path"] == "train.py")
    program["support"] = [{"path": "helpers/util.py", "blob": materialise.git_blob_sha(UTIL.encode())}]
    wrong = dict(program, path="layers.py", blob="0" * 40, support=[])
    absent = dict(program, repo="me/absent")
    outcome = materialise.materialise([program, wrong, absent], str(mirror), str(tmp_path / "out"))
    assert (tmp_path / "out" / "me+toy" / "train.py").read_text() == PROGRAM
    assert (tmp_path / "out" / "me+toy" / "helpers" / "util.py").read_text() == UTIL
    assert not (tmp_path / "out" / "me+toy" / "layers.py").exists()
    assert outcome.written == 2 and outcome.missing_mirrors == ["me/absent"]
    assert len(outcome.bad_files) == 1 and outcome.bad_files[0].startswith("me/toy:layers.py")
    assert not outcome.ok


@pytest.fixture
def served_mnist(monkeypatch, tmp_path: Path) -> Path:
    """MNIST's downloads served by the stand-in (restored afterwards); a folder to read them into."""
    monkeypatch.delenv(mnist.MAX_BATCHES_VARIABLE, raising=False)
    monkeypatch.setattr(urllib.request, "urlretrieve", urllib.request.urlretrieve)
    mnist.serve_downloads()
    return tmp_path


def test_mnist_stand_in_has_the_original_shapes_and_batching(served_mnist: Path):
    data = mnist.read_data_sets(str(served_mnist / "MNIST_data"), one_hot=True)
    assert sorted(os.listdir(served_mnist / "MNIST_data")) == sorted(mnist.FILE_NAMES)  # downloaded there
    assert data.train.images.shape == (1000, 784) and data.train.images.dtype == np.float32
    assert data.train.labels.shape == (1000, 10) and data.validation.num_examples == 5000
    assert 0.0 <= data.test.images.min() and data.test.images.max() <= 1.0
    again = mnist.read_data_sets(str(served_mnist / "elsewhere"), one_hot=True)
    np.testing.assert_array_equal(data.test.images, again.test.images)  # seeded: same data every time
    sizes = [len(data.train.next_batch(300)[0]) for _ in range(4)]  # wraps into the second epoch
    assert sizes == [300] * 4 and data.train.epochs_completed == 1
    unflat = mnist.read_data_sets(str(served_mnist / "MNIST_data"), reshape=False, validation_size=0)
    assert unflat.train.images.shape == (6000, 28, 28, 1) and unflat.train.labels.dtype == np.uint8


def test_mnist_stand_in_reseeds_numpy_as_the_original(served_mnist: Path, monkeypatch):
    mnist.read_data_sets(str(served_mnist), seed=5)
    assert np.random.rand() == np.random.RandomState(5).rand()
    monkeypatch.setattr(np.random, "seed", np.random.seed)
    mnist.fixed_entropy()
    mnist.read_data_sets(str(served_mnist))  # no seed anywhere: the original re-seeded from the system
    assert np.random.rand() == np.random.RandomState(mnist.ENTROPY_SEED).rand()


def test_batch_budget_ends_the_program_cleanly(served_mnist: Path, monkeypatch):
    monkeypatch.setenv(mnist.MAX_BATCHES_VARIABLE, "2")
    monkeypatch.setattr(mnist.BatchBudget, "served", 0)
    data = mnist.read_data_sets(str(served_mnist))
    data.train.next_batch(10)
    data.test.next_batch(10)
    with pytest.raises(SystemExit) as stop:
        data.train.next_batch(10)
    assert stop.value.code == 0


def test_batch_budget_covers_the_migrated_loader_class(monkeypatch):
    monkeypatch.setenv(mnist.MAX_BATCHES_VARIABLE, "1")
    monkeypatch.setattr(mnist.BatchBudget, "served", 0)
    monkeypatch.setattr(builtins, "__build_class__", builtins.__build_class__)
    mnist.budget_migrated_loader()

    class MnistDataSet:
        def next_batch(self, batch_size):
            return batch_size

    assert MnistDataSet().next_batch(3) == 3
    with pytest.raises(SystemExit):
        MnistDataSet().next_batch(3)


def test_alias_hook_serves_stand_in_modules_under_other_names(monkeypatch):
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    hook.install({"toy_corpus_pkg.tutorials.input_data": "corpus_stand_ins.mnist"})
    module = importlib.import_module("toy_corpus_pkg.tutorials.input_data")
    assert module.read_data_sets is mnist.read_data_sets
    for name in ("toy_corpus_pkg.tutorials.input_data", "toy_corpus_pkg.tutorials", "toy_corpus_pkg"):
        sys.modules.pop(name, None)


def test_script_relative_folders_resolve_against_the_script_folder(tmp_path: Path, monkeypatch):
    (tmp_path / "pkg_corpus_toy").mkdir()
    (tmp_path / "pkg_corpus_toy" / "__init__.py").write_text("VALUE = 7\n")
    (tmp_path / "tests").mkdir()
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "tests")] + sys.path)
    hook.install_script_relative([".."])
    assert importlib.import_module("pkg_corpus_toy").VALUE == 7
    sys.modules.pop("pkg_corpus_toy", None)


def test_activate_writes_working_directory_files_once(tmp_path: Path):
    activate(["glove"], str(tmp_path))
    (archive_path,) = tmp_path.iterdir()
    with zipfile.ZipFile(archive_path) as archive:
        lines = archive.read("glove.840B.300d.txt").decode().splitlines()
    vectors = {line.split()[0]: line.split()[1:] for line in lines}
    assert "Seven" in vectors and len(vectors["Seven"]) == 300
    archive_path.write_bytes(b"kept")
    activate(["glove"], str(tmp_path))
    assert archive_path.read_bytes() == b"kept"


def test_graph_mode_names_ignore_comments_and_strings():
    assert graph_mode_names(PROGRAM) == ["Session", "feed_dict", "placeholder"]
    assert graph_mode_names("# tf.Session\nprint('placeholder')\n") == []


def test_imported_modules_list_what_a_file_may_import_from_its_repository():
    assert imported_modules(PROGRAM) == ["helpers", "helpers.util", "tensorflow"]
    assert imported_modules("from . import x\nimport a.b as c\n") == ["a.b"]
    assert imported_modules("print 'python 2'\n") == []


def _static(path: str, level: str, kind: str = "module", imports=()) -> dict:
    return {"repo": "me/toy", "path": path, "level": level, "kind": kind, "imports": list(imports)}


def test_main_scripts_importing_a_module_left_as_tf1_code_are_counted_by_level():
    records = [_static("src/model.py", "compat"), _static("src/util.py", "none"), _static("lib/net.py", "wrapped"),
               _static("src/train.py", "wrapped", "main", ["model", "tensorflow"]),  # next to the script
               _static("run.py", "compat", "main", ["lib.net"]),  # from the repository's root
               _static("src/eval.py", "compat", "main", ["util"]),  # a module with no TensorFlow code
               _static("src/export.py", "compat", "main", ["net"]),  # not on the script's path
               _static("src/serve.py", "tf2", "main", ["model"])]  # converted: not counted
    counted = summary.graph_modules_imported(records)
    assert counted == {"main_scripts": 2, "by_level": {"wrapped": 1, "compat": 1}}


def test_refusals_are_grouped_by_code_and_normalised_message():
    finding = {"code": "TFM201", "fixed": False, "line": 3, "message": "minimize(var_list=...): `theta_D` at line 12"}
    other = dict(finding, message="minimize(var_list=...): `theta_G` at line 40")
    records = [{"repo": "me/toy", "path": "a.py", "findings": [finding, other, dict(finding, fixed=True)]}]
    groups = summary.refusal_reasons(records)
    assert len(groups) == 1 and groups[0]["count"] == 2 and groups[0]["example"] == "me/toy:a.py:3"


def _run(verdict: str, legacy_s: float, migrated_s: float, speedup: float | None, basis: str) -> dict:
    return {"legacy": {"status": "ok", "seconds": legacy_s}, "migrated": {"status": "ok", "seconds": migrated_s},
            "verify": {"verdict": verdict, "speed": {"speedup": speedup, "basis": basis}}}


def test_speed_of_equivalent_counts_per_step_and_wall_ratios_of_equivalent_programs_only():
    steady = "steady-state step time"
    runs = [_run("equivalent", 10.0, 8.0, 1.5, steady),
            _run("equivalent", 10.0, 12.5, 0.5, steady + " (indicative only: under 20 steady steps or 1 s on a side)"),
            _run("equivalent", 6.0, 6.0, 0.9, "script wall time"),  # no step site: not a per-step ratio
            _run("mismatch", 10.0, 1.0, 9.0, steady)]
    speed = summary.speed_of_equivalent(runs)
    assert speed["equivalent"] == 3
    assert speed["per_step"] == {"measured": 2, "at_least_1x": 1, "median": 1.0, "indicative": 1}
    assert speed["wall"] == {"measured": 3, "at_least_1x": 2, "median": 1.0}


def test_manifest_file_is_consistent():
    entries = materialise.load_manifest()
    keys = [(e["repo"], e["path"]) for e in entries]
    assert len(keys) == len(set(keys)) and len(entries) >= 150
    runnable = [e for e in entries if e.get("runs")]
    assert sum(len(e["runs"]) for e in runnable) >= 40 and all(e["kind"] == "main" for e in runnable)
    ids = [run["id"] for e in runnable for run in e["runs"]]
    assert len(ids) == len(set(ids))
    assert json.loads(json.dumps(entries)) == entries


def test_run_budget_ends_the_program_at_the_same_step(tmp_path: Path, monkeypatch):
    (tmp_path / "fake_tf_session_corpus.py").write_text(
        "class BaseSession:\n    def run(self, fetches):\n        return fetches\n")
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    budget = run_budget.Budget(2)
    sys.meta_path.insert(0, run_budget.PostImportPatcher(
        {"fake_tf_session_corpus": lambda module: run_budget.patch_session(module, budget)}))
    session = importlib.import_module("fake_tf_session_corpus").BaseSession()
    assert session.run(1) == 1 and session.run(2) == 2
    with pytest.raises(SystemExit) as stop:
        session.run(3)
    assert stop.value.code == 0 and budget.taken == 2
    sys.modules.pop("fake_tf_session_corpus", None)


def test_run_budget_counts_only_the_harness_calls_that_forward_the_program(tmp_path: Path):
    harness = tmp_path / "migrate" / "harness"
    harness.mkdir(parents=True)
    source = "def recorded_run(run):\n    return run()\n\ndef capture_weights(run):\n    return run()\n"
    namespace: dict = {}
    exec(compile(source, str(harness / "legacy_side.py"), "exec"), namespace)
    budget = run_budget.Budget(1)
    step = run_budget.counted(lambda: "ran", budget)
    assert namespace["capture_weights"](step) == "ran" and budget.taken == 0
    assert namespace["recorded_run"](step) == "ran" and budget.taken == 1
    with pytest.raises(SystemExit):
        namespace["recorded_run"](step)


class FakeOperation:
    def __init__(self, op_type, control_inputs=()):
        self.type, self.control_inputs = op_type, list(control_inputs)


def test_run_budget_does_not_count_runs_that_only_initialise_variables():
    budget = run_budget.Budget(1)
    run = run_budget.counted(lambda session, fetches: fetches, budget, steps=run_budget.run_steps)
    init = FakeOperation("NoOp", [FakeOperation("Assign"), FakeOperation("NoOp", [FakeOperation("AssignVariableOp")])])
    assert run(None, init) is init and run(None, [init]) == [init] and budget.taken == 0
    train = FakeOperation("NoOp", [FakeOperation("ApplyAdam")])
    assert run(None, fetches=train) is train and budget.taken == 1
    with pytest.raises(SystemExit):
        run(None, [train, init])


def test_run_budget_counts_a_merged_step_function_once_per_step_function_it_runs(monkeypatch):
    monkeypatch.setenv(run_budget.MERGED_STEPS_VARIABLE, "d_step_and_g_step=2,compute_a_and_b=2")
    merged = run_budget.merged_steps_from_environment()
    assert merged == {"d_step_and_g_step": 2, "compute_a_and_b": 2}

    def d_step_and_g_step():
        return "both"

    budget = run_budget.Budget(3)
    call = run_budget.counted(lambda function: function(), budget,
                              steps=lambda args, kwargs: merged.get(args[0].__name__, 1))
    assert call(d_step_and_g_step) == "both" and budget.taken == 2
    with pytest.raises(SystemExit):
        call(d_step_and_g_step)  # a third and a fourth step: past the budget before it runs
    assert budget.taken == 2


def test_cross_file_probe_writes_repository_modules_in_front_of_the_script(tmp_path):
    """benchmarks/cross_file_probe.py: the script's imports of its repository's modules go, `module.name`
    reads as `name`, and the modules' own `__main__` blocks and future imports are left out."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import cross_file_probe

    module = "from __future__ import print_function\nimport tensorflow as tf\n\ndef dense(x):\n    return x\n\n" \
             "if __name__ == '__main__':\n    print(dense(1))\n"
    script = "import tensorflow as tf\nimport model as m\nfrom helpers import util\n\nprint(m.dense(util.ones()))\n"
    assert cross_file_probe.module_body(module) == "import tensorflow as tf\n\ndef dense(x):\n    return x\n\n"
    body = cross_file_probe.script_body(script, {"model", "helpers.util"})
    assert body == "import tensorflow as tf\n\nprint(dense(ones()))\n"

    repo = tmp_path / "owner+repo"
    (repo / "helpers").mkdir(parents=True)
    (repo / "model.py").write_text(module)
    (repo / "helpers" / "util.py").write_text(UTIL)
    (repo / "train.py").write_text(PROGRAM)
    record = {"repo": "owner/repo", "path": "train.py", "level": "compat", "kind": "main",
              "imports": ["helpers", "helpers.util", "tensorflow"]}
    probe = cross_file_probe.probe(record, str(tmp_path))
    assert probe["modules"] == ["helpers.util"]
    assert probe["after"] == "tf2", probe
    assert sorted(os.listdir(repo)) == ["helpers", "model.py", "train.py"]  # the inlined program is removed
