"""Never lose user code: every kind of bad input gets a clear per-file reason and stays byte-identical,
and one bad file never stops the run."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.test_cli import TF1_SOURCE, run_cli, snapshot

BAD_FILES: dict[str, tuple[bytes, str]] = {
    "py2.py": (b"import tensorflow as tf\nprint 'loss', 1\n", "Python 2 syntax (print statement) at line 2"),
    "py2_except.py": (b"import tensorflow as tf\ntry:\n    pass\nexcept ValueError, e:\n    pass\n",
                      "Python 2 syntax ('except X, e' clause) at line 4"),
    "broken.py": (b"import tensorflow as tf\nx = tf.placeholder(\n", "syntax error at line"),
    "latin1.py": ("import tensorflow as tf\nname = 'café'\n".encode("latin-1"), "not valid utf-8"),
    "nul.py": (b"import tensorflow as tf\n\x00\x01", "NUL bytes"),
    "broken.ipynb": (b'{"cells": [', "not a valid notebook"),
    "notnb.ipynb": (b'{"hello": "world"}', "not a valid notebook"),
}


@pytest.fixture
def bad_project(tmp_path: Path) -> Path:
    for name, (data, _) in BAD_FILES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_text(TF1_SOURCE)
    return tmp_path


def test_bad_files_are_reported_and_untouched(bad_project: Path) -> None:
    before = snapshot(bad_project)
    done = run_cli("apply", ".", "--force", "--report", str(bad_project.parent / "r.json"), cwd=bad_project)
    report = json.loads((bad_project.parent / "r.json").read_text())
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    for name, (data, reason) in BAD_FILES.items():
        assert reason in by_name[name]["reason"], by_name[name]
        assert by_name[name]["status"] == "skipped"
        assert (bad_project / name).read_bytes() == data
        assert reason in done.stderr
    assert by_name["good.py"]["status"] == "changed", "one bad file must not stop the run"
    assert {k: v for k, v in snapshot(bad_project).items() if k != "good.py"} == \
           {k: v for k, v in before.items() if k != "good.py"}


def test_declared_encoding_round_trips(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\nimport tensorflow as tf\nname = 'café'\nx = tf.placeholder(tf.float32)\n"
    path = tmp_path / "latin.py"
    path.write_bytes(source.encode("latin-1"))
    done = run_cli("apply", "latin.py", "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "name = 'café'" in path.read_bytes().decode("latin-1")


def test_symlink_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(TF1_SOURCE)
    os.symlink(tmp_path / "real.py", tmp_path / "link.py")
    done = run_cli("apply", "link.py", "--force", cwd=tmp_path)
    assert "symbolic link" in done.stderr
    assert (tmp_path / "real.py").read_text() == TF1_SOURCE
    assert os.path.islink(tmp_path / "link.py")


def test_read_only_file_is_refused_in_place(tmp_path: Path) -> None:
    path = tmp_path / "locked.py"
    path.write_text(TF1_SOURCE)
    path.chmod(0o444)
    done = run_cli("apply", "locked.py", "--force", cwd=tmp_path)
    assert done.returncode == 1 and "read-only" in done.stderr
    assert path.read_text() == TF1_SOURCE and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_huge_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_text(TF1_SOURCE + "#" * 5000 + "\n")
    done = run_cli("diff", "big.py", "--max-bytes", "1000", cwd=tmp_path)
    assert done.returncode == 0 and "over the 1,000-byte limit" in done.stderr


def test_files_without_tensorflow_are_skipped_before_parsing(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("print 'python 2 but no TF'\n")
    done = run_cli("diff", "plain.py", cwd=tmp_path)
    assert done.returncode == 0 and "does not use TensorFlow" in done.stderr
