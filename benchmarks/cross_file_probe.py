"""How far file boundaries hold the corpus's main scripts back: each main script short of `tf2` that
imports a module of its own repository is migrated again with those modules written in front of it,
as if the repository's graph code were one file. Nothing is written to the corpus.

The inlined program is an experiment, not a migration anyone would keep: the modules' `__main__`
blocks and `from __future__` lines are dropped, the script's imports of them are removed and
`module.name` becomes `name`. Its level says what per-file conversion could reach if the tool saw the
whole graph; its first TFM201 refusal says what blocks next. Notebooks are left out (their imports
run from the notebook server's folder, not the repository's).

    python benchmarks/cross_file_probe.py --records benchmarks/results/corpus-cpu-<label>.json \\
        [--corpus .corpus] [--out benchmarks/results] [--label cpu]
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import tempfile
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "corpus"))

from summary import _module_files, normalise  # noqa: E402

from migrate.runner import migrate_path  # noqa: E402

LEVELS = ("tf2", "wrapped", "compat", "tf1", "none")


def repository_modules(record: dict, repo_dir: str) -> dict[str, str]:
    """The imported names of a script that are modules of its repository: {import name: file path}."""
    found = {}
    for name in record.get("imports", []):
        for module in _module_files(record["path"], name):
            path = os.path.join(repo_dir, module + ".py")
            if os.path.isfile(path):
                found.setdefault(name, path)
    return found


def without_lines(source: str, nodes: list[ast.stmt]) -> str:
    dropped = {line for node in nodes for line in range(node.lineno - 1, node.end_lineno)}
    return "".join(line for number, line in enumerate(source.splitlines(True)) if number not in dropped)


def _is_main_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test)


def _is_future_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def module_body(source: str) -> str:
    """A module's code as written in front of the script: without its `__main__` block or future imports."""
    tree = ast.parse(source)
    return without_lines(source, [node for node in tree.body if _is_main_block(node) or _is_future_import(node)])


def script_body(source: str, modules: set[str]) -> str:
    """The script without its imports of `modules` or of `__future__`; `alias.name` read as `name`."""
    tree = ast.parse(source)
    dropped, prefixes = [], set()
    for node in tree.body:
        if _is_future_import(node):
            dropped.append(node)
        elif isinstance(node, ast.Import) and any(alias.name in modules for alias in node.names):
            dropped.append(node)
            prefixes |= {alias.asname or alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module:
            submodules = {alias.asname or alias.name for alias in node.names
                          if f"{node.module}.{alias.name}" in modules}
            if node.module in modules or submodules:
                dropped.append(node)
                prefixes |= submodules
    body = without_lines(source, dropped)
    for prefix in sorted(prefixes, key=len, reverse=True):
        body = re.sub(r"(?<![\w.])" + re.escape(prefix) + r"\.", "", body)
    return body


def first_refusal(findings) -> str:
    for finding in findings:
        if finding.code == "TFM201" and not finding.fixed:
            return normalise(finding.message).replace("not converted to TF2 functions: ", "")
    return ""


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def probe(record: dict, corpus_dir: str) -> dict | None:
    repo_dir = os.path.join(corpus_dir, record["repo"].replace("/", "+"))
    modules = repository_modules(record, repo_dir)
    if not modules:
        return None
    script = _read(os.path.join(repo_dir, record["path"]))
    try:
        parts = [module_body(_read(path)) for path in dict.fromkeys(modules.values())]
        parts.append(script_body(script, set(modules)))
    except SyntaxError as error:
        return {"script": f"{record['repo']}:{record['path']}", "before": record["level"], "after": "skipped",
                "refusal": f"does not parse: {error.msg}"}
    folder = os.path.join(repo_dir, os.path.dirname(record["path"]))
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir=folder, delete=False) as handle:
        handle.write("\n".join(parts))
    try:
        result = migrate_path(handle.name)
    finally:
        os.remove(handle.name)
    return {"script": f"{record['repo']}:{record['path']}", "modules": sorted(modules),
            "before": record["level"], "after": result.level, "refusal": first_refusal(result.findings)}


def summary(probes: list[dict]) -> dict:
    moves = Counter((p["before"], p["after"]) for p in probes)
    refusals = Counter(p["refusal"] for p in probes if p["after"] != "tf2")
    return {"scripts": len(probes),
            "before": dict(Counter(p["before"] for p in probes)),
            "after": dict(Counter(p["after"] for p in probes)),
            "moves": {f"{a} -> {b}": n for (a, b), n in moves.most_common()},
            "first_refusals": [{"message": m or "(no TFM201 refusal)", "count": n} for m, n in refusals.most_common()]}


def markdown(report: dict) -> str:
    s = report["summary"]
    lines = [f"# Cross-file probe: {report['label']} ({report['records']})", "",
             f"{s['scripts']} main scripts short of `tf2` import a module of their repository (notebooks left out).",
             "Migrated with those modules written in front of them:", "",
             "| level | as migrated | modules inlined |", "|---|---|---|"]
    lines += [f"| {level} | {s['before'].get(level, 0)} | {s['after'].get(level, 0)} |"
              for level in LEVELS + ("skipped",)]
    lines += ["", "Moves: " + ", ".join(f"{k}: {v}" for k, v in s["moves"].items()), "",
              "First TFM201 refusal of the inlined programs short of `tf2`:", "", "| count | refusal |", "|---|---|"]
    lines += [f"| {r['count']} | {r['message']} |" for r in s["first_refusals"]]
    lines += ["", "| script | as migrated | inlined | first refusal, inlined |", "|---|---|---|---|"]
    lines += [f"| {p['script']} | {p['before']} | {p['after']} | {p['refusal']} |" for p in report["probes"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", required=True, help="a static pass's JSON (benchmarks/corpus.py)")
    parser.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"), help="where the files are materialised")
    parser.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    parser.add_argument("--label", default="cpu")
    args = parser.parse_args(argv)
    with open(args.records) as handle:
        records = json.load(handle)["files"]
    candidates = [r for r in records if r["kind"] == "main" and r["status"] not in ("skipped", "failed")
                  and r["level"] != "tf2" and not r["path"].endswith(".ipynb")]
    probes = [p for p in (probe(record, args.corpus) for record in candidates) if p]
    report = {"label": args.label, "records": os.path.basename(args.records), "summary": summary(probes),
              "probes": probes}
    base = os.path.join(args.out, f"cross-file-probe-{args.label}")
    with open(base + ".json", "w") as handle:
        json.dump(report, handle, indent=1)
    with open(base + ".md", "w") as handle:
        handle.write(markdown(report))
    print(json.dumps(report["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
