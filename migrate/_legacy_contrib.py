"""`tf.contrib` for the legacy runtime: what tf-slim still provides, and a clear error for the rest.

TensorFlow 2 deleted `tf.contrib`. Three of its modules survive in the tf-slim package
(`slim`, `layers`, `framework`); every other `tf.contrib.X` fails with a message naming it, both
as an attribute (`tf.contrib.rnn`) and as an import (`from tensorflow.contrib import rnn`).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

CONTRIB = "tensorflow.contrib"

# tf.contrib.<name> -> the module that serves it (tf-slim, or tf.compat.v1 for the RNN core).
_SERVED = {"slim": "tf_slim", "layers": "tf_slim.layers", "framework": "tf_slim", "rnn": "migrate._legacy_contrib_rnn"}

# Where the code of a few widely used contrib modules went, to make the error actionable.
_HINTS = {
    "data": "the input pipeline lives on as tf.data",
    "learn": "tf.estimator and tf.contrib.learn are gone; use Keras",
    "distributions": "distributions moved to TensorFlow Probability",
}


class ContribModuleRemoved(ImportError):
    """A `tf.contrib` module that TensorFlow 2 deleted and nothing serves."""


def removal_message(name: str) -> str:
    """Why `tf.contrib.<name>` cannot be used here, and where to look instead."""
    served = ", ".join(f"tf.contrib.{key}" for key in _SERVED)
    hint = f" ({_HINTS[name]})" if name in _HINTS else ""
    return (f"tf.contrib.{name} has no home in TensorFlow 2: tf.contrib was removed{hint}. "
            f"The legacy runtime serves only {served} (through tf-slim and tf.compat.v1).")


class _ContribPackage(types.ModuleType):
    """`tensorflow.contrib`: attributes are the served modules; anything else raises clearly."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _SERVED:
            return sys.modules[f"{CONTRIB}.{name}"]
        raise AttributeError(removal_message(name))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_SERVED))


class _AliasLoader(importlib.abc.Loader):
    """Loads a module name as an alias of an existing module (the module object is shared)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.target_spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import system stamped the alias spec on the shared module; give it its own back.
        module.__spec__ = self.target_spec


class _ContribFinder(importlib.abc.MetaPathFinder):
    """Resolves `tensorflow.contrib.<served>.<sub>` (e.g. `tensorflow.contrib.slim.nets`) to the
    tf-slim module of the same name, and turns `import tensorflow.contrib.<unserved>` into
    ContribModuleRemoved instead of a bare ModuleNotFoundError."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(CONTRIB + "."):
            return None
        name, _, rest = fullname[len(CONTRIB) + 1:].partition(".")
        if name not in _SERVED:
            raise ContribModuleRemoved(removal_message(name), name=fullname)
        target_name = f"{_SERVED[name]}.{rest}" if rest else _SERVED[name]
        if importlib.util.find_spec(target_name) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(target_name))


def build_contrib_package() -> types.ModuleType:
    """Create `tensorflow.contrib`, register it and its served modules in sys.modules, and
    install the finder that explains the missing ones."""
    package = _ContribPackage(CONTRIB, "TF1's tf.contrib, as far as tf-slim still provides it.")
    package.__path__ = []  # a package, so `from tensorflow.contrib import x` consults the finder
    sys.modules[CONTRIB] = package
    for name, module_name in _SERVED.items():
        sys.modules[f"{CONTRIB}.{name}"] = importlib.import_module(module_name)
    if not any(isinstance(finder, _ContribFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ContribFinder())
    return package
