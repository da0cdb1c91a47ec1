#!/usr/bin/env python3
"""Generate transforms/data/symbols.json and transforms/data/keywords.json from the installed
TensorFlow's own API metadata.

    python scripts/generate_api_tables.py [--output-dir DIR]

symbols.json maps every TF1 name (canonical `tf.` spelling, as the codemods see it) whose meaning
changes in TF2 onto the name a migrated program must use:

* the v1 object is exported in TF2 under another name (tf_export's v2 names): that name;
* TF2 has no such object: `tf.compat.v1.<name>` (the code keeps running, on the v1 API);
* the v1 name also exists in TF2 but names a different function whose call signature TF's own
  converter (tensorflow/tools/compatibility) knows how to translate: absent from `renames`, present
  in keywords.json, and the call-site transforms decide per call.

symbols.json also lists the compat.v1 modules that need legacy Keras, the converter's tf.contrib
replacements (reported, never applied), the tf.contrib names that were re-exports of core objects
TF2 still has (renamed like any other symbol) and, for v1 functions kept on compat.v1, the keywords
only their TF2 namesake takes (a call passing one is TF2 code already).

keywords.json holds, for the call-checked functions, what a call needs to run on the TF2 function:
parameter order on both sides, keyword renames, dropped keywords with their v1 defaults, the
converter's reorder lists, argument conditions and structural rewrites; and the `tf.to_<dtype>`
casts. The codemods never import TensorFlow; this script does (with legacy Keras, to see
tf.compat.v1.layers; targets are checked in a child process without it). Output is sorted and free
of addresses, so regenerating gives byte-identical files.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

# tf.compat.v1.layers and tf.compat.v1.nn.rnn_cell only load with legacy Keras (tf-keras); the
# variable is read when TensorFlow is imported, so it is set before any import of it.
os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from _api_metadata import LEGACY_KERAS_MODULES, ConverterMetadata, v2_export_names, walk_v1_api  # noqa: E402
from _classify_api import classify_symbols  # noqa: E402

# Run in a child process: which `tf.`-paths resolve, read as a JSON list on stdin.
_RESOLVE_CHILD = """
import json, sys
import tensorflow as tf
def resolves(path):
    obj = tf
    try:
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
    except Exception:
        return False
    return True
print(json.dumps([p for p in json.load(sys.stdin) if resolves(p)]))
"""


def resolvable_in_default_tf(paths: list[str]) -> set[str]:
    """The `tf.`-paths that resolve under `import tensorflow as tf` as users run it: Keras 3, no
    TF_USE_LEGACY_KERAS. Checked in a child process because this one runs with legacy Keras."""
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    child = subprocess.run([sys.executable, "-c", _RESOLVE_CHILD], input=json.dumps(paths),
                           capture_output=True, text=True, env=env, check=True)
    return set(json.loads(child.stdout.strip().splitlines()[-1]))


# TF 1.x's contrib/util/__init__.py imported these from tensorflow.python.framework.tensor_util
# (MakeNdarray as make_ndarray): contrib name -> tensor_util name.
CONTRIB_UTIL_TENSOR_UTIL = {"constant_value": "constant_value", "make_ndarray": "MakeNdarray",
                            "make_tensor_proto": "make_tensor_proto"}
# TF 1.x's contrib/signal/__init__.py imported these from tensorflow.python.ops.signal, which TF2
# exports as tf.signal (`frames` was its alias of `frame`): contrib name -> core name.
CONTRIB_SIGNAL = {"frame": "frame", "frames": "frame", "hamming_window": "hamming_window",
                  "hann_window": "hann_window", "inverse_stft": "inverse_stft",
                  "inverse_stft_window_fn": "inverse_stft_window_fn",
                  "linear_to_mel_weight_matrix": "linear_to_mel_weight_matrix",
                  "mfccs_from_log_mel_spectrograms": "mfccs_from_log_mel_spectrograms",
                  "overlap_and_add": "overlap_and_add", "stft": "stft"}


def contrib_reexports(tf, converter: ConverterMetadata) -> dict[str, str]:
    """tf.contrib names that were core objects: TF 1.x's contrib/rnn/__init__.py imported the core
    RNN cells (tensorflow.python.ops.rnn_cell) and the static RNN functions, so `tf.contrib.rnn.X` is
    the object TF2 keeps as `tf.compat.v1.nn.rnn_cell.X` (or `tf.compat.v1.nn.X`). The converter
    lists most of them; the cell wrappers (DropoutWrapper, ...) come from the module itself.
    tf.contrib.util's tensor_util functions and tf.contrib.signal's core signal ops take the names
    TF2 exports them under."""
    from tensorflow.python.framework import tensor_util

    renames = {f"tf.contrib.rnn.{name}": f"tf.compat.v1.nn.rnn_cell.{name}"
               for name in dir(tf.compat.v1.nn.rnn_cell) if not name.startswith("_")}
    for source, target in converter.symbol_renames.items():
        if source.startswith("tf.contrib.rnn.") and target.startswith("tf.compat.v1.nn."):
            renames[source] = target
    for name, core_name in CONTRIB_UTIL_TENSOR_UTIL.items():
        exported = v2_export_names(getattr(tensor_util, core_name))
        if exported:
            renames[f"tf.contrib.util.{name}"] = exported[0]
    for name, core_name in CONTRIB_SIGNAL.items():
        exported = v2_export_names(getattr(tf.signal, core_name))
        if exported:
            renames[f"tf.contrib.signal.{name}"] = exported[0]
    return dict(sorted(renames.items()))


def build_tables() -> tuple[dict, dict]:
    import tensorflow as tf

    converter = ConverterMetadata.load()
    symbols, modules = walk_v1_api(tf)
    result = classify_symbols(tf, symbols, modules, converter)
    reachable = resolvable_in_default_tf(result.candidate_paths())
    renames, functions = result.settle(reachable)
    symbols_json = {
        "tf_version": tf.__version__,
        "legacy_keras_modules": sorted(f"tf.compat.v1.{m[3:]}" for m in LEGACY_KERAS_MODULES),
        "renames": renames,
        "contrib": result.settled_contrib(reachable),
        "contrib_reexports": contrib_reexports(tf, converter),
        "tf2_keywords": result.settled_tf2_keywords(renames),
    }
    keywords_json = {"tf_version": tf.__version__, "functions": functions,
                     "casts": dict(sorted(result.casts.items()))}
    return symbols_json, keywords_json


def dump(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "transforms" / "data")
    args = parser.parse_args(argv)
    symbols_json, keywords_json = build_tables()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "symbols.json").write_text(dump(symbols_json), encoding="utf-8")
    (args.output_dir / "keywords.json").write_text(dump(keywords_json), encoding="utf-8")
    print(f"{len(symbols_json['renames'])} renames, {len(keywords_json['functions'])} "
          f"call-checked functions -> {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
