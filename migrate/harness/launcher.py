"""Running one side in its own subprocess, with a wall-clock timeout and a host-memory limit.

The side gets its own process group, so a hang or a runaway allocation is ended with the whole group
(TensorFlow's threads and anything the script started), and the batch goes on. Memory is watched as
resident set size from /proc rather than capped with RLIMIT_AS: TensorFlow and CUDA reserve far
more address space than they use, so an address-space cap would fail healthy programs.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass

from migrate.harness.records import SideData, load_side

POLL_S = 0.2
TAIL_CHARS = 4000


@dataclass
class SideRun:
    status: str  # ok, crashed, timeout, memory, died, harness-error, no-device
    seconds: float
    exit_code: int | None
    stdout: str
    stderr_tail: str
    data: SideData | None
    observed_peak_mb: float
    error: str | None = None
    out_dir: str = ""  # where the side wrote result.json, records.npz (and the legacy weights.npz)


def run_side(entry: str, python: str, config: dict, work_dir: str, timeout_s: float,
             memory_mb: float, env: dict, cwd: str | None = None) -> SideRun:
    """Run `python entry config.json` with working directory `cwd` (default: an empty work_dir/cwd);
    the side writes its results to work_dir/out."""
    out_dir, cwd = os.path.join(work_dir, "out"), cwd or os.path.join(work_dir, "cwd")
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(cwd, exist_ok=True)
    config_path = os.path.join(work_dir, "config.json")
    with open(config_path, "w") as handle:
        json.dump(dict(config, out_dir=out_dir), handle)
    stdout_path, stderr_path = os.path.join(work_dir, "stdout.txt"), os.path.join(work_dir, "stderr.txt")
    started = time.monotonic()
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        try:
            process = subprocess.Popen([python, entry, config_path], cwd=cwd, env=env, stdout=stdout,
                                       stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            return SideRun("harness-error", 0.0, None, "", "", None, 0.0, f"cannot start {python}: {error}")
        stopped, peak = _watch(process, started + timeout_s, memory_mb)
    seconds = time.monotonic() - started
    run = _collect(process.returncode, stopped, seconds, peak, out_dir, stdout_path, stderr_path,
                   timeout_s, memory_mb)
    run.out_dir = out_dir
    return run


def _watch(process: subprocess.Popen, deadline: float, memory_mb: float) -> tuple[str | None, float]:
    """Wait for the process; kill its group on timeout or memory. Returns (why stopped, peak MiB)."""
    peak = 0.0
    while True:
        try:
            process.wait(timeout=POLL_S)
            return None, peak
        except subprocess.TimeoutExpired:
            pass
        resident = resident_mb(process.pid)
        peak = max(peak, resident)
        reason = "memory" if resident > memory_mb else "timeout" if time.monotonic() > deadline else None
        if reason:
            _kill_group(process)
            return reason, peak


def resident_mb(pid: int) -> float:
    """Resident set size of a process in MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _collect(exit_code, stopped, seconds, peak, out_dir, stdout_path, stderr_path, timeout_s, memory_mb) -> SideRun:
    stdout = _read(stdout_path)
    stderr_tail = _read(stderr_path)[-TAIL_CHARS:]
    if stopped == "timeout":
        return SideRun("timeout", seconds, exit_code, stdout, stderr_tail, None, peak,
                       f"still running after {timeout_s:g} s: stopped")
    if stopped == "memory":
        return SideRun("memory", seconds, exit_code, stdout, stderr_tail, None, peak,
                       f"resident memory passed {memory_mb:g} MiB: stopped")
    data = load_side(out_dir)
    if data is None:
        return SideRun("died", seconds, exit_code, stdout, stderr_tail, None, peak,
                       f"exited with status {exit_code} before writing its results"
                       + (" (killed by a signal)" if exit_code is not None and exit_code < 0 else ""))
    return SideRun(data.status, seconds, exit_code, stdout, stderr_tail, data, peak, data.result.get("error"))


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")
