"""Throughput of tf-migrate against TensorFlow's own `tf_upgrade_v2`, side by side in one run.

Both tools convert the same files (a folder of real TF1 code given on the command line, e.g. the
development corpus materialised by benchmarks/corpus/materialise.py; by default the legacy examples
copied --copies times) into a fresh output tree; wall time includes start-up, as a user sees it.

Measured, each as the median over --repeats runs, the tools interleaved:
  * tf_upgrade_v2 (one process) and `tf-migrate apply -j J` with an empty cache (cold);
  * `tf-migrate apply -j J` again over the unchanged files (cached: reads and hashes, parses nothing);
  * `tf-migrate diff` on one small file, start-up included, cold (--no-cache) and cached;
  * with --scale-lines N: one synthetic rename-only file of N lines among --scale-others real files,
    migrated with the default per-file budget: wall time, peak memory of any tf-migrate process, what
    happened to the big file and to the others.

    python benchmarks/throughput.py --corpus DIR [--repeats 3] [--jobs 2] [--scale-lines 60000]
        [--output benchmarks/results/NAME.txt]
    python benchmarks/throughput.py --latency-only [--latency-file FILE ...] [--baseline OTHER_CHECKOUT]
        [--latency-runs 7]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".py", ".ipynb")
LATENCY_FILE = ROOT / "legacy_examples" / "mlp_feed_dict.py"  # 64 lines of TF1


def copy_corpus(source: Path | None, folder: Path, copies: int) -> tuple[int, int]:
    """Copy the benchmark's input into `folder` (so no tool writes near the original); files, bytes."""
    if source is not None:
        shutil.copytree(source, folder, symlinks=True)
    else:
        for copy in range(copies):
            for example in sorted((ROOT / "legacy_examples").glob("*.py")):
                target = folder / f"pkg{copy}" / example.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(example, target)
    files = [p for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file() and not p.is_symlink()]
    return len(files), sum(p.stat().st_size for p in files)


def timed(command: list[str], env: dict | None = None, cwd: Path = ROOT) -> tuple[float, int]:
    """Wall seconds and peak resident MB of the command and every process it waited for."""
    elapsed, peak_mb, _ = timed_with_cpu(command, env, cwd)
    return elapsed, peak_mb


def timed_with_cpu(command: list[str], env: dict | None = None, cwd: Path = ROOT) -> tuple[float, int, float]:
    """Wall seconds, peak resident MB and CPU seconds (user + system) of the command."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{command[0]} failed ({process.returncode}):\n{stderr.decode()[-2000:]}")
    return elapsed, usage.ru_maxrss // 1024, usage.ru_utime + usage.ru_stime


def tf_upgrade_v2(corpus: Path, out: Path) -> list[str]:
    executable = shutil.which("tf_upgrade_v2")
    if executable is None:
        raise SystemExit("tf_upgrade_v2 not found: install tensorflow")
    return [executable, "--intree", str(corpus), "--outtree", str(out), "--reportfile", str(out) + ".txt"]


def tf_migrate(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "migrate", *arguments]


def measure_throughput(corpus: Path, temp: Path, repeats: int, jobs: int,
                       keep: Path | None) -> dict[str, list[float]]:
    """Wall seconds per run; with `keep`, the first cold run's output tree and report are kept there
    (to check that a faster tool still writes the same files)."""
    runs: dict[str, list[float]] = {"tf_upgrade_v2": [], "tf-migrate cold": [], "tf-migrate cached": []}
    for repeat in range(repeats):
        cache = temp / f"cache{repeat}"
        runs["tf_upgrade_v2"].append(timed(tf_upgrade_v2(corpus, temp / f"upgrade{repeat}"))[0])
        for label in ("tf-migrate cold", "tf-migrate cached"):
            out = keep / "tree" if keep and repeat == 0 and label.endswith("cold") else temp / f"{label}{repeat}"
            command = tf_migrate("apply", str(corpus), "--out", str(out), "-j", str(jobs), "-q",
                                 "--cache-dir", str(cache), "--report", str(out) + ".json")
            runs[label].append(timed(command)[0])
    return runs


def measure_latency(temp: Path, runs: int) -> dict[str, list[float]]:
    cache = temp / "latency-cache"
    cold = [timed(tf_migrate("diff", str(LATENCY_FILE), "-q", "--no-cache"))[0] for _ in range(runs)]
    timed(tf_migrate("diff", str(LATENCY_FILE), "-q", "--cache-dir", str(cache)))
    cached = [timed(tf_migrate("diff", str(LATENCY_FILE), "-q", "--cache-dir", str(cache)))[0] for _ in range(runs)]
    return {"cold (--no-cache)": cold, "cached": cached}


def measure_cold_latency(files: list[Path], runs: int, baseline: Path | None, say) -> None:
    """`tf-migrate diff --no-cache FILE`, start-up included, per file: median wall and CPU seconds over
    `runs`. With `baseline` (another tf-migrate checkout), that checkout's run alternates with this
    one's, so both see the same load."""
    trees = {"this": ROOT} if baseline is None else {"baseline": baseline.resolve(), "this": ROOT}
    for path in files:
        walls: dict[str, list[float]] = {label: [] for label in trees}
        cpus: dict[str, list[float]] = {label: [] for label in trees}
        for _ in range(runs):
            for label, tree in trees.items():
                wall, _, cpu = timed_with_cpu(tf_migrate("diff", str(path.resolve()), "-q", "--no-cache"), cwd=tree)
                walls[label].append(wall)
                cpus[label].append(cpu)
        for label in trees:
            say(f"cold diff {path.name} ({len(path.read_text().splitlines())} lines), {label}: median "
                f"{statistics.median(walls[label]):.3f} s wall, {statistics.median(cpus[label]):.3f} s CPU over "
                f"{runs} runs (wall min {min(walls[label]):.3f}, max {max(walls[label]):.3f})")


def rename_only_module(lines: int) -> str:
    """Plain renames only (tf.random_normal -> tf.random.normal, tf.log -> tf.math.log, ...)."""
    body = ["x{i} = tf.random_normal([3, 4], name='x{i}')",
            "y{i} = tf.nn.relu(tf.matmul(x{i}, tf.transpose(x{i})))",
            "z{i} = tf.reduce_sum(tf.log(tf.abs(y{i}) + 1.0))"]
    out = ["import tensorflow as tf", ""]
    index = 0
    while len(out) < lines:
        out += [line.format(i=index) for line in body]
        index += 1
    return "\n".join(out[:lines]) + "\n"


def measure_scale(corpus: Path, temp: Path, lines: int, others: int, jobs: int) -> dict:
    folder = temp / "scale"
    folder.mkdir()
    (folder / f"rename_only_{lines}.py").write_text(rename_only_module(lines))
    real = sorted(p for p in corpus.rglob("*.py") if p.is_file() and not p.is_symlink())[:others]
    for number, path in enumerate(real):
        shutil.copyfile(path, folder / f"other_{number:03d}_{path.name}")
    report = temp / "scale-report.json"
    elapsed, peak_mb = timed(tf_migrate("apply", str(folder), "--out", str(temp / "scale-out"), "-j", str(jobs),
                                        "-q", "--no-cache", "--report", str(report)))
    results = json.loads(report.read_text())["files"]
    big = next(r for r in results if "rename_only" in r["path"])
    rest = [r for r in results if r is not big]
    return {"lines": lines, "seconds": elapsed, "peak_mb": peak_mb, "big_status": big["status"],
            "big_reason": big["reason"], "others": len(rest),
            "others_done": sum(r["status"] in ("changed", "unchanged") for r in rest),
            "others_statuses": {s: sum(r["status"] == s for r in rest) for s in ("changed", "unchanged",
                                                                               "skipped", "failed")}}


def measure_tools(corpus: Path, temp: Path, files: int, size: int, args, say) -> None:
    """The throughput runs (tf_upgrade_v2, tf-migrate cold and cached) and the diff latency."""
    runs = measure_throughput(corpus, temp, args.repeats, args.jobs, args.keep_output)
    say(f"{'tool':<20} {'median s':>9} {'files/s':>9} {'MB/s':>7}   runs")
    medians = {name: statistics.median(times) for name, times in runs.items()}
    for name, median in medians.items():
        say(f"{name:<20} {median:9.2f} {files / median:9.1f} {size / 1e6 / median:7.3f}   "
            + " ".join(f"{t:.1f}" for t in runs[name]))
    say(f"throughput ratio, cold (tf-migrate / tf_upgrade_v2): "
        f"{medians['tf_upgrade_v2'] / medians['tf-migrate cold']:.2f}x")
    say(f"cached re-run: {medians['tf-migrate cached']:.2f} s")
    latency = measure_latency(temp, args.latency_runs)
    for label, times in latency.items():
        say(f"tf-migrate diff on one {len(LATENCY_FILE.read_text().splitlines())}-line file "
            f"({LATENCY_FILE.name}), {label}: median {statistics.median(times):.3f} s over {len(times)} runs "
            f"(min {min(times):.3f}, max {max(times):.3f})")


def compile_bytecode(tree: Path) -> None:
    """Write a tf-migrate checkout's bytecode before timing anything, as installing a wheel does: an
    editable install under PYTHONDONTWRITEBYTECODE would otherwise compile every module changed since
    its caches were written, in every timed run (about 0.04 s of a one-file diff)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "migrate"), str(tree / "transforms")],
                   check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})


def describe_machine() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}; load average at start {', '.join(f'{x:.1f}' for x in load)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of TF1 files (default: legacy examples x --copies)")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-runs", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--scale-lines", type=int, default=0, help="also run the scale test with a file this long")
    parser.add_argument("--scale-others", type=int, default=20)
    parser.add_argument("--scale-only", action="store_true", help="run only the scale test")
    parser.add_argument("--latency-only", action="store_true",
                        help="only the cold `tf-migrate diff` latency on --latency-file (no tf_upgrade_v2 needed)")
    parser.add_argument("--latency-file", type=Path, action="append",
                        help=f"file for --latency-only (repeatable; default {LATENCY_FILE.name})")
    parser.add_argument("--baseline", type=Path,
                        help="with --latency-only: another tf-migrate checkout, timed alternately with this one")
    parser.add_argument("--output", type=Path, help="also write the results to this file")
    parser.add_argument("--keep-output", type=Path, help="keep the first cold run's tree and report here")
    args = parser.parse_args()

    lines = [f"# {describe_machine()}", f"# {' '.join(sys.argv)}", "# tf-migrate's bytecode compiled first"]
    for tree in (ROOT, args.baseline) if args.baseline else (ROOT,):
        compile_bytecode(tree)

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    if args.latency_only:
        measure_cold_latency(args.latency_file or [LATENCY_FILE], args.latency_runs, args.baseline, say)
        if args.output:
            args.output.write_text("\n".join(lines) + "\n")
        return

    with tempfile.TemporaryDirectory() as temp_name:
        temp = Path(temp_name)
        corpus = temp / "corpus"
        files, size = copy_corpus(args.corpus, corpus, args.copies)
        say(f"corpus: {files} files, {size / 1e6:.2f} MB ({args.corpus or 'legacy examples'}); "
            f"{args.repeats} repeats, tools interleaved; -j {args.jobs}")
        if not args.scale_only:
            measure_tools(corpus, temp, files, size, args, say)
        if args.scale_lines:
            scale = measure_scale(corpus, temp, args.scale_lines, args.scale_others, args.jobs)
            say(f"scale: a {scale['lines']:,}-line rename-only file among {scale['others']} real files, "
                f"default budget, -j {args.jobs}: {scale['seconds']:.1f} s wall, peak {scale['peak_mb']} MB "
                f"in any one process; big file {scale['big_status']}"
                + (f" ({scale['big_reason']})" if scale['big_reason'] else "")
                + f"; others: {scale['others_statuses']}")
    if args.output:
        args.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
