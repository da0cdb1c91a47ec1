"""TF1's MNIST tutorial loader for the legacy runtime: `tensorflow.examples.tutorials.mnist.input_data`,
which TensorFlow 2 does not ship, so that TF1 tutorial programs run unmodified (and `tf-migrate verify`
has a legacy side for them).

It is the same code TFM601 writes into migrated programs (transforms/datasets/_mnist_emulation.py),
under TF1's signature, re-seeding NumPy with the call's seed or the default graph's seed, as TF1's
`random_seed.get_seed` gave them. That code is checked batch for batch against an independent
implementation of TF1's algorithm in tests/test_tutorial_mnist.py.
"""
from __future__ import annotations

import importlib.util
import sys
import types

MODULE = "tensorflow.examples.tutorials.mnist.input_data"


def register() -> None:
    """Put the module and its parent packages in sys.modules, unless something on the import path
    already provides it (a real TF1 installation, or the corpus's stand-in)."""
    if MODULE in sys.modules or _importable(MODULE):
        return
    names = MODULE.split(".")
    for depth in range(2, len(names)):
        package = ".".join(names[:depth])
        if package not in sys.modules:
            module = types.ModuleType(package, "TF1 tutorial package, for the legacy runtime")
            module.__path__ = []
            sys.modules[package] = module
    module = types.ModuleType(MODULE, __doc__)
    module.read_data_sets = read_data_sets
    sys.modules[MODULE] = module
    for depth in range(2, len(names)):
        setattr(sys.modules[".".join(names[:depth])], names[depth], sys.modules[".".join(names[:depth + 1])])


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package that does not exist
        return False


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=None, reshape=True, validation_size=5000,
                   seed=None, source_url=None):
    """TF1's `input_data.read_data_sets` (fake_data is not served)."""
    import tensorflow as tf

    from transforms.datasets._mnist_emulation import MNIST_SOURCE_URL, read_mnist_data_sets

    if fake_data:
        raise NotImplementedError("the legacy runtime's MNIST tutorial loader does not make fake data")
    return read_mnist_data_sets(train_dir, one_hot=one_hot, dtype=dtype or tf.float32, reshape=reshape,
                                validation_size=validation_size, seed=seed, source_url=source_url or MNIST_SOURCE_URL,
                                global_seed=tf.compat.v1.get_default_graph().seed)
