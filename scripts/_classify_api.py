"""Decide, for every v1 API name, what a TF2 program must say instead (see generate_api_tables.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

from _api_metadata import (CAST_DTYPES, KERAS_BACKED_V2_MODULES, LEGACY_KERAS_MODULES, SEMANTIC_CHANGES,
                           ConverterMetadata, is_module, resolve, v1_export_names, v2_export_names)
from _function_specs import function_spec, parameters

COMPAT = "tf.compat.v1."
LEGACY_OPTIMIZERS = "tf.keras.optimizers.legacy"  # removed in Keras 3: never emitted


def compat_name(path: str) -> str:
    return COMPAT + path[len("tf."):]


def in_legacy_keras(path: str) -> bool:
    short = "tf." + path[len(COMPAT):] if path.startswith(COMPAT) else path
    return any(short == m or short.startswith(m + ".") for m in LEGACY_KERAS_MODULES)


def best_v2_name(names: list[str], preferred: str | None) -> str:
    """The converter's choice when it is one of the object's v2 names, else the plainest name."""
    if preferred in names:
        return preferred
    return min(names, key=lambda n: ("experimental" in n, "raw_ops" in n, n.count("."), n))


@dataclass
class Classification:
    renames: dict[str, str] = field(default_factory=dict)
    functions: dict[str, dict] = field(default_factory=dict)
    casts: dict[str, str] = field(default_factory=dict)
    # The converter's tf.keras renames: kept only where the target works under Keras 3 as is.
    keras_renames: dict[str, str] = field(default_factory=dict)
    # The converter's tf.contrib replacements (reported, never applied).
    contrib: dict[str, str] = field(default_factory=dict)
    # v1 functions kept on compat.v1 whose TF2 namesake takes keywords they lack (tf.summary.scalar:
    # data, step, description): a call passing one is TF2 code already.
    tf2_keywords: dict[str, list[str]] = field(default_factory=dict)

    def candidate_paths(self) -> list[str]:
        paths = set(self.renames.values()) | set(self.keras_renames.values()) | set(self.contrib.values())
        paths |= {f["target"] for f in self.functions.values()}
        paths |= {compat_name(name) for name in self.renames} | {compat_name(name) for name in self.functions}
        return sorted(paths)

    def _reads_as_other_v1_function(self, source: str, target: str) -> bool:
        """A rewritten call must not read as a call of a v1 function that means something else:
        tf.nn.softmax_cross_entropy_with_logits_v2 -> tf.nn.softmax_cross_entropy_with_logits would
        be taken for the v1 function of that name (which stops gradients into labels) next time."""
        other = self.functions.get(target)
        return target != source and other is not None and other["rewrite"] is not None

    def settled_tf2_keywords(self, renames: dict[str, str]) -> dict[str, list[str]]:
        return {name: words for name, words in sorted(self.tf2_keywords.items())
                if renames.get(name) == compat_name(name)}

    def settled_contrib(self, reachable: set[str]) -> dict[str, str]:
        return {source: target for source, target in sorted(self.contrib.items()) if target in reachable}

    def settle(self, reachable: set[str]) -> tuple[dict[str, str], dict[str, dict]]:
        """Drop what Keras 3 TensorFlow cannot reach, falling back to compat.v1 where that can."""
        def usable(target: str) -> bool:
            return (target in reachable or in_legacy_keras(target)) and not target.startswith(LEGACY_OPTIMIZERS)

        renames: dict[str, str] = {}
        for source, target in self.renames.items():
            for choice in (target, compat_name(source)):
                if usable(choice):
                    renames[source] = choice
                    break
        renames.update({source: target for source, target in self.keras_renames.items()
                        if usable(target) and not target.startswith(COMPAT + "keras")})
        functions = {}
        for source, spec in self.functions.items():
            if usable(spec["target"]) and not self._reads_as_other_v1_function(source, spec["target"]):
                functions[source] = spec
            elif usable(compat_name(source)):
                renames[source] = compat_name(source)
        return dict(sorted(renames.items())), dict(sorted(functions.items()))


def classify_symbols(tf, symbols: dict, modules: dict, converter: ConverterMetadata) -> Classification:
    result = Classification()
    aliases: dict[int, list[str]] = {}
    for path, obj in symbols.items():
        aliases.setdefault(id(obj), []).append(path)
    for path, obj in sorted(symbols.items()):
        names = sorted(set(aliases[id(obj)]) | set(v1_export_names(obj)))
        _classify_one(tf, path, obj, names, converter, result)
    for path in sorted(modules):
        if path != "tf" and not is_module(resolve(tf, path)):
            result.renames[path] = compat_name(path)
    _add_converter_keras_renames(tf, converter, result)
    _add_tf2_keywords(tf, symbols, result)
    for name, rewrite in converter.rewrites.items():
        if rewrite == "cast" and name in symbols:
            dtype = name.rsplit(".", 1)[-1][len("to_"):]
            result.casts[name] = CAST_DTYPES.get(dtype, dtype)
    return result


def _classify_one(tf, path, obj, names, converter, result) -> None:
    v2_names = v2_export_names(obj)
    if path in v2_names:
        return
    if any(path.startswith(m + ".") for m in LEGACY_KERAS_MODULES):
        result.renames[path] = compat_name(path)
        return
    v2_obj = resolve(tf, path)
    if v2_obj is obj:
        return
    if v2_names:
        result.renames[path] = best_v2_name(v2_names, converter.symbol_renames.get(path))
        return
    preferred = converter.symbol_renames.get(path, "").replace("tf.compat.v2.", "tf.")
    moved_to_compat = preferred.startswith(COMPAT) or any(
        name in converter.compat_by_warning or name in SEMANTIC_CHANGES for name in names)
    if moved_to_compat:
        result.renames[path] = compat_name(path)
        return
    target = preferred or (path if v2_obj is not None else "")
    spec = function_spec(tf, path, obj, target, names, converter) if target else None
    if spec is not None:
        result.functions[path] = spec
        if v2_obj is None:
            result.renames[path] = compat_name(path)
    elif preferred and not callable(obj) and _equal(resolve(tf, preferred), obj):
        result.renames[path] = preferred
    else:
        result.renames[path] = compat_name(path)


def _equal(a, b) -> bool:
    try:
        return a is not None and bool(a == b)
    except Exception:
        return False


def _add_converter_keras_renames(tf, converter, result) -> None:
    """tf.keras is not walked (see SKIPPED_PATHS): keep the converter's explicit renames of it whose
    source still exists in the v1 API. Also collect its tf.contrib replacements."""
    for source, target in sorted(converter.symbol_renames.items()):
        if source.startswith("tf.keras.") and resolve(tf.compat.v1, source) is not None:
            result.keras_renames[source] = target.replace("tf.compat.v2.", "tf.")
        elif source.startswith("tf.contrib.") and not target.startswith(COMPAT):
            result.contrib[source] = target.replace("tf.compat.v2.", "tf.")


def _add_tf2_keywords(tf, symbols: dict, result: Classification) -> None:
    for path, target in sorted(result.renames.items()):
        v2_obj = resolve(tf, path) if target == compat_name(path) and path in symbols else None
        if v2_obj is None or not callable(v2_obj) or any(
                path == m or path.startswith(m + ".") for m in KERAS_BACKED_V2_MODULES):
            continue
        v1_params, v2_params = parameters(symbols[path]), parameters(v2_obj)
        if v1_params is not None and v2_params is not None:
            v1_names = {p.name for p in v1_params}
            only = [p.name for p in v2_params if p.name not in v1_names]
            if only:
                result.tf2_keywords[path] = only
