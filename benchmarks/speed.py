"""Speed of migrated programs against their legacy originals, side by side, through the harness.

For every `legacy_examples/*.py`, each repeat runs the legacy program once (legacy runtime) and then
each migration variant from that same legacy run (`tf-migrate verify`'s machinery: same weights,
step-by-step comparison, steady-state timing at the busiest run site, warm-up excluded):

  plain  the migration without step-loop fusion (TFM301 ignored): one tf.function call per step
  fused  the default migration: Python step loops fused into one in-graph loop where provably safe
  xla    fused, plus jit_compile=True on the step functions (TFM302, `--jit on`)

Prints, per example and variant, the medians over repeats of legacy and migrated steps/s and of the
per-repeat ratio (migrated / legacy, measured side by side), whether every repeat was judged
equivalent, and the geometric mean of the ratios; writes JSON + Markdown to benchmarks/results/.

The examples train for a few dozen steps (enough to check equivalence, too few for a steady-state
speed). `--scale K` (default 10) runs each for K times its steps: a copy of the example with its
module-level `STEPS` / `EPOCHS` constant multiplied, or its step-count flag (EXAMPLE_ARGS) scaled.
Equivalence is judged on those longer runs too.

    python benchmarks/speed.py [--repeats 3] [--variants plain,fused] [--scale 10] [--label SUFFIX] [EXAMPLE ...]
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from migrate.harness.programs import Program, prepare
from migrate.harness.tune import VARIANTS
from migrate.harness.verify import Settings, run_legacy, verify_migrated

# Examples that take their step count on the command line: (flag, steps at scale 1).
EXAMPLE_ARGS = {"cnn_tf_layers.py": ("--train_steps", 60), "core_scoped_adam.py": ("--steps", 60),
                "core_contrib_layers.py": ("--steps", 30), "core_saver_resume.py": ("--steps", 8),
                "mixed_flags_data_summaries_saver.py": ("--steps", 40), "saver_checkpoint.py": ("--steps", 30),
                "tutorial_fully_connected_feed.py": ("--max_steps", 40),
                "wrapped_tensorboard_tutorial.py": ("--max_steps", 120)}
SCALED_CONSTANTS = re.compile(r"^(STEPS|EPOCHS) = (\d+)$", re.MULTILINE)


def scaled_example(path: Path, scale: int, work: str) -> tuple[Path, tuple[str, ...]]:
    """The program to run (a scaled copy where the example has a STEPS/EPOCHS constant) and its arguments."""
    flag = EXAMPLE_ARGS.get(path.name)
    args = (flag[0], str(flag[1] * scale)) if flag else ()
    source = path.read_text(encoding="utf-8")
    if scale == 1 or not SCALED_CONSTANTS.search(source):
        return path, args
    copy = Path(tempfile.mkdtemp(dir=work)) / path.name
    copy.write_text(SCALED_CONSTANTS.sub(lambda m: f"{m[1]} = {int(m[2]) * scale}", source), encoding="utf-8")
    return copy, args


def machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")), None)
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(), "python": platform.python_version(),
            "tensorflow": metadata.version("tensorflow"), "platform": platform.platform(), "gpu": _gpu_name()}


def _gpu_name() -> str | None:
    """The first NVIDIA GPU's name when one is visible (the harness then runs both sides on it)."""
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return listing.splitlines()[0].split(":", 1)[1].split("(")[0].strip() if listing.startswith("GPU") else None


def result_name(variants: list[str], scale: int, about: dict, label: str = "") -> str:
    """Result files say what they measured: e.g. speed-fused-10x-cpu-2cores-2026-11-25."""
    day = datetime.date.today().isoformat()
    device = "gpu" if about.get("gpu") else "cpu"
    parts = ["speed", "+".join(variants), f"{scale}x", device, f"{about['cores']}cores", day, label]
    return "-".join(part for part in parts if part)


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return []


def run_example(path: Path, variants: list[str], repeats: int, work: str, scale: int = 1) -> dict:
    """Per variant, the repeats' (legacy steps/s, migrated steps/s, ratio, wall ratio, verdict)."""
    program_path, args = scaled_example(path, scale, work)
    settings = Settings(args=args, timeout_s=300.0)
    program = Program(path.name, str(program_path))
    prepared = {name: prepare(program, tempfile.mkdtemp(dir=work), VARIANTS[name]) for name in variants}
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    for _ in range(repeats):
        legacy = run_legacy(program, settings, tempfile.mkdtemp(dir=work))
        for name in variants:
            if prepared[name].problem:
                runs[name].append({"verdict": "failed", "reason": prepared[name].problem})
                continue
            report = verify_migrated(program, prepared[name], legacy, settings, tempfile.mkdtemp(dir=work))
            runs[name].append(_measurement(report))
    return {"example": path.name, "args": list(settings.args), "scale": scale if program_path != path or args else 1,
            "level": {name: (prepared[name].migration or {}).get("level") for name in variants},
            "variants": {name: summarise(runs[name]) for name in variants}}


def _measurement(report: dict) -> dict:
    timing = report.get("timing") or {}
    legacy, migrated = timing.get("legacy") or {}, timing.get("migrated") or {}
    walls = [side.get("wall_s") for side in (legacy, migrated)]
    return {"verdict": report.get("verdict"), "reason": report.get("reason"),
            "legacy_steps_per_s": legacy.get("steps_per_s"), "migrated_steps_per_s": migrated.get("steps_per_s"),
            "ratio": timing.get("speedup"), "basis": timing.get("speedup_basis"),
            "wall_ratio": walls[0] / walls[1] if all(walls) else None,
            "steady_steps": [side.get("steps", 0) - side.get("warmup_steps", 0) for side in (legacy, migrated)]}


def summarise(runs: list[dict]) -> dict:
    def median(key):
        values = [run[key] for run in runs if run.get(key) is not None]
        return statistics.median(values) if values else None

    verdicts = sorted({run["verdict"] for run in runs})
    return {"legacy_steps_per_s": median("legacy_steps_per_s"), "migrated_steps_per_s": median("migrated_steps_per_s"),
            "ratio": median("ratio"), "wall_ratio": median("wall_ratio"),
            "basis": next((run.get("basis") for run in runs if run.get("basis")), None),
            "equivalent": verdicts == ["equivalent"], "verdicts": verdicts,
            "reason": next((run.get("reason") for run in runs if run.get("reason")), ""), "runs": runs}


def geometric_mean(values: list[float]) -> float | None:
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def rows(results: list[dict], variants: list[str]) -> list[list[str]]:
    """example, step scale, variant, level, legacy steps/s, migrated steps/s, ratio, script wall-time
    ratio, equivalent."""
    table = []
    for result in results:
        for name in variants:
            found = result["variants"][name]
            table.append([result["example"], f"{result.get('scale', 1)}x", name, result["level"][name] or "-",
                          _number(found["legacy_steps_per_s"]), _number(found["migrated_steps_per_s"]),
                          _ratio(found["ratio"]), _ratio(found["wall_ratio"]),
                          "yes" if found["equivalent"] else "/".join(found["verdicts"])])
    return table


def _number(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


HEADER = ["example", "steps", "variant", "level", "legacy steps/s", "migrated steps/s", "ratio", "wall ratio",
          "equivalent?"]


def render_text(table: list[list[str]], means: dict) -> str:
    widths = [max(len(row[i]) for row in [HEADER, *table]) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in [HEADER, *table]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines += [f"geometric mean of ratios, {name}: {_ratio(value)}" for name, value in means.items()]
    return "\n".join(lines)


def render_markdown(report: dict, table: list[list[str]]) -> str:
    about = report["machine"]
    gpu = f", GPU {about['gpu']}" if about.get("gpu") else ", no GPU"
    about_line = (f"Machine: {about['cpu']}, {about['cores']} cores{gpu}; Python {about['python']}, "
                  f"TensorFlow {about['tensorflow']}. {report['repeats']} repeats, medians; each example run for "
                  f"{report.get('scale', 1)}x its steps (where it has a STEPS/EPOCHS constant or step flag); ratio = migrated "
                  "steps/s / legacy steps/s in the same repeat (steady state, warm-up excluded); wall ratio = "
                  "legacy script wall time / migrated.")
    lines = [f"# Migrated vs legacy speed ({report['label']})", "", about_line, "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in table]
    lines += [""] + [f"- geometric mean of ratios, {name}: {_ratio(value)}" for name, value in report["geomean"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", help="example file names (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", default="plain,fused")
    parser.add_argument("--scale", type=int, default=10, help="run each example K times its steps")
    parser.add_argument("--label", default="", help="appended to the result files' name")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    variants = [name for name in args.variants.split(",") if name]
    paths = sorted((ROOT / "legacy_examples").glob("*.py"))
    if args.examples:
        paths = [p for p in paths if p.name in args.examples or p.stem in args.examples]
    results = []
    with tempfile.TemporaryDirectory(prefix="speed-") as work:
        for number, path in enumerate(paths, 1):
            print(f"[{number}/{len(paths)}] {path.name}", file=sys.stderr, flush=True)
            results.append(run_example(path, variants, args.repeats, work, args.scale))
    means = {name: geometric_mean([r["variants"][name]["ratio"] for r in results]) for name in variants}
    about = machine()
    label = result_name(variants, args.scale, about, args.label)
    report = {"label": label, "machine": about, "repeats": args.repeats, "scale": args.scale,
              "variants": variants,
              "results": results, "geomean": means}
    table = rows(results, variants)
    print(render_text(table, means))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{label}.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / f"{label}.md").write_text(render_markdown(report, table))
    print(f"written: {out / label}.json and .md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
