"""Import hooks of the stand-in layer: stand-in modules under the names programs import, and
folders a program expects on sys.path.

A program's `from tensorflow.examples.tutorials.mnist import input_data` gets our synthetic module
(TF 2 ships no `tensorflow.examples`); the intermediate packages are empty namespace modules. The
finder sits first on `sys.meta_path` and answers only the names it was given, so every other import,
TensorFlow's own included, is untouched.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `aliases` (imported name -> our module's name) and the packages above them."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = dict(aliases)
        self.packages = {name.rsplit(".", depth)[0] for name in aliases for depth in range(1, name.count(".") + 1)}

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.aliases:
            return importlib.util.spec_from_loader(fullname, self)
        if fullname in self.packages and missing_elsewhere(fullname, path):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        if spec.name in self.aliases:
            return importlib.import_module(self.aliases[spec.name])
        return None  # default creation: an empty package

    def exec_module(self, module):
        if module.__spec__.name not in self.aliases:
            module.__path__ = []


def missing_elsewhere(fullname: str, path) -> bool:
    """True when no other finder on sys.meta_path can import `fullname` (a package we only fill in)."""
    for finder in sys.meta_path:
        if isinstance(finder, AliasFinder) or not hasattr(finder, "find_spec"):
            continue
        if finder.find_spec(fullname, path) is not None:
            return False
    return True



def install(aliases: dict[str, str]) -> None:
    sys.meta_path.insert(0, AliasFinder(aliases))


class ScriptRelativeFinder(importlib.abc.MetaPathFinder):
    """Finds top-level modules in folders given relative to the running script's folder.

    Some programs expect to be run from their repository's root (`from nets import alexnet` in
    `nets/alexnet_test.py`). The legacy run, the migrated run and both sides of the harness each
    put the script's own folder first on sys.path, so the folder is resolved against `sys.path[0]`
    at import time: the same setting serves the original tree and the migrated one. It sits last
    on sys.meta_path and answers only what nothing else could import.
    """

    def __init__(self, relative_folders: list[str]) -> None:
        self.relative_folders = list(relative_folders)

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or not sys.path:
            return None
        folders = [os.path.normpath(os.path.join(sys.path[0] or os.curdir, rel)) for rel in self.relative_folders]
        return importlib.machinery.PathFinder.find_spec(fullname, folders)


def install_script_relative(relative_folders: list[str]) -> None:
    sys.meta_path.append(ScriptRelativeFinder(relative_folders))
