"""What `import tensorflow` costs each side of a corpus comparison, before any program code runs.

    python benchmarks/import_cost.py [--runs 7]

The corpus measure (benchmarks/corpus.py) runs the legacy program on the legacy runtime, which sets
`TF_USE_LEGACY_KERAS=1` before TensorFlow is imported (tf.compat.v1.layers needs tf-keras), and the
migrated program on plain TF 2. TensorFlow's own `__init__` then eagerly imports the optimizers of
whichever Keras it selected: tf-keras's on the legacy side, Keras 3's on the migrated side. This
script times, in fresh processes alternating, a script that only imports TensorFlow: run plainly,
run with `TF_USE_LEGACY_KERAS=1`, and run through `python -m migrate.legacy_runtime`. Medians of wall
seconds, start-up and interpreter exit included, as the corpus measure's wall times are.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="2", PYTHONDONTWRITEBYTECODE="1")
    base.pop("TF_USE_LEGACY_KERAS", None)
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "import_only.py")
        with open(script, "w") as handle:
            handle.write("import tensorflow as tf\n")
        variants = {
            "plain TF 2 (the migrated side)": ([sys.executable, script], base),
            "TF_USE_LEGACY_KERAS=1": ([sys.executable, script], dict(base, TF_USE_LEGACY_KERAS="1")),
            "legacy runtime (the legacy side)": ([sys.executable, "-m", "migrate.legacy_runtime", script],
                                                 dict(base, PYTHONPATH=ROOT)),
        }
        times: dict[str, list[float]] = {label: [] for label in variants}
        for _ in range(args.runs):
            for label, (command, env) in variants.items():
                times[label].append(timed(command, env))
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"load average at end {os.getloadavg()[0]:.2f}")
    print(f"`import tensorflow` alone, fresh process each, {args.runs} runs alternating, median wall seconds:")
    plain = statistics.median(times["plain TF 2 (the migrated side)"])
    for label, values in times.items():
        median = statistics.median(values)
        print(f"  {label:<34} {median:6.2f} s  (min {min(values):.2f}, max {max(values):.2f}; "
              f"{median - plain:+.2f} s against plain TF 2)")


if __name__ == "__main__":
    main()
