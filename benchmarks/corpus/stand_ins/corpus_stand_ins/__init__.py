"""The corpus's synthetic data layer: stand-ins for what the corpus programs download or read.

`activate(names, cwd)` installs the import aliases of the named stand-ins and writes their files into
the working directory (only those not already there; generated once per machine into a cache folder,
`TFM_CORPUS_CACHE` or the temporary folder, and copied from there). `sitecustomize.py` beside this package calls it
at interpreter start when `TFM_CORPUS_STAND_INS` names some, so the legacy run, the migrated run and
both sides of `tf-migrate verify` see the same data. Everything is generated from fixed seeds.
"""
from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from corpus_stand_ins import embeddings, hook, mnist

NAMES_VARIABLE = "TFM_CORPUS_STAND_INS"
CACHE_VARIABLE = "TFM_CORPUS_CACHE"
CACHE_VERSION = 1  # bump when a generator changes, so that no stale file is served
SCRIPT_PATH_VARIABLE = "TFM_CORPUS_SCRIPT_PATH"  # os.pathsep-separated, relative to the script's folder


@dataclass(frozen=True)
class StandIn:
    """What one stand-in provides: modules under the names programs import, and files in the cwd."""

    description: str
    aliases: dict[str, str] = field(default_factory=dict)
    files: dict[str, Callable[[], str | bytes]] = field(default_factory=dict)  # path in the cwd -> content
    setup: tuple[Callable[[], None], ...] = ()  # hooks installed at start (downloads served, ...)


REGISTRY: dict[str, StandIn] = {
    "mnist": StandIn(
        "synthetic MNIST behind tensorflow.examples.tutorials.mnist.input_data and the downloads of its "
        "loader (TF1's, or TFM601's copy in a migrated program)",
        aliases={"tensorflow.examples.tutorials.mnist.input_data": "corpus_stand_ins.mnist"},
        setup=(mnist.serve_downloads, mnist.fixed_entropy, mnist.budget_migrated_loader)),
    "mnist_idx": StandIn(
        "full-size synthetic MNIST as the original gzipped IDX files under data/mnist/",
        files={f"data/mnist/{name}": functools.partial(lambda name: mnist.idx_files()[name], name)
               for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                            "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}),
    "glove": StandIn(
        "synthetic GloVe archive where the O'Reilly book's GRU chapter looks for it (a Windows path, which on "
        "Linux is one relative file name)",
        files={"c:\\tmp\\data\\glove.840B.300d.zip": embeddings.glove_zip}),
}


def unknown(names: list[str]) -> list[str]:
    return [name for name in names if name not in REGISTRY]


def activate(names: list[str], cwd: str) -> None:
    """Install the aliases and hooks and write the files of the named stand-ins (unknown names raise KeyError)."""
    aliases: dict[str, str] = {}
    for name in names:
        stand_in = REGISTRY[name]
        aliases.update(stand_in.aliases)
        write_files(stand_in.files, cwd)
        for install in stand_in.setup:
            install()
    if aliases:
        hook.install(aliases)


def write_files(files: dict[str, Callable[[], str | bytes]], cwd: str) -> None:
    for relative, content in files.items():
        target = os.path.join(cwd, relative)
        if not os.path.exists(target):
            os.makedirs(os.path.dirname(target) or cwd, exist_ok=True)
            shutil.copyfile(cached(relative, content), target)


def cached(relative: str, content: Callable[[], str | bytes]) -> str:
    """The cache file of a stand-in file, generated on first use (atomically: runs share the cache)."""
    folder = os.environ.get(CACHE_VARIABLE) or os.path.join(tempfile.gettempdir(), "tfm-corpus-stand-ins")
    path = os.path.join(folder, f"v{CACHE_VERSION}", relative.replace("/", "__"))
    if not os.path.isfile(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = content()
        partial = f"{path}.{os.getpid()}.partial"
        with open(partial, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(partial, path)
    return path


def names_from_environment() -> list[str]:
    return [name for name in os.environ.get(NAMES_VARIABLE, "").split(",") if name]


def script_path_from_environment() -> list[str]:
    return [folder for folder in os.environ.get(SCRIPT_PATH_VARIABLE, "").split(os.pathsep) if folder]
