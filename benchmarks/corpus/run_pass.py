"""The running part of the corpus measure, for the entries with a run recipe.

For each runnable program (a recipe of a manifest entry):
  1. its migrated tree: the program and the local modules it imports, each migrated with
     `migrate.runner.migrate_path` into `<migrated_dir>/<owner>+<name>/<same path>`, with the
     run-site map (`<program>.sites.json`) the harness pairs sites with;
  2. the legacy program on the legacy runtime (`python -m migrate.legacy_runtime`): a program whose
     legacy run fails is a corpus bug (its recipe or stand-ins), reported apart;
  3. the migrated program on plain TF 2 (`python program.py`, no legacy runtime);
  4. `tf-migrate verify` of the pair (through verify_one.py, for the recipe's arguments), only when
     both plain runs succeeded: a pair where one side cannot run is `failed` without re-running it.
Every run is a subprocess in a fresh temporary working directory, with a timeout, and with the
stand-in layer (stand_ins/ on PYTHONPATH, the recipe's stand-ins and batch budget in the environment).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
STAND_INS = os.path.join(HERE, "stand_ins")
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))
VERIFY_ONE = os.path.join(HERE, "verify_one.py")


@dataclass
class RunOutcome:
    status: str  # ok | crashed | timeout | not-run
    exit_code: int | None = None
    seconds: float = 0.0
    error: str = ""  # exception type and message head, or why it was stopped (never a traceback:
    # tracebacks quote the corpus's source lines, which must not reach a committed result)


def tree_path(root: str, entry: dict, path: str | None = None) -> str:
    return os.path.join(root, entry["repo"].replace("/", "+"), path or entry["path"])


def build_migrated_tree(corpus_dir: str, migrated_dir: str, entry: dict) -> tuple[str | None, str]:
    """Migrate the program and its support files; (migrated program path, problem or '')."""
    from migrate.harness.pairing import fused_map, sidecar_path, write_site_map
    from migrate.runner import migrate_path

    program_result = None
    for path in [entry["path"]] + [support["path"] for support in entry.get("support", ())]:
        source = tree_path(corpus_dir, entry, path)
        result = migrate_path(source)
        if result.status == "failed":
            return None, f"migration failed for {path}: {result.reason}"
        with open(source, "rb") as handle:
            data = result.new_bytes if result.new_bytes is not None else handle.read()
        target = tree_path(migrated_dir, entry, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
        if path == entry["path"]:
            program_result = (target, result, data.decode("utf-8", "replace"))
    target, result, new_source = program_result
    fused = fused_map(new_source, [name for _, name in result.run_sites])
    write_site_map(sidecar_path(target), result.run_sites, fused)
    return target, ""


def program_env(entry: dict, recipe: dict, legacy: bool, merged: dict[str, int] | None = None) -> dict:
    """Environment of a run: the stand-in layer as the recipe says, CPU only, quiet TensorFlow, and how
    many steps each `merged`-step function of the migrated program (TFM311) counts for."""
    script_dir = os.path.dirname(entry["path"])
    script_path = [os.path.relpath(folder, script_dir or ".") for folder in recipe["python_path"]]
    python_path = [STAND_INS, PROJECT_ROOT] if legacy else [STAND_INS]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(python_path), TFM_CORPUS_STAND_INS=",".join(recipe["stand_ins"]),
               TFM_CORPUS_SCRIPT_PATH=os.pathsep.join(script_path), MPLBACKEND="Agg", CUDA_VISIBLE_DEVICES="-1",
               TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    env.pop("TF_USE_LEGACY_KERAS", None)
    for variable, key in (("TFM_CORPUS_MAX_BATCHES", "max_batches"), ("TFM_CORPUS_MAX_RUNS", "max_runs")):
        if recipe[key] is None:
            env.pop(variable, None)
        else:
            env[variable] = str(recipe[key])
    env["TFM_CORPUS_MERGED_STEPS"] = ",".join(f"{name}={count}" for name, count in (merged or {}).items())
    return env


def merged_steps(migrated: str) -> dict[str, int]:
    """Merged-step function (TFM311) -> the number of step functions it runs, from the site map."""
    from migrate.harness.pairing import load_fused_map, sidecar_path

    fused = load_fused_map(sidecar_path(migrated))
    return {name: len(step["merges"]) for name, step in fused.items() if isinstance(step, dict) and "merges" in step}


def run_command(command: list[str], env: dict, timeout_s: float) -> RunOutcome:
    """Run in a fresh temporary working directory; the whole process group is ended on timeout."""
    with tempfile.TemporaryDirectory(prefix="corpus-run-") as cwd:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True, errors="replace", start_new_session=True)
        try:
            _, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            _, stderr = process.communicate()
            return RunOutcome("timeout", None, round(time.perf_counter() - started, 2),
                              f"timeout after {timeout_s:.0f} s")
        seconds = round(time.perf_counter() - started, 2)
    if process.returncode == 0:
        return RunOutcome("ok", 0, seconds)
    return RunOutcome("crashed", process.returncode, seconds, exception_head(stderr, process.returncode))


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|NotFound\w*)):?(.*)$")


def exception_head(stderr: str, exit_code: int) -> str:
    """`Type: message` of the last exception in a traceback, else the last line, else the exit code."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        match = _EXCEPTION_LINE.match(line)
        if match:
            return line
    return lines[-1] if lines else f"exit status {exit_code}"


def verify(entry: dict, recipe: dict, legacy: str, migrated: str, timeout_s: float, merged: dict[str, int]) -> dict:
    """The harness's report of the pair: {"verdict", "reason", "speed"} (verdict "error" if no report came)."""
    from migrate.harness.pairing import sidecar_path

    with tempfile.TemporaryDirectory(prefix="corpus-verify-") as folder:
        config = {"legacy": legacy, "migrated": migrated, "sites": sidecar_path(migrated),
                  "args": recipe["args"], "timeout_s": timeout_s, "report": os.path.join(folder, "report.json")}
        config_path = os.path.join(folder, "config.json")
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        env = program_env(entry, recipe, legacy=True, merged=merged)  # PROJECT_ROOT on the path: this harness
        outcome = run_command([sys.executable, VERIFY_ONE, config_path], env, timeout_s * 2 + 120)
        if not os.path.isfile(config["report"]):
            return {"verdict": "error", "reason": f"no report: {outcome.error or outcome.status}"}
        with open(config["report"], encoding="utf-8") as handle:
            program = json.load(handle)["programs"][0]
    return {"verdict": program["verdict"], "reason": program["reason"], "speed": harness_speed(program)}


def harness_speed(program: dict) -> dict | None:
    """The harness's speed measurement of the pair: per-step speedup (legacy step time / migrated step
    time at the step site, medians of the same run) with its basis, and both sides' script wall time."""
    timing = program.get("timing")
    if not timing:
        return None
    return {"speedup": timing.get("speedup"), "basis": timing.get("speedup_basis"),
            "steps": [(timing.get(side) or {}).get("steps") for side in ("legacy", "migrated")],
            "wall_s": [(timing.get(side) or {}).get("wall_s") for side in ("legacy", "migrated")]}


def run_recipe(corpus_dir: str, entry: dict, recipe: dict, migrated: tuple[str | None, str], timeout_s: float,
               do_verify: bool = True) -> dict:
    """The run record of one recipe of a runnable entry; `migrated`: build_migrated_tree's answer."""
    legacy = tree_path(corpus_dir, entry)
    args = recipe["args"]
    record = {"id": recipe["id"], "repo": entry["repo"], "path": entry["path"], "args": args,
              "stand_ins": recipe["stand_ins"], "max_batches": recipe["max_batches"], "max_runs": recipe["max_runs"]}
    legacy_run = run_command([sys.executable, "-m", "migrate.legacy_runtime", legacy, *args],
                             program_env(entry, recipe, legacy=True), timeout_s)
    record["legacy"] = asdict(legacy_run)
    migrated, problem = migrated
    if migrated is None:
        record["migrated"] = asdict(RunOutcome("not-run", error=problem))
        record["verify"] = {"verdict": "failed", "reason": problem, "harness_ran": False}
        return record
    merged = merged_steps(migrated)
    migrated_env = program_env(entry, recipe, legacy=False, merged=merged)
    migrated_run = run_command([sys.executable, migrated, *args], migrated_env, timeout_s)
    record["migrated"] = asdict(migrated_run)
    if not do_verify:
        record["verify"] = None
    elif legacy_run.status != "ok" or migrated_run.status != "ok":
        side = "legacy" if legacy_run.status != "ok" else "migrated"
        record["verify"] = {"verdict": "failed", "reason": f"not verified: the plain {side} run did not succeed",
                            "harness_ran": False}
    else:
        record["verify"] = dict(verify(entry, recipe, legacy, migrated, timeout_s, merged), harness_ran=True)
    return record
