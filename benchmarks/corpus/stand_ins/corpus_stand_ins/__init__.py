"""The corpus's synthetic data layer: stand-ins for what the corpus programs download or read.

`activate(names, cwd)` installs the import aliases of the named stand-ins and writes their files into
the working directory (only those not already there). `sitecustomize.py` beside this package calls it
at interpreter start when `TFM_CORPUS_STAND_INS` names some, so the legacy run, the migrated run and
both sides of `tf-migrate verify` see the same data. Everything is generated from fixed seeds.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from corpus_stand_ins import hook, text

NAMES_VARIABLE = "TFM_CORPUS_STAND_INS"
SCRIPT_PATH_VARIABLE = "TFM_CORPUS_SCRIPT_PATH"  # os.pathsep-separated, relative to the script's folder


@dataclass(frozen=True)
class StandIn:
    """What one stand-in provides: modules under the names programs import, and files in the cwd."""

    description: str
    aliases: dict[str, str] = field(default_factory=dict)
    files: dict[str, Callable[[], str]] = field(default_factory=dict)  # path relative to the cwd -> content


REGISTRY: dict[str, StandIn] = {
    "mnist": StandIn(
        "synthetic MNIST behind tensorflow.examples.tutorials.mnist.input_data",
        aliases={"tensorflow.examples.tutorials.mnist.input_data": "corpus_stand_ins.mnist"}),
    "tinyshakespeare": StandIn(
        "synthetic play text at data/tinyshakespeare/input.txt (char-RNN's default corpus)",
        files={"data/tinyshakespeare/input.txt": text.play_text}),
}


def unknown(names: list[str]) -> list[str]:
    return [name for name in names if name not in REGISTRY]


def activate(names: list[str], cwd: str) -> None:
    """Install the aliases and write the files of the named stand-ins (unknown names raise KeyError)."""
    aliases: dict[str, str] = {}
    for name in names:
        stand_in = REGISTRY[name]
        aliases.update(stand_in.aliases)
        write_files(stand_in.files, cwd)
    if aliases:
        hook.install(aliases)


def write_files(files: dict[str, Callable[[], str]], cwd: str) -> None:
    for relative, content in files.items():
        target = os.path.join(cwd, relative)
        if os.path.exists(target):
            continue
        os.makedirs(os.path.dirname(target) or cwd, exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(content())


def names_from_environment() -> list[str]:
    return [name for name in os.environ.get(NAMES_VARIABLE, "").split(",") if name]


def script_path_from_environment() -> list[str]:
    return [folder for folder in os.environ.get(SCRIPT_PATH_VARIABLE, "").split(os.pathsep) if folder]
