"""Notebooks: all code cells are migrated together (a later cell uses names an earlier one imported),
then split back into their cells. Cell boundaries, IPython magics and shell lines are masked as
marks during the rewrite and restored after; a mark moved or lost fails the notebook rather than
misplace or drop a line. Outputs, metadata and markdown cells are kept as they are."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import nbformat

from migrate.findings import FileResult

# A cell's mark is a statement, not a comment: a comment belongs to the statement after it and goes
# when a rewrite removes that statement (`init = tf.global_variables_initializer()` opening a cell).
_CELL_MARK = '"<tf-migrate cell {}>"'
_CELL_MARK_RE = re.compile(r'^"<tf-migrate cell (\d+)>"\n', re.MULTILINE)
_MAGIC_RE = re.compile(r"^(\s*)([%!?].*|\w+\s*=\s*[%!].*)$")
# At the top level a magic's mark is a statement too; in a block, a comment (a statement could end
# the block early).
_TOP_LEVEL_MAGIC_MARK = '"<tf-migrate magic {}>"'
_NESTED_MAGIC_MARK = "# <tf-migrate magic {}>"
_MAGIC_MARK_RE = re.compile(r'"<tf-migrate magic (\d+)>"|# <tf-migrate magic (\d+)>')


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
                       reason="the rewrite moved code across notebook cells or lost a magic line; left untouched")
    new_cells = {i: _edged_like(cells[i], source) for i, source in new_cells.items()}
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
            mark = _NESTED_MAGIC_MARK if match.group(1) else _TOP_LEVEL_MAGIC_MARK
            lines.append(match.group(1) + mark.format(len(magics)))
            magics.append(match.group(2))
        else:
            lines.append(line)
    return "\n".join(lines)


def _split(code: str, magics: list[str], expected: set[int]) -> dict[int, str] | None:
    """Cell sources from the migrated text, or None if cell or magic markers were moved or lost."""
    parts = _CELL_MARK_RE.split(code)
    if parts[0].strip():
        return None
    indices = [int(i) for i in parts[1::2]]
    if indices != sorted(expected):
        return None
    bodies = [body[:-1] if body.endswith("\n") else body for body in parts[2::2]]
    kept_magics = [_magic_number(match) for body in bodies for match in _MAGIC_MARK_RE.finditer(body)]
    if kept_magics != list(range(len(magics))):
        return None
    return {index: _MAGIC_MARK_RE.sub(lambda match: magics[_magic_number(match)], body)
            for index, body in zip(indices, bodies)}


def _magic_number(match: re.Match) -> int:
    return int(match.group(1) or match.group(2))


def _edged_like(original: str, migrated: str) -> str:
    """`migrated` with the blank lines at its start and end that `original` had (a cell's removed
    first or last statement leaves the blank line that separated it)."""
    body = migrated.strip("\n")
    if not body:
        return body
    return original[:len(original) - len(original.lstrip("\n"))] + body + original[len(original.rstrip("\n")):]


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
