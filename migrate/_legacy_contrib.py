"""`tf.contrib` for the legacy runtime: served from where TensorFlow 2, tf-slim and tf-keras still keep
its code, with an error naming the exact symbol for the rest.

TensorFlow 2 deleted `tf.contrib`, but much of what real programs used from it lives on: the layers,
arg scopes, losses and metrics in tf-slim, the RNN cells in `tf.compat.v1.nn.rnn_cell`, the input
pipeline helpers in `tf.data.experimental`. Each served `tf.contrib.X` is a `ContribModule` that looks
a name up in X's homes (`HOMES`), in order, plus the names that moved under another name; a name none
of them has fails with

    tf.contrib.rnn.LayerNormBasicLSTMCell has no home in TensorFlow 2.21: ...

both as an attribute (`tf.contrib.rnn.LayerNormBasicLSTMCell`, AttributeError) and as an import
(`from tensorflow.contrib.rnn import LayerNormBasicLSTMCell`, ImportError). A `tf.contrib.X` that is not
served at all fails the same way, naming X (`REMOVED` says where its code went, when it went anywhere).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
from dataclasses import dataclass, field

CONTRIB = "tensorflow.contrib"
V1 = "tensorflow.compat.v1"


@dataclass(frozen=True)
class Home:
    """Where the symbols of one `tf.contrib.X` live now: `modules`, searched in order, and `moved`
    (contrib name -> `module:name` for a symbol that lives on under another name)."""

    modules: tuple[str, ...]
    moved: dict[str, str] = field(default_factory=dict)
    missing_hint: str = ""  # where some of what the homes lack went, for the error message


_RNN_DRIVERS = ("dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn", "static_bidirectional_rnn",
                "static_state_saving_rnn")

HOMES = {
    "slim": Home(("tf_slim",)),
    "layers": Home(("tf_slim.layers", "tf_slim"),
                   missing_hint="feature columns moved to tf.compat.v1.feature_column under other names"),
    "framework": Home(("tf_slim", f"{V1}.train"),
                      {"nest": f"{V1}:nest", "sort": f"{V1}:sort", "argsort": f"{V1}:argsort",
                       "is_tensor": f"{V1}:is_tensor"}),
    # The cells TF 1.x had already moved to tf.nn.rnn_cell, and the RNN drivers of tf.nn.
    "rnn": Home((f"{V1}.nn.rnn_cell",), {name: f"{V1}.nn:{name}" for name in _RNN_DRIVERS},
                missing_hint="contrib-only cells (LayerNorm, NAS, attention and block cells) were removed; "
                             "TensorFlow Addons had some, for TF <= 2.15"),
    "metrics": Home(("tf_slim.metrics",)),
    "losses": Home(("tf_slim.losses", f"{V1}.losses")),
    "training": Home(("tf_slim.training.training", "tf_slim.training.evaluation"),
                     missing_hint="HParams and the queue-based samplers were removed"),
    "data": Home((f"{V1}.data.experimental", f"{V1}.data")),
    "keras": Home(("tf_keras",)),
    "lookup": Home((f"{V1}.lookup",), {"HashTable": f"{V1}.lookup:StaticHashTable"}),
    "signal": Home((f"{V1}.signal",)),
    "util": Home((), {"make_tensor_proto": f"{V1}:make_tensor_proto", "make_ndarray": f"{V1}:make_ndarray",
                      "constant_value": f"{V1}:get_static_value"}),
}

# Where the code of contrib modules nothing here serves went, to make the error actionable.
REMOVED = {
    "learn": "tf.estimator and tf.contrib.learn are gone; use Keras",
    "distributions": "distributions moved to TensorFlow Probability",
    "seq2seq": "TensorFlow Addons carried seq2seq on, for TF <= 2.15 only",
    "crf": "TensorFlow Addons carried crf on, for TF <= 2.15 only",
    "opt": "most optimizers moved to Keras or TensorFlow Addons",
    "summary": "tf.summary (TF2) is its successor, with another API",
    "tpu": "TPU support moved to tf.distribute.TPUStrategy",
}


class ContribSymbolMissing(AttributeError):
    """A served `tf.contrib.X` whose homes lack the requested name."""


class ContribModuleRemoved(ImportError):
    """A `tf.contrib` module, or a name in one, that TensorFlow 2 deleted and nothing serves."""


def _tf_version() -> str:
    version = getattr(sys.modules.get("tensorflow"), "__version__", "2")
    return ".".join(version.split(".")[:2])


def removal_message(name: str) -> str:
    """Why `tf.contrib.<name>` cannot be used here, and where to look instead."""
    hint = f" ({REMOVED[name]})" if name in REMOVED else ""
    served = ", ".join(f"tf.contrib.{key}" for key in HOMES)
    return (f"tf.contrib.{name} has no home in TensorFlow {_tf_version()}: tf.contrib was removed{hint}. "
            f"The legacy runtime serves {served}.")


def missing_symbol_message(module: str, name: str) -> str:
    """Why `tf.contrib.<module>.<name>` cannot be used although `tf.contrib.<module>` is served."""
    home = HOMES[module]
    where = ", ".join(home.modules + tuple(sorted({target.split(":")[0] for target in home.moved.values()})))
    hint = f" ({home.missing_hint})" if home.missing_hint else ""
    return (f"tf.contrib.{module}.{name} has no home in TensorFlow {_tf_version()}: the legacy runtime serves "
            f"tf.contrib.{module} from {where}, which lack it{hint}.")


class ContribModule(types.ModuleType):
    """One served `tf.contrib.X`: names resolve in its homes, found names are cached on the module."""

    def __init__(self, name: str, home: Home) -> None:
        super().__init__(f"{CONTRIB}.{name}", f"tf.contrib.{name}, served from {', '.join(home.modules)}.")
        self.__path__ = []  # a package: `from tensorflow.contrib.X import y` then asks the finder about y
        self._contrib_name = name
        self._home = home

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_contrib_name", "_home"):
            raise AttributeError(name)
        found = resolve(self._home, name)
        if found is None:
            raise ContribSymbolMissing(missing_symbol_message(self._contrib_name, name))
        setattr(self, name, found)
        return found

    def __dir__(self):
        names = set(super().__dir__()) | set(self._home.moved)
        for module in self._home.modules:
            names |= {name for name in dir(importlib.import_module(module)) if not name.startswith("_")}
        return sorted(names)


def resolve(home: Home, name: str):
    """`name` in a home: a moved symbol, an attribute of one of its modules, or a submodule of one
    (`tf.contrib.slim.nets`); None when none has it."""
    if name in home.moved:
        module, _, attribute = home.moved[name].partition(":")
        return getattr(importlib.import_module(module), attribute)
    for module_name in home.modules:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            return getattr(module, name)
        if hasattr(module, "__path__") and importlib.util.find_spec(f"{module_name}.{name}") is not None:
            return importlib.import_module(f"{module_name}.{name}")
    return None


class _ContribPackage(types.ModuleType):
    """`tensorflow.contrib`: attributes are the served modules; anything else raises clearly."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in HOMES:
            return sys.modules[f"{CONTRIB}.{name}"]
        raise ContribSymbolMissing(removal_message(name))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(HOMES))


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
    """Imports below `tensorflow.contrib`: `tensorflow.contrib.<served>.<sub>` is the module of that
    name in the served module's homes (`tensorflow.contrib.slim.nets` is `tf_slim.nets`); anything else
    raises ContribModuleRemoved naming what is missing, instead of a bare ModuleNotFoundError (which
    `from tensorflow.contrib.rnn import X` would turn into a message naming nothing)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(CONTRIB + "."):
            return None
        name, _, rest = fullname[len(CONTRIB) + 1:].partition(".")
        if name not in HOMES:
            raise ContribModuleRemoved(removal_message(name), name=fullname)
        for module in HOMES[name].modules:
            candidate = f"{module}.{rest}"
            if _module_exists(candidate):
                return importlib.util.spec_from_loader(fullname, _AliasLoader(candidate))
        raise ContribModuleRemoved(missing_symbol_message(name, rest), name=fullname)


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent that is not a package
        return False


def build_contrib_package() -> types.ModuleType:
    """Create `tensorflow.contrib`, register it and its served modules in sys.modules, and install
    the finder that explains the missing ones."""
    package = _ContribPackage(CONTRIB, "TF1's tf.contrib, as far as TensorFlow 2, tf-slim and tf-keras keep it.")
    package.__path__ = []  # a package, so `from tensorflow.contrib import x` consults the finder
    sys.modules[CONTRIB] = package
    for name, home in HOMES.items():
        sys.modules[f"{CONTRIB}.{name}"] = ContribModule(name, home)
    if not any(isinstance(finder, _ContribFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ContribFinder())
    return package
