"""Run an unmodified TensorFlow 1.x program on TensorFlow 2.21.

    python -m migrate.legacy_runtime SCRIPT [ARGS...]

No TF 1.x wheel exists for today's Python, so the legacy side of every comparison runs on TF2's
`compat.v1` with v2 behaviour disabled. `install()` prepares the process: it asks for tf-keras's
legacy layers, disables v2 behaviour, makes `import tensorflow` resolve to the v1 API (a proxy
module that still carries TensorFlow's `__path__`, `__version__` and internals), serves
`tf.contrib.X` from where TF 2, tf-slim and tf-keras keep its code and names any symbol without a home
(`_legacy_contrib.py`), serves TF1's MNIST tutorial loader (`_legacy_tutorials.py`), tolerates
a script defining absl's `log_dir` flag, and restores the NumPy aliases NumPy 2 removed.
`run_script()` then runs a file as `__main__`, as `python SCRIPT` would.
"""
from __future__ import annotations

import os
import runpy
import sys
import types
from collections.abc import Sequence

USAGE = "usage: python -m migrate.legacy_runtime SCRIPT [ARGS...]"
_MARKER = "__tf_migrate_legacy__"
# Taken from the real `tensorflow` package rather than from compat.v1, so that the import system
# and TensorFlow's own modules keep seeing the package they expect.
_REAL_PACKAGE_ATTRS = ("__path__", "__file__", "__spec__", "__loader__", "__package__",
                       "__version__", "__git_version__", "__compiler_version__", "compat")


class TF1Namespace(types.ModuleType):
    """`sys.modules['tensorflow']` under the legacy runtime: the `tf.compat.v1` API, plus
    `tf.contrib`. Names compat.v1 lacks fall back to the real package, then to its loaded
    submodules (`tensorflow.python`, ...), so TensorFlow's internals keep working."""

    def __init__(self, real: types.ModuleType, contrib: types.ModuleType) -> None:
        super().__init__("tensorflow", real.compat.v1.__doc__)
        for attr in _REAL_PACKAGE_ATTRS:
            if hasattr(real, attr):
                setattr(self, attr, getattr(real, attr))
        self.contrib = contrib
        self._legacy_v1 = real.compat.v1
        self._legacy_real = real
        setattr(self, _MARKER, True)

    def __getattr__(self, name: str):
        namespace = vars(self)  # not self._legacy_v1, which would recurse during __init__
        sources = (namespace.get("_legacy_v1"), namespace.get("_legacy_real"))
        for source in filter(None, sources):
            try:
                return getattr(source, name)
            except AttributeError:
                pass
        submodule = sys.modules.get(f"tensorflow.{name}")
        if submodule is not None:
            return submodule
        raise AttributeError(f"module 'tensorflow' (TF1 API) has no attribute {name!r}")

    def __dir__(self):
        return sorted(set(dir(self._legacy_v1)) | {"contrib"})


def install() -> types.ModuleType:
    """Prepare this process to run TF1 programs; returns the `tensorflow` module they will see.

    Idempotent. Must run before anything imports TensorFlow, because TensorFlow reads
    TF_USE_LEGACY_KERAS (which `tf.compat.v1.layers` needs) once, at import time."""
    current = sys.modules.get("tensorflow")
    if getattr(current, _MARKER, False):
        return current
    _ask_for_legacy_keras(tensorflow_loaded=current is not None)

    import tensorflow as real

    from migrate import _legacy_contrib, _legacy_patches, _legacy_tutorials

    real.compat.v1.disable_v2_behavior()
    _legacy_patches.restore_numpy_aliases()
    _legacy_patches.restore_moved_tf_symbols()
    _legacy_patches.allow_redefining_absl_flags()
    _legacy_patches.allow_unseeded_random_ops_under_determinism()
    proxy = TF1Namespace(real, _legacy_contrib.build_contrib_package())
    sys.modules["tensorflow"] = proxy
    _legacy_tutorials.register()
    return proxy


def _ask_for_legacy_keras(tensorflow_loaded: bool) -> None:
    if os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true"):
        return
    if tensorflow_loaded:
        raise RuntimeError("migrate.legacy_runtime.install() must run before TensorFlow is "
                           "imported (or with TF_USE_LEGACY_KERAS=1 set): tf.compat.v1.layers "
                           "needs tf-keras, which TensorFlow selects only at import time.")
    os.environ["TF_USE_LEGACY_KERAS"] = "1"


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run the file at `path` as `__main__` with `sys.argv == [path, *args]`, after `install()`.

    The script's directory goes first on sys.path, as with `python SCRIPT`. A `sys.exit()` in the
    script propagates as SystemExit; sys.argv and sys.path are restored afterwards."""
    install()
    script_dir = os.path.dirname(os.path.abspath(path))
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    sys.path.insert(0, script_dir)
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: `python -m migrate.legacy_runtime SCRIPT [ARGS...]`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv else 2
    if not os.path.isfile(argv[0]):
        print(f"legacy_runtime: no such script: {argv[0]}", file=sys.stderr)
        return 2
    run_script(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
