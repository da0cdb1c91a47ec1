"""Throughput of tf-migrate against TensorFlow's own `tf_upgrade_v2`, side by side in one run.

Both tools convert the same corpus (the legacy examples, copied N times under distinct names) into a
fresh output tree; wall time includes start-up, as a user sees it. Prints files/s, MB/s and the ratio
(medians over --repeats, the two tools interleaved), plus the latency of `tf-migrate diff` on one file.

    python benchmarks/throughput.py [--copies 40] [--repeats 3] [--jobs 2]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_corpus(folder: Path, copies: int) -> tuple[int, int]:
    sources = sorted((ROOT / "legacy_examples").glob("*.py"))
    count = size = 0
    for copy in range(copies):
        for source in sources:
            target = folder / f"pkg{copy}" / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            count += 1
            size += source.stat().st_size
    return count, size


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[0]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def tf_upgrade_v2_command(corpus: Path, out: Path) -> list[str]:
    executable = shutil.which("tf_upgrade_v2")
    if executable is None:
        raise SystemExit("tf_upgrade_v2 not found: install tensorflow")
    return [executable, "--intree", str(corpus), "--outtree", str(out), "--reportfile", str(out) + ".txt"]


def tf_migrate_command(corpus: Path, out: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "migrate", "apply", str(corpus), "--out", str(out), "-j", str(jobs), "-q"]


def measure(copies: int, repeats: int, jobs: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        temp_path = Path(temp)
        corpus = temp_path / "corpus"
        files, size = build_corpus(corpus, copies)
        runs: dict[str, list[float]] = {"tf_upgrade_v2": [], f"tf-migrate -j {jobs}": []}
        for repeat in range(repeats):
            out_a, out_b = temp_path / f"a{repeat}", temp_path / f"b{repeat}"
            runs["tf_upgrade_v2"].append(timed(tf_upgrade_v2_command(corpus, out_a), ROOT))
            runs[f"tf-migrate -j {jobs}"].append(timed(tf_migrate_command(corpus, out_b, jobs), ROOT))
        single = sorted(ROOT.glob("legacy_examples/*.py"))[0]
        latency = [timed([sys.executable, "-m", "migrate", "diff", str(single), "-q"], ROOT)
                   for _ in range(max(5, repeats))]
    print(f"corpus: {files} files, {size / 1e6:.2f} MB; {repeats} repeats; {os.cpu_count()} CPUs")
    print(f"{'tool':<18} {'median s':>9} {'files/s':>9} {'MB/s':>7}")
    medians = {name: statistics.median(times) for name, times in runs.items()}
    for name, median in medians.items():
        print(f"{name:<18} {median:9.2f} {files / median:9.1f} {size / 1e6 / median:7.3f}")
    baseline, ours = medians["tf_upgrade_v2"], medians[f"tf-migrate -j {jobs}"]
    print(f"throughput ratio (tf-migrate / tf_upgrade_v2): {baseline / ours:.2f}x")
    print(f"tf-migrate diff on one small file ({single.name}): median {statistics.median(latency):.3f} s "
          f"over {len(latency)} runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    measure(args.copies, args.repeats, args.jobs)


if __name__ == "__main__":
    main()
