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
TF2 still has (renamed like any other symbol), the functions TensorFlow 1.0 renamed (their old
names renamed on to TF2, calls with the old keywords left alone) and, for v1 functions kept on
compat.v1, the keywords only their TF2 namesake takes (a call passing one is TF2 code already).

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

from _api_metadata import LEGACY_KERAS_MODULES, ConverterMetadata, unwrap, v2_export_names, walk_v1_api  # noqa: E402
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


# TensorFlow 1.0 renamed these functions of earlier releases; TensorFlow's 0.x-to-1.0 converter
# (tensorflow/tools/compatibility/tf_upgrade.py in the 1.x sources, `function_renames`) listed each
# old name with its 1.0 name. TF 1.x no longer had the old names, so code still spelling them ran
# on neither TF 1.x nor TF 2. Entries whose 1.0 name is not a TF1 API symbol are dropped below
# (tf.batch_band_part pointed at a tf.band_part that never existed).
PRE_1_0_FUNCTION_RENAMES = {
    "tf.inv": "tf.reciprocal", "tf.listdiff": "tf.setdiff1d", "tf.list_diff": "tf.setdiff1d",
    "tf.mul": "tf.multiply", "tf.neg": "tf.negative", "tf.sub": "tf.subtract",
    "tf.train.SummaryWriter": "tf.summary.FileWriter", "tf.scalar_summary": "tf.summary.scalar",
    "tf.histogram_summary": "tf.summary.histogram", "tf.audio_summary": "tf.summary.audio",
    "tf.image_summary": "tf.summary.image", "tf.merge_summary": "tf.summary.merge",
    "tf.merge_all_summaries": "tf.summary.merge_all",
    "tf.image.per_image_whitening": "tf.image.per_image_standardization",
    "tf.all_variables": "tf.global_variables", "tf.VARIABLES": "tf.GLOBAL_VARIABLES",
    "tf.initialize_all_variables": "tf.global_variables_initializer",
    "tf.initialize_variables": "tf.variables_initializer",
    "tf.initialize_local_variables": "tf.local_variables_initializer",
    "tf.batch_matrix_diag": "tf.matrix_diag", "tf.batch_band_part": "tf.band_part",
    "tf.batch_set_diag": "tf.set_diag", "tf.batch_matrix_transpose": "tf.matrix_transpose",
    "tf.batch_matrix_determinant": "tf.matrix_determinant", "tf.batch_matrix_inverse": "tf.matrix_inverse",
    "tf.batch_cholesky": "tf.cholesky", "tf.batch_cholesky_solve": "tf.cholesky_solve",
    "tf.batch_matrix_solve": "tf.matrix_solve", "tf.batch_matrix_triangular_solve": "tf.matrix_triangular_solve",
    "tf.batch_matrix_solve_ls": "tf.matrix_solve_ls", "tf.batch_self_adjoint_eig": "tf.self_adjoint_eig",
    "tf.batch_self_adjoint_eigvals": "tf.self_adjoint_eigvals", "tf.batch_svd": "tf.svd",
    "tf.batch_fft": "tf.fft", "tf.batch_ifft": "tf.ifft", "tf.batch_fft2d": "tf.fft2d",
    "tf.batch_ifft2d": "tf.ifft2d", "tf.batch_fft3d": "tf.fft3d", "tf.batch_ifft3d": "tf.ifft3d",
    "tf.select": "tf.where", "tf.complex_abs": "tf.abs", "tf.batch_matmul": "tf.matmul",
    "tf.pack": "tf.stack", "tf.unpack": "tf.unstack",
}


# Where TF 1.0 changed more than the name (TF 0.12's signatures): the summary ops' last parameter
# was `name` and became `family`, batch_matmul's third and fourth were adj_x / adj_y (matmul's are
# transpose_a / transpose_b), and the tag of a TF 1.0 summary takes the enclosing name scope.
_SUMMARY_TAG = "its tag now includes the enclosing name scope, as TF 1.0's summaries' tags do"
PRE_1_0_CAVEATS = {
    "tf.scalar_summary": {"max_positional": 3, "note": _SUMMARY_TAG},
    "tf.histogram_summary": {"max_positional": 3, "note": _SUMMARY_TAG},
    "tf.image_summary": {"max_positional": 4, "note": _SUMMARY_TAG},
    "tf.audio_summary": {"max_positional": 5, "note": _SUMMARY_TAG},
    "tf.batch_matmul": {"max_positional": 2},
}


def pre_1_0_renames(symbols: dict[str, object], renames: dict[str, str]) -> dict[str, dict]:
    """Pre-1.0 name -> {"target": what its TF 1.0 name becomes in TF2, "keywords": the TF 1.0
    function's parameters, and the caveats above}. A call passing a keyword the TF 1.0 function
    does not take (a parameter renamed with it), or more positional arguments than keep their
    meaning, is left for a human."""
    from tensorflow.python.util import tf_inspect

    table = {}
    for old, new in PRE_1_0_FUNCTION_RENAMES.items():
        if old in symbols or new not in symbols:
            continue
        try:
            parameters = list(tf_inspect.signature(unwrap(symbols[new])).parameters)
        except (TypeError, ValueError):
            continue
        table[old] = {"target": renames.get(new, new), "keywords": sorted(parameters),
                      **PRE_1_0_CAVEATS.get(old, {})}
    return dict(sorted(table.items()))


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
        "pre_1_0_renames": pre_1_0_renames(symbols, renames),
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
