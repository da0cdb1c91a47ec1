"""keywords.json entries: how a call of a v1 function maps onto its TF2 counterpart, from the two
signatures and TF's converter metadata (see generate_api_tables.py)."""
from __future__ import annotations

import inspect

from _api_metadata import (DROP_IN_CLASSES, KERAS_BACKED_V2_MODULES, PLACEMENT_ONLY, ConverterMetadata,
                           resolve, unwrap)


def parameters(obj) -> list[inspect.Parameter] | None:
    """The call parameters of a function, or of a class's constructor; None if not inspectable or
    if it takes *args/**kwargs (then a call's arguments cannot be matched to names)."""
    target = unwrap(obj)
    try:
        if inspect.isclass(target):
            params = list(inspect.signature(target.__init__).parameters.values())[1:]
        elif inspect.isfunction(target) or inspect.ismethod(target):
            params = list(inspect.signature(target).parameters.values())
        else:
            return None
    except (TypeError, ValueError):
        return None
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return None if any(p.kind in variadic for p in params) else params


def default_repr(param: inspect.Parameter) -> str | None:
    if param.default is inspect.Parameter.empty:
        return None
    text = repr(param.default)
    return "<object>" if " at 0x" in text else text


def _positional(params) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def function_spec(tf, path: str, obj, target: str, names: list[str],
                  converter: ConverterMetadata) -> dict | None:
    if not (inspect.isfunction(unwrap(obj)) or path in DROP_IN_CLASSES):
        return None
    if any(target == m or target.startswith(m + ".") for m in KERAS_BACKED_V2_MODULES):
        return None
    v2_obj = resolve(tf, target)
    v1_params, v2_params = parameters(obj), (parameters(v2_obj) if v2_obj is not None else None)
    if v1_params is None or v2_params is None:
        return None
    v1_by_name = {p.name: p for p in v1_params}
    v2_by_name = {p.name: p for p in v2_params}
    renames = {old: new for old, new in converter.merged(converter.keyword_renames, names).items()
               if new is not None and old in v1_by_name and new in v2_by_name}
    behaves_as = converter.merged(converter.behaves_as, names)
    dropped = {
        p.name: {"v1_default": default_repr(p), "behaves_as": behaves_as.get(p.name),
                 "placement_only": p.name in PLACEMENT_ONLY}
        for p in v1_params if p.name not in v2_by_name and p.name not in renames}
    reorder = next((converter.reorders[n] for n in sorted(names) if n in converter.reorders), None)
    rewrite = next((converter.rewrites[n] for n in sorted(names) if n in converter.rewrites), None)
    return {
        "target": target,
        "is_class": inspect.isclass(unwrap(obj)),
        "v1_params": [p.name for p in v1_params],
        "v1_positional": _positional(v1_params),
        "v2_params": [p.name for p in v2_params],
        "v2_positional": _positional(v2_params),
        "v2_required": [p.name for p in v2_params if p.default is inspect.Parameter.empty],
        "keyword_renames": dict(sorted(renames.items())),
        "dropped": dict(sorted(dropped.items())),
        "conditions": converter.merged(converter.conditions, names),
        "added_arguments": converter.merged(converter.added_arguments, names),
        "reorder": reorder,
        "rewrite": rewrite,
    }
