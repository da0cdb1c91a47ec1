"""Numbers of the corpus measure, from the static and run records, and their Markdown rendering."""
from __future__ import annotations

import re
from collections import Counter
from statistics import median

LEVELS = ("tf2", "wrapped", "compat", "tf1", "none")
VERDICTS = ("equivalent", "mismatch", "inconclusive", "failed", "error")
TOP = 15


def level_histogram(records: list[dict]) -> dict[str, int]:
    """Files per level; files the runner skipped or failed are counted apart, not by level."""
    counts = Counter()
    for record in records:
        counts[record["status"] if record["status"] in ("skipped", "failed") else record["level"]] += 1
    return {key: counts.get(key, 0) for key in LEVELS + ("skipped", "failed")}


def graph_mode_summary(records: list[dict]) -> dict:
    """Main scripts free of Session / placeholder / feed_dict, before and after migration."""
    mains = [r for r in records if r["kind"] == "main"]
    used_before = [r for r in mains if r["graph_mode_before"]]
    return {"main_scripts": len(mains),
            "using_before": len(used_before),
            "free_after": sum(not r["graph_mode_after"] for r in mains),
            "freed": sum(not r["graph_mode_after"] for r in used_before),
            "names_left": dict(Counter(name for r in mains for name in r["graph_mode_after"]).most_common())}


def graph_modules_imported(records: list[dict]) -> dict:
    """Main scripts short of `tf2` that import a module of their own repository whose migration keeps
    TF1 code (`wrapped`, `compat` or `tf1`): graphs are converted one file at a time, so such a
    script's graph may be partly built where its conversion cannot see it. Counted by the script's level."""
    kept = {(r["repo"], r["path"].rsplit(".", 1)[0]) for r in records if r["level"] in ("wrapped", "compat", "tf1")}
    by_level = Counter()
    for record in records:
        if record["kind"] != "main" or record["level"] in ("tf2", None) or "imports" not in record:
            continue
        if any((record["repo"], module) in kept for name in record["imports"]
               for module in _module_files(record["path"], name)):
            by_level[record["level"]] += 1
    return {"main_scripts": sum(by_level.values()), "by_level": dict(by_level)}


def _module_files(script: str, imported: str) -> list[str]:
    """Where `import imported` in `script` finds a module of the repository (paths without `.py`): next
    to the script, as running it puts its folder first on sys.path, or from the repository's root."""
    relative = imported.replace(".", "/")
    folder = script.rsplit("/", 1)[0] + "/" if "/" in script else ""
    return [f"{base}{relative}{tail}" for base in dict.fromkeys((folder, "")) for tail in ("", "/__init__")]


def normalise(message: str) -> str:
    """A message with its specifics replaced, to group alike ones: quoted text, paths, line numbers and
    numbers of two digits or more, user names with dots; TensorFlow API names are kept to three parts
    (`tf.contrib.rnn`), since which API is refused is the useful part."""
    message = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "'…'", message)
    message = re.sub(r"/[\w./+-]+", "<path>", message)
    message = re.sub(r"\b(tf|tensorflow)((\.\w+){1,2})(\.\w+)*", r"\1\2", message)
    message = re.sub(r"(?<![\w.])(?!tf\.|tensorflow\.)[A-Za-z_]\w*(\.\w+)+\b", "<name>", message)
    message = re.sub(r"\bline \d+|\b\d{2,}\b", lambda m: "line N" if m.group().startswith("line") else "N", message)
    return message[:160]


def normalise_error(message: str) -> str:
    """An exception head with paths, addresses and numbers replaced; names stay (which module is
    missing, which attribute) since they are the point."""
    message = re.sub(r"0x[0-9a-f]+", "0x…", message)
    message = re.sub(r"/[\w./+-]+", "<path>", message)
    message = re.sub(r"\b\d{2,}\b", "N", message)
    return message[:120]


def refusal_reasons(records: list[dict]) -> list[dict]:
    """Findings left for a human (`fixed: false`), grouped by code and normalised message."""
    groups: Counter = Counter()
    example: dict = {}
    for record in records:
        for finding in record["findings"]:
            if not finding["fixed"]:
                key = (finding["code"], normalise(finding["message"]))
                groups[key] += 1
                example.setdefault(key, f'{record["repo"]}:{record["path"]}:{finding["line"]}')
    return [{"code": code, "message": message, "count": count, "example": example[(code, message)]}
            for (code, message), count in groups.most_common()]


def skip_fail_reasons(records: list[dict]) -> list[dict]:
    groups = Counter((r["status"], normalise(r["reason"])) for r in records if r["status"] in ("skipped", "failed"))
    return [{"status": status, "reason": reason, "count": count} for (status, reason), count in groups.most_common()]


def run_failure_reasons(runs: list[dict], side: str) -> list[dict]:
    """Failed runs of one side grouped by exception type and message head."""
    groups: Counter = Counter()
    example: dict = {}
    for run in runs:
        outcome = run[side]
        if outcome["status"] not in ("ok", "not-run"):
            key = (outcome["status"], normalise_error(outcome["error"]))
            groups[key] += 1
            example.setdefault(key, run["id"])
    return [{"status": status, "error": error, "count": count, "example": example[(status, error)]}
            for (status, error), count in groups.most_common()]


def run_summary(runs: list[dict]) -> dict:
    def rate(side: str) -> dict:
        ok = sum(run[side]["status"] == "ok" for run in runs)
        return {"ok": ok, "of": len(runs)}

    verdicts = Counter(run["verify"]["verdict"] for run in runs if run.get("verify"))
    harness_ran = sum(bool(run.get("verify") and run["verify"].get("harness_ran")) for run in runs)
    return {"programs": len(runs), "legacy_runtime": rate("legacy"), "migrated_plain_tf2": rate("migrated"),
            "verify": {verdict: verdicts.get(verdict, 0) for verdict in VERDICTS},
            "verify_harness_ran": harness_ran,
            "speed_of_equivalent": speed_of_equivalent(runs),
            "corpus_bugs": [run["id"] for run in runs if run["legacy"]["status"] != "ok"],
            "legacy_failures": run_failure_reasons(runs, "legacy"),
            "migrated_failures": run_failure_reasons(runs, "migrated"),
            "seconds": {"legacy": round(sum(r["legacy"]["seconds"] for r in runs), 1),
                        "migrated": round(sum(r["migrated"]["seconds"] for r in runs), 1)}}


def plain_wall_ratio(run: dict) -> float | None:
    """Legacy / migrated wall time of the plain runs (start-up, tracing and the whole script included)."""
    legacy, migrated = run["legacy"], run["migrated"]
    if legacy["status"] != "ok" or migrated["status"] != "ok" or not migrated["seconds"]:
        return None
    return round(legacy["seconds"] / migrated["seconds"], 2)


def step_speedup(run: dict) -> float | None:
    """The harness's per-step speedup of the pair, when it timed a step site on both sides."""
    speed = (run.get("verify") or {}).get("speed") or {}
    if speed.get("speedup") is None or not (speed.get("basis") or "").startswith("steady-state step"):
        return None
    return speed["speedup"]


def speed_of_equivalent(runs: list[dict]) -> dict:
    """Per-step and wall-time speed of the programs verified equivalent: how many are at least as fast."""
    equivalent = [run for run in runs if (run.get("verify") or {}).get("verdict") == "equivalent"]
    steps = [value for value in map(step_speedup, equivalent) if value is not None]
    walls = [value for value in map(plain_wall_ratio, equivalent) if value is not None]
    indicative = sum("indicative" in ((run["verify"].get("speed") or {}).get("basis") or "")
                     for run in equivalent if step_speedup(run) is not None)

    def counts(values: list[float]) -> dict:
        return {"measured": len(values), "at_least_1x": sum(value >= 1.0 for value in values),
                "median": round(float(median(values)), 2) if values else None}

    return {"equivalent": len(equivalent), "per_step": dict(counts(steps), indicative=indicative),
            "wall": counts(walls)}


def static_summary(records: list[dict]) -> dict:
    return {"files": len(records), "main": sum(r["kind"] == "main" for r in records),
            "repositories": len({r["repo"] for r in records}),
            "levels": level_histogram(records), "graph_mode": graph_mode_summary(records),
            "graph_modules_imported": graph_modules_imported(records),
            "needs_human": sum(not f["fixed"] for r in records for f in r["findings"]),
            "refusals": refusal_reasons(records), "skipped_or_failed": skip_fail_reasons(records),
            "seconds": round(sum(r["seconds"] for r in records), 1)}


def table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def render_markdown(report: dict) -> str:
    """The report as Markdown: what was measured, on what, and the numbers."""
    lines = [f"# Corpus measure: {report['label']}", "",
             f"Date {report['date']}; machine: {report['machine']['description']}; tool fingerprint "
             f"`{report['tool']}` (commit `{report['commit']}`); filter: `{report['filter'] or 'none'}`.", "",
             "Wall time: " + ", ".join(f"{part} {seconds} s" for part, seconds in report["timing_s"].items())
             + (f"; settings {report['settings']}" if "settings" in report else "")
             + (f"; load average at start {report['load_average_at_start']} (the CPU is shared)"
                if "load_average_at_start" in report else "") + ".", ""]
    static = report.get("static")
    if static:
        lines += render_static(static)
    runs = report.get("run")
    if runs:
        lines += render_runs(runs, report["runs"])
    return "\n".join(lines) + "\n"


def render_static(static: dict) -> list[str]:
    levels = static["levels"]
    graph = static["graph_mode"]
    lines = ["## Static: every corpus file migrated", "",
             f"{static['files']} files ({static['main']} main scripts) from {static['repositories']} repositories; "
             f"{static['seconds']} s of migration time in all.", ""]
    lines += table(list(levels), [list(levels.values())]) + [""]
    lines += [f"Main scripts free of Session / placeholder / feed_dict after migration: **{graph['free_after']} / "
              f"{graph['main_scripts']}** ({graph['using_before']} used them before; {graph['freed']} of those are free "
              f"now). Names left, by scripts: {graph['names_left'] or 'none'}.", ""]
    imported = static.get("graph_modules_imported")
    if imported:
        lines += [f"Main scripts short of `tf2` that import a module of their repository whose migration keeps TF1 "
                  f"code (`wrapped` / `compat` / `tf1`; graphs are converted one file at a time): "
                  f"**{imported['main_scripts']}**, by their level: {imported['by_level'] or 'none'}.", ""]
    lines += [f"Findings left for a human (`fixed: false`): {static['needs_human']}. Top reasons:", ""]
    lines += table(["code", "message (normalised)", "count", "example"],
                   [[r["code"], r["message"], r["count"], r["example"]] for r in static["refusals"][:TOP]]) + [""]
    if static["skipped_or_failed"]:
        lines += ["Skipped / failed files:", ""]
        lines += table(["status", "reason (normalised)", "count"],
                       [[r["status"], r["reason"], r["count"]] for r in static["skipped_or_failed"]]) + [""]
    return lines


def render_runs(summary: dict, runs: list[dict]) -> list[str]:
    lines = ["## Runnable programs: legacy runtime, plain TF 2, verify", "",
             f"{summary['programs']} programs. Legacy on the legacy runtime: **{summary['legacy_runtime']['ok']} / "
             f"{summary['programs']}** ran; migrated on plain TF 2: **{summary['migrated_plain_tf2']['ok']} / "
             f"{summary['programs']}** ran. Run time in all: legacy {summary['seconds']['legacy']} s, migrated "
             f"{summary['seconds']['migrated']} s.", "",
             f"`tf-migrate verify` (harness ran on {summary['verify_harness_ran']} pairs whose plain runs both "
             "succeeded; the others count as failed):", ""]
    lines += table(list(summary["verify"]), [list(summary["verify"].values())]) + [""]
    speed = summary.get("speed_of_equivalent")
    if speed:
        step, wall = speed["per_step"], speed["wall"]
        lines += [f"Speed of the {speed['equivalent']} programs verified equivalent (legacy time / migrated time, "
                  "same machine, one run): per step, the harness's steady-state median at the step site: "
                  f"**{step['at_least_1x']} / {step['measured']}** at least 1.0x (median {step['median']}x; "
                  f"{step['indicative']} of them indicative only: under 20 steady steps or 1 s on a side; the "
                  "others had no step site timed on both sides); wall time of the plain runs, start-up and "
                  f"tracing included: **{wall['at_least_1x']} / {wall['measured']}** at least 1.0x (median "
                  f"{wall['median']}x).", ""]
    if summary["corpus_bugs"]:
        lines += ["Corpus bugs (legacy side does not run; recipe or stand-in to fix): "
                  + ", ".join(summary["corpus_bugs"]), ""]
    for side, title in (("migrated_failures", "Migrated runs"), ("legacy_failures", "Legacy runs")):
        if summary[side]:
            lines += [f"{title} that failed, by error:", ""]
            lines += table(["status", "error (normalised)", "count", "example"],
                           [[r["status"], r["error"], r["count"], r["example"]] for r in summary[side][:TOP]]) + [""]
    lines += ["Per program:", ""]
    lines += table(["program", "legacy", "migrated", "verify", "per step", "wall", "reason"],
                   [[run["id"], f"{run['legacy']['status']} {run['legacy']['seconds']}s",
                     f"{run['migrated']['status']} {run['migrated']['seconds']}s",
                     (run.get("verify") or {}).get("verdict", "-"),
                     _ratio(step_speedup(run)), _ratio(plain_wall_ratio(run)),
                     ((run.get("verify") or {}).get("reason") or run["migrated"]["error"] or "")[:140]]
                    for run in runs])
    return lines + [""]


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"
