"""Notebooks: all code cells are migrated together (a later cell uses names an earlier one imported),
then split back into their cells. IPython magics and shell lines are masked as comments during the
rewrite and restored after; outputs, metadata and markdown cells are kept as they are."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import nbformat

from migrate.findings import FileResult

_CELL_MARK = "# <tf-migrate cell {}>"
_CELL_MARK_RE = re.compile(r"^# <tf-migrate cell (\d+)>\n", re.MULTILINE)
_MAGIC_RE = re.compile(r"^(\s*)([%!?].*|\w+\s*=\s*[%!].*)$")
_MAGIC_MARK = "# <tf-migrate magic {}>"
_MAGIC_MARK_RE = re.compile(r"# <tf-migrate magic (\d+)>")


def migrate_notebook(path: str, data: bytes, migrate_source: Callable[[str], FileResult]) -> FileResult:
    """Migrate a notebook's code cells as one program with `migrate_source` (the runner's per-text
    migration), then split the result back into the cells."""
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # nbformat raises many kinds; all mean "not a notebook we can trust"
        return FileResult(path, "skipped", reason=f"not a valid notebook ({_first_line(error)}); left untouched")
    cells = _python_cells(notebook)
    magics: list[str] = []
    joined = "".join(_CELL_MARK.format(i) + "\n" + _mask(cells[i], magics) + "\n" for i in sorted(cells))
    result = migrate_source(joined)
    if result.status != "changed":
        return replace(result, old_source=None, new_source=None)
    new_cells = _split(result.new_source, magics, set(cells))
    if new_cells is None:
        return replace(result, status="failed", new_source=None, old_source=None,
                       reason="the rewrite moved code across notebook cells; left untouched")
    changed = [(f"cell {i}", cells[i], new_cells[i]) for i in sorted(cells) if new_cells[i] != cells[i]]
    for index, source in new_cells.items():
        notebook.cells[index].source = source
    new_bytes = nbformat.writes(notebook).encode("utf-8") + b"\n"
    return replace(result, cells=tuple(changed), new_bytes=new_bytes, old_source=None, new_source=None)


def _python_cells(notebook) -> dict[int, str]:
    """Code cells, except whole-cell magics (%%bash, %%writefile...) which are not Python."""
    return {i: cell.source for i, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" and not cell.source.lstrip().startswith("%%")}


def _mask(source: str, magics: list[str]) -> str:
    lines = []
    for line in source.split("\n"):
        match = _MAGIC_RE.match(line)
        if match and not line.lstrip().startswith("#"):
            lines.append(match.group(1) + _MAGIC_MARK.format(len(magics)))
            magics.append(match.group(2))
        else:
            lines.append(line)
    return "\n".join(lines)


def _split(code: str, magics: list[str], expected: set[int]) -> dict[int, str] | None:
    """Cell sources from the migrated text, or None if the cell markers were moved or lost."""
    parts = _CELL_MARK_RE.split(code)
    if parts[0].strip():
        return None
    indices = [int(i) for i in parts[1::2]]
    if indices != sorted(expected):
        return None
    cells = {}
    for index, body in zip(indices, parts[2::2]):
        body = body[:-1] if body.endswith("\n") else body
        cells[index] = _MAGIC_MARK_RE.sub(lambda m: magics[int(m.group(1))], body)
    return cells


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
