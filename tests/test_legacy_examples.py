"""Every legacy example runs under the legacy runtime, prints RESULT lines, and is deterministic.

The examples run in subprocesses, two at a time (each spends most of its time importing
TensorFlow), each from an empty working directory that must still be empty afterwards.
"""
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "legacy_examples").glob("*.py"))
REPRESENTATIVE = ROOT / "legacy_examples" / "mlp_feed_dict.py"


def run_example(path):
    """Run one example from a fresh empty cwd; returns (CompletedProcess, files left in cwd)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with tempfile.TemporaryDirectory() as cwd:
        result = subprocess.run([sys.executable, "-m", "migrate.legacy_runtime", str(path)],
                                capture_output=True, text=True, timeout=240, cwd=cwd, env=env)
        return result, os.listdir(cwd)


@pytest.fixture(scope="module")
def runs():
    """Start every example (and a second run of the representative one) up front."""
    pool = ThreadPoolExecutor(max_workers=2)
    futures = {path.name: pool.submit(run_example, path) for path in EXAMPLES}
    futures["rerun"] = pool.submit(run_example, REPRESENTATIVE)
    yield futures
    pool.shutdown(wait=True)


def parse_results(stdout):
    """{key: number or list of numbers} from the `RESULT <key> <value>` lines; fails on bad ones."""
    results = {}
    for line in stdout.splitlines():
        if not line.startswith("RESULT "):
            continue
        _, key, raw = line.split(" ", 2)
        value = json.loads(raw)
        numbers = value if isinstance(value, list) else [value]
        assert all(isinstance(n, (int, float)) for n in numbers), line
        assert key not in results, f"duplicate RESULT key {key}"
        results[key] = value
    return results


def test_there_are_examples_to_check():
    assert REPRESENTATIVE in EXAMPLES and len(EXAMPLES) >= 8


@pytest.mark.parametrize("example", [path.name for path in EXAMPLES])
def test_example_runs_and_reports_results(runs, example):
    result, left_behind = runs[example].result()
    assert result.returncode == 0, result.stderr[-3000:]
    assert parse_results(result.stdout), f"{example} printed no RESULT line"
    assert left_behind == [], f"{example} wrote into its working directory: {left_behind}"


def test_representative_example_is_deterministic(runs):
    first, _ = runs[REPRESENTATIVE.name].result()
    second, _ = runs["rerun"].result()
    assert first.returncode == second.returncode == 0
    assert parse_results(first.stdout)
    assert first.stdout == second.stdout
