"""Notebooks migrate as one program split back into cells: magics and outputs kept, result valid."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat

from tests.test_cli import run_cli, snapshot


def make_notebook(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Training"),
        nbformat.v4.new_code_cell("%matplotlib inline\nimport tensorflow as tf\n!nvidia-smi"),
        nbformat.v4.new_code_cell("%%bash\necho tf.placeholder"),
        nbformat.v4.new_code_cell("x = tf.placeholder(tf.float32, [None, 2])\ns = tf.reduce_sum(x, keep_dims=True)",
                                  outputs=[nbformat.v4.new_output("stream", text="kept\n")]),
    ]
    path.write_text(nbformat.writes(notebook))


def test_notebook_diff_is_per_cell_and_writes_nothing(tmp_path: Path) -> None:
    make_notebook(tmp_path / "nb.ipynb")
    before = snapshot(tmp_path)
    done = run_cli("diff", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "nb.ipynb[cell 3]" in done.stdout
    assert "[cell 2]" not in done.stdout, "a whole-cell magic is not Python and stays as it is"
    assert snapshot(tmp_path) == before


def test_notebook_apply_keeps_magics_outputs_and_validity(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    make_notebook(path)
    done = run_cli("apply", "nb.ipynb", "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[0].source == "# Training"
    assert notebook.cells[1].source.startswith("%matplotlib inline\n") and "!nvidia-smi" in notebook.cells[1].source
    assert notebook.cells[2].source == "%%bash\necho tf.placeholder"
    assert "tf.placeholder" not in notebook.cells[3].source or "compat.v1" in notebook.cells[3].source
    assert notebook.cells[3].outputs[0]["text"] == "kept\n"
    assert json.loads(path.read_text())["nbformat"] == 4
    assert run_cli("diff", "nb.ipynb", cwd=tmp_path).returncode == 0
