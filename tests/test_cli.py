"""The real `tf-migrate` command in a subprocess: exit codes, stdout/stderr split, nothing written by
`diff`, atomic writes that keep modes, git guard, --out trees, reports and configuration."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TF1_SOURCE = """import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
total = tf.reduce_sum(x, keep_dims=True)
with tf.Session() as sess:
    print(sess.run(total, feed_dict={x: [[1.0, 2.0, 3.0]]}))
"""
TF2_SOURCE = "import tensorflow as tf\n\nprint(tf.reduce_sum(tf.ones([2])))\n"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "migrate", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode)
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(TF1_SOURCE)
    (tmp_path / "modern.py").write_text(TF2_SOURCE)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    return tmp_path


def test_diff_shows_changes_writes_nothing_and_exits_1(project: Path) -> None:
    before = snapshot(project)
    done = run_cli("diff", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    assert "--- a/./train.py" in done.stdout and "+++ b/./train.py" in done.stdout
    assert "modern.py" not in done.stdout
    assert "would change" in done.stderr
    assert snapshot(project) == before


def test_diff_exits_0_when_nothing_would_change(project: Path) -> None:
    done = run_cli("diff", "modern.py", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_usage_errors_exit_2(project: Path) -> None:
    assert run_cli("diff", "missing.py", cwd=project).returncode == 2
    assert run_cli("diff", "train.py", "--report", "out.txt", cwd=project).returncode == 2
    assert run_cli("frobnicate", cwd=project).returncode == 2


def test_json_report_schema(project: Path) -> None:
    run_cli("diff", ".", "--report", "report.json", cwd=project)
    report = json.loads((project / "report.json").read_text())
    files = {Path(f["path"]).name: f for f in report["files"]}
    assert files["train.py"]["status"] == "changed"
    assert files["modern.py"]["status"] == "unchanged" and files["modern.py"]["level"] == "tf2"
    for entry in report["files"]:
        assert set(entry) >= {"path", "status", "reason", "level", "findings"}
        for finding in entry["findings"]:
            assert set(finding) == {"code", "line", "col", "severity", "message", "fixed"}
    assert report["totals"]["files"] == 2 and report["totals"]["changed"] == 1


def test_markdown_report(project: Path) -> None:
    run_cli("diff", ".", "--report", "report.md", cwd=project)
    text = (project / "report.md").read_text()
    assert text.startswith("# tf-migrate diff report") and "`./train.py` | changed" in text


def test_apply_in_place_is_atomic_and_keeps_mode(project: Path) -> None:
    target = project / "train.py"
    target.chmod(0o750)
    done = run_cli("apply", "train.py", cwd=project)
    assert done.returncode == 0, done.stderr
    assert target.read_text() != TF1_SOURCE
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert not list(project.glob(".tf-migrate-*"))
    assert run_cli("diff", "train.py", cwd=project).returncode == 0, "a second run must change nothing"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def test_apply_refuses_uncommitted_changes_unless_forced(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "train.py")
    git(project, "commit", "-qm", "init")
    edited = TF1_SOURCE + "# local edit\n"
    (project / "train.py").write_text(edited)
    done = run_cli("apply", "train.py", cwd=project)
    assert done.returncode == 1
    assert "uncommitted changes" in done.stderr
    assert (project / "train.py").read_text() == edited
    assert run_cli("apply", "train.py", "--force", cwd=project).returncode == 0
    assert (project / "train.py").read_text() != edited


def test_apply_refuses_untracked_file_in_git_repo(project: Path) -> None:
    git(project, "init", "-q")
    done = run_cli("apply", "train.py", cwd=project)
    assert done.returncode == 1 and "not tracked by git" in done.stderr
    assert (project / "train.py").read_text() == TF1_SOURCE


def test_apply_out_writes_migrated_tree_and_leaves_input_alone(project: Path, tmp_path_factory) -> None:
    out = tmp_path_factory.mktemp("out") / "migrated"
    before = snapshot(project)
    done = run_cli("apply", ".", "--out", str(out), cwd=project)
    assert done.returncode == 0, done.stderr
    assert snapshot(project) == before
    assert (out / "data.csv").read_text() == "a,b\n1,2\n"
    assert (out / "modern.py").read_text() == TF2_SOURCE
    assert (out / "train.py").read_text() != TF1_SOURCE
    again = run_cli("apply", ".", "--out", str(out), cwd=project)
    assert again.returncode == 2 and "not empty" in again.stderr


def test_jobs_give_the_same_output(project: Path) -> None:
    for index in range(6):
        (project / f"copy{index}.py").write_text(TF1_SOURCE)
    one = run_cli("diff", ".", "-j", "1", cwd=project)
    two = run_cli("diff", ".", "-j", "2", cwd=project)
    assert one.stdout == two.stdout and one.returncode == two.returncode == 1


def test_config_in_pyproject_and_flags_win(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.tf-migrate]\nselect = ["TFM999"]\n')
    assert run_cli("diff", "train.py", cwd=project).returncode == 0
    assert run_cli("diff", "train.py", "--select", "TFM", cwd=project).returncode == 1
    (project / "pyproject.toml").write_text('[tool.tf-migrate]\nbogus = 1\n')
    done = run_cli("diff", "train.py", cwd=project)
    assert done.returncode == 2 and "bogus" in done.stderr


def test_list_shows_every_transform(project: Path) -> None:
    from transforms import all_transforms

    done = run_cli("list", cwd=project)
    assert done.returncode == 0
    for transform in all_transforms():
        assert transform.CODE in done.stdout


def test_internal_error_in_one_file_exits_2_and_others_still_run(project: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    import migrate.runner as runner
    from migrate.cli import cli

    real = runner.transform_module

    def broken_for_train(module, options, filename="<string>"):
        if filename.endswith("train.py"):
            raise RuntimeError("boom")
        return real(module, options, filename)

    monkeypatch.setattr(runner, "transform_module", broken_for_train)
    (project / "other.py").write_text(TF1_SOURCE)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["diff", "train.py", "other.py"])
    assert result.exit_code == 2
    assert "internal error: RuntimeError: boom" in result.output
    assert "+++ b/other.py" in result.output
    assert (project / "train.py").read_text() == TF1_SOURCE
