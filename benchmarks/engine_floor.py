"""Where tf-migrate's per-file time goes, against the floor that libcst itself sets and against
`tf_upgrade_v2`'s own per-file work, all in one process over the same real files.

`benchmarks/throughput.py` times whole runs as a user sees them (start-up, -j workers, the cache).
This one answers a narrower question: how fast could *any* libcst pipeline be? Each file is measured
through the steps every rewrite of ours needs at least once, whatever its analysis:

  * parse        `libcst.parse_module` of the input;
  * positions    `PositionProvider` (line numbers of findings and run sites);
  * codegen      `Module.code` of the rewritten tree;
  * check parse  parsing the output again (the check that it parses, and its second run).

beside `tf_upgrade_v2`'s per-file work (`ASTCodeUpgrader.update_string_pasta`: parse, rename,
print; TensorFlow's import paid once, outside the timing) and tf-migrate's whole per-file pipeline
(`migrate_text`, no cache). Times are process CPU seconds summed over the files; each figure is the
median of --repeats passes, the steps interleaved per pass.

    python benchmarks/engine_floor.py --corpus DIR [--repeats 3] [--jobs 2] [--output FILE]
"""
from __future__ import annotations

import argparse
import io
import platform
import statistics
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def python_sources(corpus: Path) -> list[tuple[str, str]]:
    """(path, text) of the corpus's .py files that libcst parses (the rest are skipped by both tools'
    runs alike: Python 2, syntax errors)."""
    import libcst as cst

    sources = []
    for path in sorted(p for p in corpus.rglob("*.py") if p.is_file() and not p.is_symlink()):
        try:
            text = path.read_text(encoding="utf-8")
            cst.parse_module(text)
        except Exception:
            continue
        sources.append((str(path), text))
    return sources


def cpu_seconds(step, items) -> float:
    start = time.process_time()
    for item in items:
        step(item)
    return time.process_time() - start


def one_pass(sources: list[tuple[str, str]], upgrader) -> dict[str, float]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from migrate.options import Options
    from migrate.runner import migrate_text

    texts = [text for _, text in sources]
    modules: list = []
    times = {"parse": cpu_seconds(lambda text: modules.append(cst.parse_module(text)), texts)}
    times["positions"] = cpu_seconds(
        lambda module: MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider), modules)
    codes: list[str] = []
    times["codegen"] = cpu_seconds(lambda module: codes.append(module.code), modules)
    times["check parse"] = cpu_seconds(cst.parse_module, codes)
    with redirect_stdout(io.StringIO()):
        times["tf_upgrade_v2"] = cpu_seconds(lambda item: upgrader.update_string_pasta(item[1], item[0]), sources)
    options = Options()
    times["tf-migrate"] = cpu_seconds(lambda item: migrate_text(item[0], item[1], options), sources)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="folder of real TF1 code")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2, help="the -j both run-level figures assume")
    parser.add_argument("--output", type=Path, help="also write the report here")
    args = parser.parse_args()

    from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2

    upgrader = ast_edits.ASTCodeUpgrader(tf_upgrade_v2.TFAPIChangeSpec())
    sources = python_sources(args.corpus)
    passes = [one_pass(sources, upgrader) for _ in range(args.repeats)]
    median = {step: statistics.median(p[step] for p in passes) for step in passes[0]}
    report = render(median, sources, args)
    print(report)
    if args.output:
        args.output.write_text(report + "\n", encoding="utf-8")


def render(median: dict[str, float], sources: list, args) -> str:
    files = len(sources)
    size = sum(len(text.encode("utf-8")) for _, text in sources) / 1e6
    per_file = lambda seconds: f"{1000 * seconds / files:6.1f} ms/file"
    floor = median["parse"] + median["positions"] + median["codegen"] + median["check parse"]
    upgrade = median["tf_upgrade_v2"]
    lines = [f"engine floor: {files} .py files ({size:.2f} MB) from {args.corpus}; median of {args.repeats} "
             f"passes; process CPU seconds in one process",
             f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}", ""]
    lines += [f"  {step:<14} {seconds:7.2f} s  {per_file(seconds)}" for step, seconds in median.items()]
    lines += ["",
              f"  libcst floor (parse + positions + codegen + check parse): {floor:.2f} s, {per_file(floor)}",
              f"  tf-migrate pipeline / libcst floor: {median['tf-migrate'] / floor:.1f}x",
              f"  with -j {args.jobs} against tf_upgrade_v2 in one process (the issue's ratio, start-up aside):",
              f"    libcst floor alone: {upgrade / (floor / args.jobs):.2f}x;"
              f" without positions: {upgrade / ((floor - median['positions']) / args.jobs):.2f}x;"
              f" tf-migrate: {upgrade / (median['tf-migrate'] / args.jobs):.2f}x"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
