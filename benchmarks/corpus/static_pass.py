"""The static part of the corpus measure: migrate every file (nothing runs) and look at the result.

One record per manifest entry: the runner's status, level, reason and findings, and, on the migrated
text (the original when nothing changed), which of the TF1 graph-mode names `Session`,
`InteractiveSession`, `placeholder` and `feed_dict` are still used as code (names in code, not in
comments or strings). Records are cached by (blob sha, tool fingerprint), so a second run, or a run
that was stopped, only migrates what changed; the fingerprint covers every source file of
`migrate/` and `transforms/`, so any change to the tool invalidates the cache.
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import re
import time
import tokenize

GRAPH_MODE_NAMES = ("Session", "InteractiveSession", "placeholder", "feed_dict")
_GRAPH_MODE_RE = re.compile(r"\b(%s)\b" % "|".join(GRAPH_MODE_NAMES))


def tool_fingerprint(project_root: str) -> str:
    """A hash of the tool's code and tables: the cache is valid only for the same tool."""
    digest = hashlib.sha1()
    for package in ("migrate", "transforms"):
        for folder, dirs, files in sorted(os.walk(os.path.join(project_root, package))):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".json", ".csv", ".txt")):
                    path = os.path.join(folder, name)
                    digest.update(os.path.relpath(path, project_root).encode())
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
    return digest.hexdigest()[:16]


def code_of(path: str, data: bytes) -> str:
    """Python source of a file; a notebook's code cells joined, IPython magics and shell lines dropped."""
    text = data.decode("utf-8", "replace")
    if not path.endswith(".ipynb"):
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return ""
    sources = ["".join(cell.get("source", "")) for cell in cells if cell.get("cell_type") == "code"]
    lines = "\n".join(sources).splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def graph_mode_names(source: str) -> list[str]:
    """Which GRAPH_MODE_NAMES occur as names in the code (tokens; raw text if it does not tokenize)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        found = {token.string for token in tokens if token.type == tokenize.NAME and token.string in GRAPH_MODE_NAMES}
    except (tokenize.TokenError, IndentationError, SyntaxError):
        found = set(_GRAPH_MODE_RE.findall(source))
    return sorted(found)


def imported_modules(source: str) -> list[str]:
    """The dotted names a file imports (`import a.b`, `from a import b` gives `a` and `a.b`): what it
    may import from its own repository. Empty for code that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return sorted(found)


def entry_path(corpus_dir: str, entry: dict) -> str:
    return os.path.join(corpus_dir, entry["repo"].replace("/", "+"), entry["path"])


def migrate_entry(corpus_dir: str, entry: dict) -> dict:
    """The static record of one manifest entry (materialised under `corpus_dir`)."""
    from migrate.runner import migrate_path  # the tool of the PYTHONPATH / checkout this runs from

    path = entry_path(corpus_dir, entry)
    started = time.perf_counter()
    result = migrate_path(path)
    seconds = time.perf_counter() - started
    with open(path, "rb") as handle:
        original = handle.read()
    migrated = result.new_bytes if result.new_bytes is not None else (
        result.new_source.encode("utf-8") if result.new_source is not None else original)
    return {
        "repo": entry["repo"], "path": entry["path"], "blob": entry["blob"], "kind": entry["kind"],
        "status": result.status, "level": result.level, "reason": result.reason,
        "findings": [finding.to_dict() for finding in result.findings],
        "graph_mode_before": graph_mode_names(code_of(path, original)),
        "graph_mode_after": graph_mode_names(code_of(path, migrated)),
        "imports": imported_modules(code_of(path, original)),
        "seconds": round(seconds, 3),
    }


class Cache:
    """Static records on disk, one JSON line each, keyed by (blob, tool fingerprint)."""

    def __init__(self, path: str, fingerprint: str) -> None:
        self.path, self.fingerprint = path, fingerprint
        self.records: dict[str, dict] = {}
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    record = json.loads(line)
                    if record.get("tool") == fingerprint:
                        self.records[self.key(record)] = record

    @staticmethod
    def key(item: dict) -> str:
        return f'{item["repo"]}:{item["path"]}:{item["blob"]}'

    def get(self, entry: dict) -> dict | None:
        return self.records.get(self.key(entry))

    def add(self, record: dict) -> None:
        record = dict(record, tool=self.fingerprint)
        self.records[self.key(record)] = record
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
