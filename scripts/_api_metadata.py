"""The facts behind the API tables, read from the installed TensorFlow (used by
generate_api_tables.py; imports TensorFlow, so the codemods never import this).

Three sources, all TensorFlow's own:
* the v1 API tree (`tf.compat.v1` and its submodules) and tf_export's v1/v2 names of each object;
* TensorFlow's upgrade converter, `tensorflow.tools.compatibility` (keyword renames, reorders,
  argument transformers, warnings that say a call was moved to compat.v1);
* `inspect.signature` of the v1 function and of its TF2 counterpart.
"""
from __future__ import annotations

import functools
import re
import types
from dataclasses import dataclass, field

# v1 modules served by legacy Keras (tf-keras); under Keras 3 their compat.v1 spelling fails.
LEGACY_KERAS_MODULES = ("tf.layers", "tf.nn.rnn_cell")
# TF2 modules that Keras serves (Keras 3 by default): their functions are not TensorFlow's, so a v1
# function is never call-checked against one of them.
KERAS_BACKED_V2_MODULES = ("tf.keras", "tf.initializers", "tf.losses", "tf.metrics", "tf.optimizers")
# Not walked: the compat modules re-export the whole API again; tf.keras is Keras's API, not
# TensorFlow's (the same spelling keeps working under Keras 3), so only the converter's explicit
# tf.keras renames are taken.
SKIPPED_PATHS = {"tf.compat.v1", "tf.compat.v2", "tf.keras"}
API_MODULE_PREFIXES = ("tensorflow._api.v2.compat.v1", "tensorflow.compat.v1", "tf_keras.api._v1")

# Renames the converter makes although results change; TF2 keeps the v1 behaviour only on compat.v1.
SEMANTIC_CHANGES = {
    "tf.image.resize_images": "tf.image.resize samples with half-pixel centers and has no "
                              "align_corners, so resized values differ",
}
# Classes whose TF2 counterpart serves TF1 code: constructor calls are checked like function
# calls, other uses are left alone. The datasets differ only in the iterator methods, which
# transforms/api/rewrite_changed_arguments.py moves to tf.compat.v1.data functions, as TF's converter does;
# tf.name_scope only in the v1-only default_name/values arguments, which the call check refuses.
DROP_IN_CLASSES = {"tf.Variable", "tf.name_scope", "tf.data.Dataset", "tf.data.FixedLengthRecordDataset",
                   "tf.data.TFRecordDataset", "tf.data.TextLineDataset"}
# Keyword renames the converter implies but does not list: its tf.device condition names the
# TF2 parameter, which is the v1 `device_name_or_function` argument.
EXTRA_KEYWORD_RENAMES = {"tf.device": {"device_name_or_function": "device_name"}}
# Dropped parameters that only ever affected placement or validation, never computed values.
PLACEMENT_ONLY = {"colocate_gradients_with_ops", "use_cudnn_on_gpu", "validate_indices"}
# tf.to_<suffix> casts whose suffix is not the dtype's own name (as in TF's converter).
CAST_DTYPES = {"float": "float32", "double": "float64"}
_BEHAVES_AS = re.compile(r"(?:behaves? as if (?:it )?(?:was|were|is)? ?set to|equivalent ?to setting"
                         r" it to) (True|False)")
# "`partition_strategy` has been removed from <function name>.  The 'div' strategy will be used"
_REMOVED_DEFAULT = re.compile(r"`(\w+)` has been removed from .*?The '(\w+)' \w+ will be used", re.S)


def is_module(obj) -> bool:
    try:
        return isinstance(obj, types.ModuleType)
    except Exception:  # a lazy loader that cannot load under this Keras
        return False


def walk_v1_api(tf) -> tuple[dict[str, object], dict[str, object]]:
    """({v1 path: object}, {v1 module path: module}) for every public name under tf.compat.v1.

    Foreign modules the API re-exports (absl flags, unittest.mock) contribute their top-level names
    but are not descended into."""
    symbols: dict[str, object] = {}
    modules: dict[str, object] = {}

    def visit(path: str, module, ancestors: frozenset[int], foreign: bool) -> None:
        modules[path] = module
        for name in sorted(dir(module)):
            child = f"{path}.{name}"
            if name.startswith("_") or child in SKIPPED_PATHS:
                continue
            try:
                obj = getattr(module, name)
            except Exception:
                continue
            if not is_module(obj):
                symbols[child] = obj
            elif not foreign and id(obj) not in ancestors:
                api = getattr(obj, "__name__", "").startswith(API_MODULE_PREFIXES)
                visit(child, obj, ancestors | {id(obj)}, foreign=not api)

    visit("tf", tf.compat.v1, frozenset({id(tf.compat.v1)}), foreign=False)
    return symbols, modules


def resolve(root, path: str):
    """The object at `tf.`-path `path` under `root`, or None."""
    obj = root
    try:
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
    except Exception:
        return None
    return obj


def unwrap(obj):
    from tensorflow.python.util import tf_decorator
    return tf_decorator.unwrap(obj)[1]


def _export_names(obj, getter_name: str) -> list[str]:
    from tensorflow.python.util import tf_export
    try:
        return [f"tf.{name}" for name in getattr(tf_export, getter_name)(unwrap(obj))]
    except Exception:
        return []


def v1_export_names(obj) -> list[str]:
    """The v1 names TensorFlow exports `obj` under (tf_export.get_v1_names), `tf.`-spelled."""
    return _export_names(obj, "get_v1_names")


def v2_export_names(obj) -> list[str]:
    """The TF2 names TensorFlow exports `obj` under (tf_export.get_v2_names), `tf.`-spelled."""
    return _export_names(obj, "get_v2_names")


@dataclass
class ConverterMetadata:
    """What tensorflow.tools.compatibility knows, keyed by the converter's (v1) names."""

    symbol_renames: dict[str, str]
    keyword_renames: dict[str, dict[str, str | None]]
    reorders: dict[str, list[str | None]]
    conditions: dict[str, dict[str, dict]] = field(default_factory=dict)
    added_arguments: dict[str, dict[str, str]] = field(default_factory=dict)
    rewrites: dict[str, str] = field(default_factory=dict)
    behaves_as: dict[str, dict[str, str]] = field(default_factory=dict)
    compat_by_warning: set[str] = field(default_factory=set)

    @classmethod
    def load(cls) -> "ConverterMetadata":
        import ast

        from tensorflow.tools.compatibility import tf_upgrade_v2
        spec = tf_upgrade_v2.TFAPIChangeSpec()
        meta = cls(dict(spec.symbol_renames), dict(spec.function_keyword_renames),
                   dict(spec.function_reorders))
        for name, transformer in spec.function_transformers.items():
            func = transformer.func if isinstance(transformer, functools.partial) else transformer
            kwargs = transformer.keywords if isinstance(transformer, functools.partial) else {}
            if func.__name__ == "_rename_if_arg_found_transformer":
                ok = kwargs["arg_ok_predicate"].__name__.replace("_is_ast_", "")
                meta.conditions.setdefault(name, {})[kwargs["arg_name"]] = {
                    "ok": {"true": "True", "false": "False"}.get(ok, ok),
                    "remove_if_ok": bool(kwargs.get("remove_if_ok"))}
            elif func.__name__ == "_add_argument_transformer":
                meta.added_arguments.setdefault(name, {})[kwargs["arg_name"]] = ast.unparse(
                    kwargs["arg_value_ast"])
            else:
                meta.rewrites[name] = func.__name__.strip("_").replace("_transformer", "")
        for name, by_arg in spec.function_arg_warnings.items():
            for (arg, _position), (_level, message) in by_arg.items():
                match = _BEHAVES_AS.search(message)
                if match:
                    meta.behaves_as.setdefault(name, {})[arg] = match.group(1)
        for name, (_level, message) in spec.function_warnings.items():
            if re.search(r"converted to (tf\.)?compat\.v1", message):
                meta.compat_by_warning.add(name)
            removed = _REMOVED_DEFAULT.search(message)
            if removed:
                meta.behaves_as.setdefault(name, {})[removed.group(1)] = repr(removed.group(2))
        for name, renames in EXTRA_KEYWORD_RENAMES.items():
            meta.keyword_renames.setdefault(name, {}).update(renames)
        return meta

    def merged(self, table: dict, names: list[str]) -> dict:
        """Union of a per-name table over all v1 names of one object (the converter often lists
        only one of them, e.g. tf.argmax but not tf.math.argmax)."""
        out: dict = {}
        for name in sorted(names):
            out.update(table.get(name, {}))
        return out
