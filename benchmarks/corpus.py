"""The corpus measure: migrate the development corpus of real TF1 code, run what can run, verify.

    python benchmarks/corpus.py [--only static|run] [--jobs N] [--timeout S] [--filter TEXT] [--label L]

Materialises the corpus from the git mirrors (benchmarks/corpus/materialise.py), then
  * static: every manifest file through `migrate.runner.migrate_path`: level histogram, main scripts
    free of Session / placeholder / feed_dict, main scripts short of `tf2` that import a module of
    their repository left as TF1 code, findings left for a human grouped by reason (cached per file
    and tool version under .corpus-cache/, so a re-run or a resumed run is fast);
  * run: every runnable program (manifest entries with a recipe): the legacy program on the legacy
    runtime, the migrated one on plain TF 2, and `tf-migrate verify` of the pair
    (benchmarks/corpus/run_pass.py), each with the synthetic stand-in data layer.
Prints the summary and writes `<out>/corpus-<label>-<date>.json` and `.md`. Run it from the checkout
whose tool is measured: it imports `migrate` from there (PYTHONPATH is set for the subprocesses).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from importlib import metadata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_TOOLS = os.path.join(ROOT, "benchmarks", "corpus")
sys.path[:0] = [ROOT, CORPUS_TOOLS]

import run_pass  # noqa: E402
import summary  # noqa: E402
from materialise import load_manifest, materialise  # noqa: E402
from static_pass import Cache, code_of, entry_path, imported_modules, migrate_entry, tool_fingerprint  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("static", "run"), help="one part only (default: both)")
    parser.add_argument("--jobs", type=int, default=2, help="files migrated / programs run at once")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per program run (each side)")
    parser.add_argument("--filter", default="", help="only entries whose repo:path contains this text")
    parser.add_argument("--label", default="cpu", help="name of the measurement, in the output file names")
    parser.add_argument("--mirrors", default="/work/.mirror", help="folder of the fetched git mirrors")
    parser.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"), help="where the files are materialised")
    parser.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    parser.add_argument("--no-verify", action="store_true", help="run the programs but skip tf-migrate verify")
    parser.add_argument("--render-only", metavar="JSON",
                        help="recompute the summaries of an earlier results JSON from its records and rewrite its "
                             ".json and .md (after a change to the summary code); nothing is migrated or run")
    return parser.parse_args(argv)


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")), "")
    info = {"cpu": cpu or platform.processor(), "cores": os.cpu_count(), "python": platform.python_version(),
            "tensorflow": metadata.version("tensorflow")}
    info["description"] = (f"{info['cores']}-core CPU ({info['cpu']}), no GPU, Python {info['python']}, "
                           f"TensorFlow {info['tensorflow']}")
    return info


def _cpuinfo() -> list[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def commit() -> str:
    result = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "migrate", "transforms"],
                           capture_output=True, text=True).stdout.strip()
    return result.stdout.strip() + ("+dirty" if dirty else "")


def static_part(entries: list[dict], corpus_dir: str, jobs: int) -> list[dict]:
    """Static records of all entries: from the cache, the rest migrated `jobs` at a time."""
    cache = Cache(os.path.join(ROOT, ".corpus-cache", "static.jsonl"), tool_fingerprint(ROOT))
    todo = [entry for entry in entries if cache.get(entry) is None]
    print(f"static: {len(entries) - len(todo)} cached, {len(todo)} to migrate", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for number, record in enumerate(pool.map(migrate_entry, [corpus_dir] * len(todo), todo), 1):
            cache.add(record)
            if number % 25 == 0 or number == len(todo):
                print(f"  {number}/{len(todo)} migrated", file=sys.stderr)
    records = [cache.get(entry) for entry in entries]
    for entry, record in zip(entries, records):
        if "imports" not in record:  # cached before records listed them
            with open(entry_path(corpus_dir, entry), "rb") as handle:
                record["imports"] = imported_modules(code_of(entry["path"], handle.read()))
    return records


def run_part(entries: list[dict], corpus_dir: str, jobs: int, timeout_s: float, do_verify: bool) -> list[dict]:
    """Run records of the runnable programs (threads: every run is its own subprocess)."""
    migrated_dir = os.path.join(ROOT, ".corpus-migrated")
    trees = {id(e): run_pass.build_migrated_tree(corpus_dir, migrated_dir, e) for e in entries if e.get("runs")}
    programs = [(entry, recipe) for entry in entries for recipe in entry.get("runs", ())]
    print(f"run: {len(programs)} programs", file=sys.stderr)

    def one(program: tuple[dict, dict]) -> dict:
        entry, recipe = program
        record = run_pass.run_recipe(corpus_dir, entry, recipe, trees[id(entry)], timeout_s, do_verify)
        verdict = (record.get("verify") or {}).get("verdict", "-")
        print(f"  {record['id']}: legacy {record['legacy']['status']}, migrated {record['migrated']['status']}, "
              f"verify {verdict}", file=sys.stderr)
        return record

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, programs))


def write_outputs(report: dict, out: str) -> tuple[str, str]:
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"corpus-{report['label']}-{report['date']}")
    with open(stem + ".json", "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
        handle.write("\n")
    with open(stem + ".md", "w", encoding="utf-8") as handle:
        handle.write(summary.render_markdown(report))
    return stem + ".json", stem + ".md"


def summarise(report: dict) -> dict:
    """The report with its summaries computed from its per-file and per-program records."""
    if "files" in report:
        report["static"] = summary.static_summary(report["files"])
    if "runs" in report:
        report["run"] = summary.run_summary(report["runs"])
    return report


def render_only(path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        report = summarise(json.load(handle))
    json_path, md_path = write_outputs(report, os.path.dirname(os.path.abspath(path)))
    print(summary.render_markdown(report))
    print(f"rewritten: {json_path} and {md_path}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render_only:
        return render_only(args.render_only)
    entries = [e for e in load_manifest() if args.filter in f"{e['repo']}:{e['path']}"]
    outcome = materialise(entries, args.mirrors, args.corpus)
    for repo in outcome.missing_mirrors:
        print(f"missing mirror, its files are left out: {repo} (fetch github:{repo})", file=sys.stderr)
    for bad in outcome.bad_files:
        print(f"not materialised: {bad}", file=sys.stderr)
    missing = set(outcome.missing_mirrors) | {bad.split(":", 1)[0] for bad in outcome.bad_files}
    entries = [e for e in entries if e["repo"] not in missing]
    report = {"label": args.label, "date": datetime.date.today().isoformat(), "machine": machine(),
              "tool": tool_fingerprint(ROOT), "commit": commit(), "filter": args.filter,
              "missing_mirrors": outcome.missing_mirrors, "timing_s": {},
              "settings": {"jobs": args.jobs, "timeout_s": args.timeout, "verify": not args.no_verify},
              "load_average_at_start": [round(load, 1) for load in os.getloadavg()]}
    if args.only in (None, "static"):
        started = time.perf_counter()
        records = static_part(entries, args.corpus, args.jobs)
        report["timing_s"]["static"] = round(time.perf_counter() - started, 1)
        report["files"] = records
    if args.only in (None, "run"):
        started = time.perf_counter()
        runs = run_part(entries, args.corpus, args.jobs, args.timeout, not args.no_verify)
        report["timing_s"]["run"] = round(time.perf_counter() - started, 1)
        report["runs"] = runs
    json_path, md_path = write_outputs(summarise(report), args.out)
    print(summary.render_markdown(report))
    print(f"written: {json_path} and {md_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
