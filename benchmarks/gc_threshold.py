"""What the cyclic garbage collector costs a migration run: CPU of `migrate_path` over corpus files
with Python's default first-generation threshold (700) and with the one the CLI sets.

    python benchmarks/gc_threshold.py [--corpus DIR] [--every 6] [--rounds 3]

Each round runs both settings, in fresh processes, one after the other (every `--every`-th `.py` file
of the corpus, in one process per setting, after the transforms are imported). Prints each setting's
median CPU seconds and peak resident memory, and their ratio.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = """
import gc, json, resource, sys, time
sys.path.insert(0, {root!r})
from migrate.runner import migrate_path
from transforms import all_transforms
all_transforms()
gc.set_threshold({threshold}, *gc.get_threshold()[1:])
started = time.process_time()
for path in {paths!r}:
    migrate_path(path)
print(json.dumps({{"cpu_s": time.process_time() - started,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def run(paths: list[str], threshold: int) -> dict:
    code = _CHILD.format(root=ROOT, threshold=threshold, paths=paths)
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, ROOT)
    from migrate.cli import GC_FIRST_GENERATION

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"))
    parser.add_argument("--every", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(args.corpus, "**", "*.py"), recursive=True))[::args.every]
    settings = {"default 700": 700, f"CLI {GC_FIRST_GENERATION}": GC_FIRST_GENERATION}
    results: dict[str, list[dict]] = {label: [] for label in settings}
    for _ in range(args.rounds):
        for label, threshold in settings.items():
            results[label].append(run(paths, threshold))
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"load average at end {os.getloadavg()[0]:.2f}")
    print(f"{len(paths)} corpus files (every {args.every}th), {args.rounds} rounds, medians")
    medians = {}
    for label, runs in results.items():
        medians[label] = statistics.median(r["cpu_s"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        print(f"  threshold {label:<12} CPU {medians[label]:7.2f} s   peak memory {peak:5.0f} MB")
    default, chosen = medians.values()
    print(f"  CPU with the CLI's threshold: {chosen / default:.3f}x the default's")


if __name__ == "__main__":
    main()
