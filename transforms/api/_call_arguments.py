"""Re-express a call's arguments for the TF2 function of a FunctionSpec, or say why that is unsafe.

Each argument is matched to its v1 parameter (positional arguments by v1 position), renamed with TF's
keyword renames, and kept positional only while the TF2 function has the same parameter at the same
position; the rest become keywords. A v1-only argument is dropped only when TF2 provably behaves the
same (its value is what TF2 always does, or it only ever affected placement); an omitted one is fine
unless TF's metadata says TF2 behaves unlike the v1 default. Everything else raises Unsafe.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.values import is_string, same_literal, source, with_commas
from transforms.common.tables import FunctionSpec


class Unsafe(Exception):
    """The call cannot be proven to mean the same on the TF2 function; str(error) says why."""


@dataclass(frozen=True)
class Converted:
    args: tuple[cst.Arg, ...]
    changes: tuple[str, ...]


def convert_arguments(call: cst.Call, spec: FunctionSpec, reread: FunctionSpec | None = None,
                      irrelevant: frozenset[str] = frozenset()) -> Converted:
    """`reread`: the spec of the v1 function named like the target, if any. The rewritten call
    must mean the same when read as a call of it, as a later run will read it (positional
    arguments stay positional only where both readings agree). `irrelevant`: dropped parameters
    that cannot change what this call computes (see _call_checks.unpartitioned)."""
    changes: list[str] = []
    bound = _bind(call, spec)
    kept = _translate(bound, spec, changes, irrelevant)
    _check_omitted({name for name, _arg, _pos in bound} | irrelevant, spec)
    names = {name for name, _arg, _pos in kept}
    for name, value in spec.added_arguments.items():
        if name not in names:
            kept.append((name, cst.Arg(cst.parse_expression(value)), False))
            changes.append(f"added {name}={value}")
    missing = [name for name in spec.v2_required if name not in {n for n, _a, _p in kept}]
    if missing:
        raise Unsafe(f"TF2's {spec.target} requires {', '.join(missing)}")
    args = _layout(kept, spec, reread, changes)
    return Converted(with_commas(args, call.args), tuple(changes))


def _bind(call: cst.Call, spec: FunctionSpec) -> list[tuple[str, cst.Arg, bool]]:
    """(v1 parameter name, argument, passed positionally) for each argument of the call."""
    bound = []
    positional = 0
    for arg in call.args:
        if arg.star:
            raise Unsafe(f"{arg.star}-arguments hide which parameters are passed")
        if arg.keyword is None:
            if positional >= len(spec.v1_positional):
                raise Unsafe("more positional arguments than the v1 signature takes")
            bound.append((spec.v1_positional[positional], arg, True))
            positional += 1
        elif arg.keyword.value in spec.v1_params or arg.keyword.value in spec.v2_params:
            bound.append((arg.keyword.value, arg, False))
        else:
            raise Unsafe(f"unknown keyword {arg.keyword.value}")
    return bound


def _translate(bound, spec: FunctionSpec, changes: list[str], irrelevant: frozenset[str]) -> list[tuple[str, cst.Arg, bool]]:
    kept: list[tuple[str, cst.Arg, bool]] = []
    for name, arg, positional in bound:
        new = spec.keyword_renames.get(name, name) if name in spec.v1_params else name
        condition = spec.conditions.get(name) or spec.conditions.get(new)
        if condition and not _meets(arg.value, condition["ok"]):
            wanted = "a string" if condition["ok"] == "str" else f"{name}={condition['ok']}"
            raise Unsafe(f"{name}={source(arg.value)}: TF2 only behaves as with {wanted}")
        if new in spec.v2_params and not (condition and condition["remove_if_ok"]):
            if new in {n for n, _a, _p in kept}:
                raise Unsafe(f"{new} is given twice (as {name} and {new})")
            if new != name and not positional:
                changes.append(f"{name} -> {new}")
            kept.append((new, arg, positional))
        elif name in irrelevant:
            changes.append(f"dropped {name}={source(arg.value)} (no effect on this call)")
        elif condition or _droppable(name, arg.value, spec):
            _check_unambiguous(name, spec)
            changes.append(f"dropped {name}={source(arg.value)}")
        else:
            raise Unsafe(f"{name}={source(arg.value)} has no TF2 equivalent")
    return kept


def _meets(value: cst.BaseExpression, ok: str) -> bool:
    return is_string(value) if ok == "str" else same_literal(value, ok)


def _droppable(name: str, value: cst.BaseExpression, spec: FunctionSpec) -> bool:
    facts = spec.dropped.get(name)
    if facts is None:
        return False
    if facts["placement_only"]:
        return True
    return same_literal(value, facts["behaves_as"] or facts["v1_default"])


def _tf2_differs_from_default(name: str, spec: FunctionSpec) -> str | None:
    """What TF2 behaves as for a dropped parameter, when that is not TF1's default value."""
    facts = spec.dropped.get(name)
    if facts is None or facts["placement_only"] or facts["v1_default"] in (None, "None"):
        return None
    condition = spec.conditions.get(name, {}).get("ok")
    tf2 = facts["behaves_as"] or (condition if condition != "str" else None)
    return tf2 if tf2 is not None and not same_literal(facts["v1_default"], tf2) else None


def _check_unambiguous(name: str, spec: FunctionSpec) -> None:
    """Dropping an argument whose TF1 default differs from TF2 would make the rewritten call read
    as a TF1 call with that default: the rewrite could not be recognised as done."""
    if _tf2_differs_from_default(name, spec) is not None:
        raise Unsafe(f"TF2 has no {name} argument, and without it the call reads as TF1's default "
                     f"{name}={spec.dropped[name]['v1_default']}")


def _check_omitted(passed: set[str], spec: FunctionSpec) -> None:
    for name in spec.dropped:
        tf2 = None if name in passed else _tf2_differs_from_default(name, spec)
        if tf2 is not None:
            default = spec.dropped[name]["v1_default"]
            raise Unsafe(f"v1 default {name}={default} differs from TF2, which behaves as {name}={tf2}")


def _reads_as(spec: FunctionSpec | None, position: int) -> str | None:
    """The parameter a positional argument at `position` binds to when read as a v1 call of `spec`
    (after that spec's keyword renames); None if `spec` is None (no v1 reading exists)."""
    if spec is None:
        return None
    if position >= len(spec.v1_positional):
        return ""
    name = spec.v1_positional[position]
    return spec.keyword_renames.get(name, name)


def _layout(kept, spec: FunctionSpec, reread: FunctionSpec | None, changes: list[str]) -> list[cst.Arg]:
    args: list[cst.Arg] = []
    still_positional = True
    for name, arg, positional in kept:
        position = len(args)
        if positional and still_positional and position < len(spec.v2_positional) \
                and spec.v2_positional[position] == name and _reads_as(reread, position) in (None, name):
            args.append(arg)
            continue
        if positional:
            still_positional = False
            changes.append(f"positional {name} -> keyword")
        if arg.keyword is None or arg.keyword.value != name:
            arg = arg.with_changes(keyword=cst.Name(name), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        args.append(arg)
    return args
