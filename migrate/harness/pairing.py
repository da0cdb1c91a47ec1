"""Which migrated run site answers which legacy one.

The run-site map comes from the migration (`FileResult.run_sites`: legacy `Session.run` line ->
migrated function name) or, for a hand-migrated program, from a sidecar `<migrated>.sites.json`
holding the same list: `{"run_sites": [{"line": 33, "function": "train_step"}]}`. Legacy sites the
map does not cover but whose `Session.run` survived in the migrated file (a compat-level migration)
are paired through a line diff of the two sources. Nothing is paired by guesswork: a site with no
counterpart is reported as unpaired, and so is a pairing that is not certain (`SitePair.doubt`: a
line the migration rewrote, found only through the line diff; legacy sites with different fetches
mapped to one function; a counterpart returning a different number of values, `compare.py`), with the
reason, instead of comparing two different computations and calling the difference a mismatch.

A fused step loop (TFM301) replaces many calls of a step function `S` by one call of a multi-step
function that runs them in one graph. The sites file names it: `"fused_steps": [{"function":
"S_loop", "step_function": "S"}]`, and the migrated side records each call of it as `len(steps)`
calls of `S` (`fused.py`). One that also runs an evaluation `E` at some steps (under an `if` in
its loop) is declared `{"function": "S_loop", "step_function": ["E", "S"], "evaluation": "E"}`, the
list in the order of the calls in a step. A multi-step function fed batches drawn ahead, a row per step of
the call, adds the positions of those arguments after `first, stop`: `"rows": [0, 1]`. A function
running several step functions once each, in turn (TFM311), is declared `{"function": "D_and_G_step", "merges": ["D_step", "G_step"]}` and each
of its calls recorded as one call of each. An epochs function (TFM310) running `S_loop` once per
epoch, and the step functions the epoch loop evaluated, is declared `{"function": "S_loop_epochs",
"epochs_of": "S_loop", "calls": ["S_loop", "E"]}` (the calls in an epoch's order) and recorded epoch
by epoch. A migration made here declares the `<S>_loop` and `<S>_loop_epochs` functions that TFM301
and TFM310 wrote for its step functions, and TFM311's merged functions (`fused_map`).
"""
from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass

from migrate.harness.random_streams import line_map


class SiteMapError(Exception):
    """A run-site map file that cannot be read; the message says why."""


@dataclass(frozen=True)
class SitePair:
    legacy_key: str
    migrated_key: str | None
    how: str  # "run-site map", "source diff" or "unpaired"
    doubt: str | None = None  # why this pairing is not certain: the site is then reported unpaired


def sidecar_path(migrated_path: str) -> str:
    """Where the run-site map of a migrated program lives: `prog.py` -> `prog.sites.json`."""
    stem, _ = os.path.splitext(migrated_path)
    return stem + ".sites.json"


def load_site_map(path: str) -> dict[int, str]:
    """legacy line -> migrated function name, from a sites JSON file."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return {int(item["line"]): str(item["function"]) for item in data["run_sites"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SiteMapError(f"cannot read run-site map {path}: {error}") from error


def load_fused_map(path: str) -> dict[str, str | list[str]]:
    """multi-step function name -> step function name (a list of them, in call order, for a loop
    calling several step functions), from a sites JSON file (may be empty)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return {str(item["function"]): _fused_entry(item) for item in data.get("fused_steps", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise SiteMapError(f"cannot read fused steps of {path}: {error}") from error


def _fused_entry(item):
    if "rows" in item:
        entry = _fused_entry({key: value for key, value in item.items() if key != "rows"})
        entry = entry if isinstance(entry, dict) else {"step_function": entry}
        return {**entry, "rows": [int(position) for position in item["rows"]]}
    if "merges" in item:
        return {"merges": [str(step) for step in item["merges"]]}
    if "epochs_of" in item:
        return {"epochs_of": str(item["epochs_of"]), "calls": [str(call) for call in item["calls"]]}
    steps = item["step_function"]
    if "evaluation" in item:
        return {"step_function": [str(step) for step in steps], "evaluation": str(item["evaluation"])}
    return [str(step) for step in steps] if isinstance(steps, list) else str(steps)


def fused_map(source: str, step_functions) -> dict[str, str | list[str] | dict]:
    """The multi-step functions TFM301 defined in `source`: `def S_loop(` for a step function S; one
    that calls several step functions (S, then T, in its loop) maps to the list of them in call order.
    An epochs function TFM310 defined, `def S_loop_epochs(`, maps to `{"epochs_of": "S_loop", "calls":
    [...]}`: the functions its epoch loop calls, in order (S_loop and the step functions it evaluates)."""
    from transforms.speed.fusion.names import epochs_function_name, loop_function_name
    found, tree = {}, _parsed(source)
    for step in sorted(set(step_functions)):
        fused = loop_function_name(step)
        if re.search(r"^\s*def %s\(" % re.escape(fused), source, re.MULTILINE):
            called = _steps_called(tree, fused, set(step_functions))
            names = [name for name, _ in called]
            evaluations = [name for name, conditional in called if conditional]
            rows = _row_parameters(tree, fused)
            if len(evaluations) == 1 and len(names) == 2 and step in names and evaluations[0] != step:
                found[fused] = {"step_function": names, "evaluation": evaluations[0]}
            else:
                found[fused] = names if len(names) > 1 and names[0] == step else step
            if rows:
                entry = found[fused]
                found[fused] = {**entry, "rows": rows} if isinstance(entry, dict) else {"step_function": entry,
                                                                                       "rows": rows}
            epochs = epochs_function_name(step)
            if re.search(r"^\s*def %s\(" % re.escape(epochs), source, re.MULTILINE):
                calls = [name for name, _ in _steps_called(tree, epochs, set(step_functions) | {fused})]
                found[epochs] = {"epochs_of": fused, "calls": calls}
    found.update(_merged_functions(tree, set(step_functions)))
    return found


def _merged_functions(tree, steps: set[str]) -> dict[str, dict]:
    """The functions TFM311 defined at module level: each returns `(S.python_function(...), T.python_function(...),
    ...)` for step functions S, T, ...; name -> {"merges": [S, T, ...]}."""
    found = {}
    for node in tree.body if tree is not None else ():
        last = node.body[-1] if isinstance(node, ast.FunctionDef) else None
        if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple)):
            continue
        called = [element.func.value.id for element in last.value.elts
                  if isinstance(element, ast.Call) and isinstance(element.func, ast.Attribute)
                  and element.func.attr == "python_function" and isinstance(element.func.value, ast.Name)]
        if len(called) == len(last.value.elts) >= 2 and set(called) <= steps:
            found[node.name] = {"merges": called}
    return found


def _row_parameters(tree, function: str) -> list[int]:
    """Positions, after `first, stop`, of the multi-step function's parameters holding one row per step
    of the call: those its loop reads as `p[<step> - first]` (batches drawn ahead, TFM301)."""
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == function:
            params = [arg.arg for arg in node.args.args[2:]]
            read = {n.value.id for n in ast.walk(node) if isinstance(n, ast.Subscript)
                    and isinstance(n.value, ast.Name) and isinstance(n.slice, ast.BinOp)
                    and isinstance(n.slice.op, ast.Sub) and isinstance(n.slice.right, ast.Name)
                    and n.slice.right.id == "first"}
            return [i for i, name in enumerate(params) if name in read]
    return []


def _parsed(source: str):
    """The source's syntax tree, None when it does not parse."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _steps_called(tree, function: str, steps: set[str]) -> list[tuple[str, bool]]:
    """The step functions `function`'s loop calls, in order, each with whether it is called under an
    `if` (an evaluation run at some steps only); empty when the source did not parse (`tree` None)."""
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == function:
            loops = [n for n in ast.walk(node) if isinstance(n, ast.For)]
            calls = [n for loop in loops[:1] for n in ast.walk(loop)
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in steps]
            conditional = {id(n) for loop in loops[:1] for branch in ast.walk(loop) if isinstance(branch, ast.If)
                           for n in ast.walk(branch)}
            return [(call.func.id, id(call) in conditional)
                    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset))]
    return []


def write_site_map(path: str, run_sites, fused: dict[str, str] | None = None) -> None:
    """Write (line, function) pairs, and the fused multi-step functions if any, as a sites JSON file."""
    data = {"run_sites": [{"line": line, "function": name} for line, name in run_sites]}
    if fused:
        data["fused_steps"] = [{"function": name, **step} if isinstance(step, dict) else
                               {"function": name, "step_function": step} for name, step in sorted(fused.items())]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)


# Module path words an API rename adds or drops (`tf.X` -> `tf.compat.v1.X`): not a different call.
_API_PATH_WORDS = frozenset({"tf", "tensorflow", "compat", "v1", "v2"})


def rewritten_lines(old_source: str, new_source: str) -> frozenset[int]:
    """The old lines `line_map` maps to a new line that names other things (a one-for-one replacement
    whose identifiers differ, API module paths aside): the diff pairs such lines by position only, so
    the new line may hold another call (`sess.run(loss)` rewritten as `sess.run(acc)`)."""
    old_lines, new_lines = old_source.splitlines(), new_source.splitlines()
    return frozenset(old for old, new in line_map(old_source, new_source).items()
                     if _names(old_lines[old - 1]) != _names(new_lines[new - 1]))


def _names(line: str) -> frozenset[str]:
    """The identifiers a line of code uses, without API module path words."""
    return frozenset(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line)) - _API_PATH_WORDS


def module_line_maps(legacy_dir: str, migrated_dir: str, modules) -> dict[str, tuple[dict, frozenset]]:
    """For each program module (a path relative to the script's folder) present on both sides: its
    `line_map` and `rewritten_lines`, legacy version against migrated version."""
    maps = {}
    for module in sorted(set(modules)):
        try:
            with open(os.path.join(legacy_dir, module), encoding="utf-8", errors="replace") as handle:
                old = handle.read()
            with open(os.path.join(migrated_dir, module), encoding="utf-8", errors="replace") as handle:
                new = handle.read()
        except OSError:
            continue
        maps[module] = (line_map(old, new), rewritten_lines(old, new))
    return maps


def pair_sites(legacy_keys, migrated_keys, site_map: dict[int, str], lines: dict[int, int],
               rewritten: frozenset[int] = frozenset(), modules: dict | None = None) -> list[SitePair]:
    """Pair every legacy site (`line:N`) with a migrated one (`fn:name` or `line:M`). A site found
    only through the line diff on a line the migration rewrote (`rewritten`) is paired with a doubt.
    A site in another module of the program (`line:N@module`) pairs through that module's line diff
    (`modules`, from `module_line_maps`) with the migrated site at the same place in it."""
    available = set(migrated_keys)
    pairs = []
    for key in legacy_keys:
        place, _, module = key.partition(":")[2].partition("@")
        line = int(place)
        if module:
            pairs.append(_module_pair(key, line, module, (modules or {}).get(module), available))
        elif line in site_map:
            pairs.append(SitePair(key, f"fn:{site_map[line]}", "run-site map"))
        elif line in lines and f"line:{lines[line]}" in available:
            doubt = (f"line {line} was rewritten as line {lines[line]}: only the line diff pairs them, so "
                     "it may be another call") if line in rewritten else None
            pairs.append(SitePair(key, f"line:{lines[line]}", "source diff", doubt))
        else:
            pairs.append(SitePair(key, None, "unpaired"))
    return pairs


def _module_pair(key: str, line: int, module: str, maps, available: set) -> SitePair:
    lines, rewritten = maps or ({}, frozenset())
    counterpart = f"line:{lines[line]}@{module}" if line in lines else None
    if counterpart not in available:
        return SitePair(key, None, "unpaired")
    doubt = (f"{module} line {line} was rewritten as line {lines[line]}: only the line diff pairs them, "
             "so it may be another call") if line in rewritten else None
    return SitePair(key, counterpart, "source diff", doubt)


def fetch_count(site) -> int | None:
    """How many values (non-None leaves) a recorded site's first recorded call fetched; None when
    it recorded none."""
    if not site.values:
        return None
    return sum(leaf is not None for leaf in site.values[min(site.values)])


def merge_doubt(sites) -> str | None:
    """Why legacy sites mapped to one migrated function cannot be one stream of calls: they fetch
    different numbers of values, so at most one of them computes what the function returns."""
    counts = {site.line: fetch_count(site) for site in sites}
    if len({count for count in counts.values() if count is not None}) <= 1:
        return None
    described = ", ".join(f"line {line} fetches {count}" for line, count in sorted(counts.items()))
    return f"legacy sites mapped to one function fetch different values ({described})"
