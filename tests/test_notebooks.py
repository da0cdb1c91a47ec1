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


def write_cells(path: Path, sources: list[str]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path.write_text(nbformat.writes(notebook))


def test_cells_keep_their_code_when_a_rewrite_removes_their_first_statement(tmp_path: Path) -> None:
    """The initialiser that opens the session's cell is removed with the session; the cell, its
    magic and the rest of its code stay where they were."""
    path = tmp_path / "nb.ipynb"
    write_cells(path, [
        "import numpy as np\nimport tensorflow as tf",
        "%matplotlib inline\nx = tf.placeholder(tf.float32, [None, 2])\nw = tf.Variable(tf.ones([2, 1]))\n"
        "y = tf.matmul(x, w)",
        "init = tf.global_variables_initializer()\n\n# three rows\nrows = 3\nwith tf.Session() as sess:\n"
        "    sess.run(init)\n    print(sess.run(y, feed_dict={x: np.ones([rows, 2])}))",
    ])
    done = run_cli("apply", "nb.ipynb", "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cells = [cell.source for cell in nbformat.read(str(path), as_version=4).cells]
    assert cells[1].startswith("%matplotlib inline\n") and "@tf.function" in cells[1]
    assert cells[2].startswith("# three rows\nrows = 3\n") and "print(" in cells[2]
    assert not any("Session" in source or "tf-migrate" in source for source in cells)


def test_a_lost_magic_line_fails_the_notebook_instead_of_dropping_it(tmp_path: Path) -> None:
    from migrate import notebook
    magics: list[str] = []
    masked = notebook._mask("    %time run()", magics)
    assert notebook._split(f'"<tf-migrate cell 0>"\n{masked}\n', magics, {0}) == {0: "    %time run()"}
    assert notebook._split('"<tf-migrate cell 0>"\n    pass\n', magics, {0}) is None


def test_a_graph_wrapped_in_a_notebook_stays_in_its_cells(tmp_path: Path) -> None:
    """TFM203 wraps a graph built in one cell and run from the next; a graph built across cells (one
    function cannot hold it) stays on sessions, with the reason, and every cell keeps its code."""
    from migrate.runner import migrate_path

    graph = ("x = tf.placeholder(tf.float32, [None, 2])\nw = tf.Variable(tf.ones([2, 1]))\n"
             "tf.add_to_collection('weights', w)\ny = tf.matmul(x, w)")
    runs = "sess.run(tf.global_variables_initializer())\nprint(sess.run(y, feed_dict={x: np.ones([3, 2])}))"
    one_cell, across_cells = tmp_path / "one.ipynb", tmp_path / "across.ipynb"
    write_cells(one_cell, ["import numpy as np\nimport tensorflow as tf", graph, "sess = tf.Session()\n" + runs])
    first, rest = graph.split("\ntf.add_to_collection")
    write_cells(across_cells, ["import numpy as np\nimport tensorflow as tf\nsess = tf.InteractiveSession()",
                               first, "tf.add_to_collection" + rest, runs])
    wrapped, refused = migrate_path(str(one_cell)), migrate_path(str(across_cells))
    assert wrapped.status == "changed" and wrapped.level == "wrapped"
    cells = [cell.source for cell in nbformat.reads(wrapped.new_bytes.decode(), as_version=4).cells]
    assert "def build_graph():" in cells[1] and "run_y(np.ones([3, 2]))" in cells[2]
    assert refused.status == "changed" and refused.level == "compat"
    assert any(f.code == "TFM203" and "across notebook cells" in f.message for f in refused.findings)
