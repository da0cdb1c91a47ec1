"""Compatibility patches the legacy runtime applies so TF1-era code runs on TensorFlow 2.21.

Each patch only fills in what is missing and touches nothing a working program relies on:
  * NumPy 2 removed aliases such as `np.float` and `np.object` that TF1 code used freely;
  * tf-slim 1.1 reaches for TensorFlow internals (`ops.Tensor`, `control_flow_ops.cond`, ...)
    that later releases moved to other modules;
  * absl defines a `log_dir` flag, so a TF1 script defining its own died with DuplicateFlagError;
  * with op determinism on (`TF_DETERMINISTIC_OPS=1`, `enable_op_determinism()`), TF 2.x refuses
    random ops when no seed is set; TF 1.x ran them (unseeded), which TF1 programs rely on.
"""
from __future__ import annotations

import importlib
import importlib.util
import random
import warnings

import numpy as np

# NumPy aliases removed in NumPy 1.24 / 2.0, mapped to what they always meant.
_NUMPY_ALIASES = {
    "float": float, "int": int, "bool": bool, "object": object, "str": str, "complex": complex,
    "long": int, "unicode": str,
    "float_": np.float64, "complex_": np.complex128, "cfloat": np.complex128,
    "singlecomplex": np.complex64, "longfloat": np.longdouble, "clongfloat": np.clongdouble,
    "longcomplex": np.clongdouble, "string_": np.bytes_, "unicode_": np.str_,
    "bool8": np.bool_, "int0": np.intp, "uint0": np.uintp, "object0": np.object_,
    "Inf": np.inf, "Infinity": np.inf, "PINF": np.inf, "NINF": -np.inf,
    "NaN": np.nan, "NAN": np.nan, "PZERO": 0.0, "NZERO": -0.0,
    "product": np.prod, "cumproduct": np.cumprod, "alltrue": np.all, "sometrue": np.any,
    "round_": np.round,
}

# (module that lost a name tf-slim uses, that name, "module.name" where it lives now)
_FRAMEWORK, _OPS = "tensorflow.python.framework.", "tensorflow.python.ops."
_MOVED_TF_SYMBOLS = (
    (_FRAMEWORK + "ops", "Tensor", _FRAMEWORK + "tensor.Tensor"),
    (_FRAMEWORK + "ops", "IndexedSlices", _FRAMEWORK + "indexed_slices.IndexedSlices"),
    (_OPS + "array_ops", "stack", _OPS + "array_ops_stack.stack"),
    (_OPS + "array_ops", "unstack", _OPS + "array_ops_stack.unstack"),
    (_OPS + "control_flow_ops", "cond", _OPS + "cond.cond"),
    (_OPS + "control_flow_ops", "case", _OPS + "control_flow_case.case"),
    (_OPS + "control_flow_ops", "while_loop", _OPS + "while_loop.while_loop"),
    (_OPS + "control_flow_ops", "Assert", _OPS + "control_flow_assert.Assert"),
    (_OPS + "variable_scope", "variable", _OPS + "variable_v1.VariableV1"),
)

# Op seeds for random ops a TF1 program left unseeded, under op determinism (see below).
_UNSEEDED = random.SystemRandom()

# Flags absl defines itself that TF1 scripts commonly define again.
_ABSL_FLAGS_SCRIPTS_REDEFINE = ("log_dir",)


def restore_numpy_aliases() -> list[str]:
    """Put back the NumPy aliases this NumPy lacks; returns the names it added."""
    added = []
    for name, value in _NUMPY_ALIASES.items():
        with warnings.catch_warnings():  # NumPy warns when asked about some of the old names
            warnings.simplefilter("ignore")
            present = hasattr(np, name)
        if not present:
            setattr(np, name, value)
            added.append(name)
    if not hasattr(np, "asscalar"):
        np.asscalar = lambda array: np.asarray(array).item()
        added.append("asscalar")
    return added


def restore_moved_tf_symbols() -> None:
    """Re-export TF internals under the module names tf-slim 1.1 imports them from."""
    for module_name, name, new_home in _MOVED_TF_SYMBOLS:
        module = importlib.import_module(module_name)
        if name not in vars(module):
            home_module, home_name = new_home.rsplit(".", 1)
            setattr(module, name, getattr(importlib.import_module(home_module), home_name))
    _fix_batch_norm_loader()


def _fix_batch_norm_loader() -> None:
    """`tensorflow.python.layers.normalization` lazily imports `tf_keras.legacy_tf_layers`, a path
    tf-keras no longer has (it lives under `tf_keras.src`); point it at the real module."""
    if importlib.util.find_spec("tf_keras.legacy_tf_layers") is not None:
        return
    module = importlib.import_module("tensorflow.python.layers.normalization")
    module.normalization = importlib.import_module("tf_keras.src.legacy_tf_layers.normalization")


def allow_redefining_absl_flags() -> None:
    """Let a script define `log_dir` (and the like) although absl's logging module already did.

    The script's definition then replaces absl's, which is what TF1-era absl did not stop."""
    from absl import flags
    from absl import logging as _absl_logging  # noqa: F401 -- defines the flags we relax

    for name in _ABSL_FLAGS_SCRIPTS_REDEFINE:
        if name in flags.FLAGS:
            flags.FLAGS[name].allow_override = True


def allow_unseeded_random_ops_under_determinism() -> None:
    """Let random ops run without any seed while op determinism is on, as TF 1.x did.

    TF 2.x's `get_seed` raises RuntimeError for an op with neither a global nor an op seed when op
    determinism is enabled (and its kernels refuse the seeds (0, 0) that mean "unseeded"); TF 1.x's
    `TF_DETERMINISTIC_OPS` only chose deterministic kernels and left unseeded ops random. So such an
    op gets a fresh op seed drawn from the operating system's randomness, as TF 1.x's unseeded kernels
    did (not from Python's `random`, whose stream the program may rely on). The wrapper is installed
    everywhere TensorFlow and tf-slim look the function up (the module attribute and the
    `tf.compat.v1` exports)."""
    from tensorflow.python.framework import config, random_seed

    original = random_seed.get_seed
    if getattr(original, "_tf_migrate_unseeded", False):
        return

    def get_seed(op_seed):
        try:
            return original(op_seed)
        except RuntimeError:
            if not config.is_op_determinism_enabled():
                raise
            if _seeds_set(op_seed):
                raise
            return random_seed.DEFAULT_GRAPH_SEED, _UNSEEDED.randrange(1, 2 ** 31 - 1)

    get_seed._tf_migrate_unseeded = True
    get_seed.__doc__ = original.__doc__
    random_seed.get_seed = get_seed
    import tensorflow.compat.v1 as tf1
    for namespace in (tf1, tf1.random):
        if getattr(namespace, "get_seed", None) is original:
            namespace.get_seed = get_seed


def _seeds_set(op_seed) -> bool:
    """Whether a seed was set after all (then the error is another one, and is raised again)."""
    from tensorflow.python.framework import ops
    return op_seed is not None or ops.get_default_graph().seed is not None
