#!/usr/bin/env python3
"""Generate transforms/data/api_paths.json: every public module of the installed TensorFlow's API
(`tf.nn`, `tf.compat.v1.train`, `tf.keras.layers`, ...) with the names it exports.

    python scripts/generate_api_paths.py [--output-dir DIR]

This is what "runs on the TensorFlow we target" means for a migrated file's level: a `tf.` attribute
chain exists when each module on its way exports the next name (what follows a class or function,
`tf.data.Dataset.from_tensor_slices`, is an attribute of that object and not listed). The API is
read as a migrated program sees it, with Keras 3 behind `tf.keras`; the compat.v1 modules that only
load with legacy Keras (tf-keras selected by TF_USE_LEGACY_KERAS=1) are read in a second child
process with it and listed under `legacy_keras`. Output is sorted: regenerating gives identical files.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run in a child process: {module path: [exported names]} under the `tf.` paths read from argv.
_WALK_CHILD = r"""
import json, sys, types
import tensorflow as tf

API_MODULES = ("tensorflow._api.", "keras.api", "keras._tf_keras", "tf_keras.api", "tensorboard.summary._tf")
SKIPPED = {"tf.compat.v2", "tf.compat.v1.compat"}

def resolve(path):
    obj = tf
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj

def is_module(obj):
    try:
        return isinstance(obj, types.ModuleType)
    except Exception:
        return False

def walk(path, module, ancestors, out):
    names = []
    for name in sorted(dir(module)):
        child = f"{path}.{name}"
        if name.startswith("_") or child in SKIPPED:
            continue
        try:
            obj = getattr(module, name)
        except Exception:
            continue
        names.append(name)
        api = getattr(obj, "__name__", "").startswith(API_MODULES) if is_module(obj) else False
        if api and id(obj) not in ancestors:
            walk(child, obj, ancestors | {id(obj)}, out)
    out[path] = names

out = {}
for path in sys.argv[1:]:
    module = resolve(path)
    walk(path, module, frozenset({id(module)}), out)
print(json.dumps(out))
"""


def walk_api(roots: list[str], legacy_keras: bool) -> dict[str, list[str]]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    done = subprocess.run([sys.executable, "-c", _WALK_CHILD, *roots], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def legacy_keras_modules() -> list[str]:
    symbols = json.loads((ROOT / "transforms" / "data" / "symbols.json").read_text())
    return list(symbols["legacy_keras_modules"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "transforms" / "data")
    args = parser.parse_args(argv)
    from importlib import metadata
    legacy = legacy_keras_modules()
    table = {
        "about": "Public modules of the installed TensorFlow's API and the names each exports "
                 "(scripts/generate_api_paths.py); legacy_keras: modules that load only with tf-keras.",
        "tensorflow": metadata.version("tensorflow"),
        "keras": metadata.version("keras"),
        "modules": walk_api(["tf"], legacy_keras=False),
        "legacy_keras": walk_api(legacy, legacy_keras=True),
    }
    path = args.output_dir / "api_paths.json"
    path.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"written: {path} ({len(table['modules'])} modules)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
