"""The API tables (transforms/data/symbols.json, keywords.json) checked against the installed
TensorFlow: every source is a v1 name, every target a real TF2 name, renames keep the same object,
keyword data matches the real signatures, and regenerating reproduces the files byte for byte.

TensorFlow is imported in child processes: once as users run it (Keras 3), once with legacy Keras
(TF_USE_LEGACY_KERAS=1), which tf.compat.v1.layers and tf.compat.v1.nn.rnn_cell need.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transforms.common.graph_symbols import Category, categorize
from transforms.common.qualnames import canonical_tf_name
from transforms.common.tables import COMPAT_PREFIX, keyword_table, symbol_table

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import inspect, json, sys
import tensorflow as tf
from tensorflow.python.util import tf_decorator

def get(path):
    obj = tf
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj

def params(obj):
    target = tf_decorator.unwrap(obj)[1]
    if inspect.isclass(target):
        return list(inspect.signature(target.__init__).parameters)[1:]
    return list(inspect.signature(target).parameters)

request = json.load(sys.stdin)
resolved, signatures, same = [], {}, {}
for path in request["resolve"]:
    try:
        get(path)
        resolved.append(path)
    except Exception:
        pass
for path in request["signatures"]:
    signatures[path] = params(get(path))
for source, target in request["same"]:
    a, b = get(source), get(target)
    same[source] = tf_decorator.unwrap(a)[1] is tf_decorator.unwrap(b)[1] or bool(a == b)
print(json.dumps({"resolved": resolved, "signatures": signatures, "same": same}))
"""


def probe(request: dict, legacy_keras: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    child = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(request), env=env,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def compat_source(name: str) -> str:
    return COMPAT_PREFIX + name[len("tf."):]


@pytest.fixture(scope="module")
def tables():
    return symbol_table(), keyword_table()


@pytest.fixture(scope="module")
def legacy(tables):
    """Facts from a TensorFlow with legacy Keras: the v1 side."""
    symbols, keywords = tables
    sources = sorted(set(symbols.renames) | set(keywords.functions) | set(keywords.casts))
    legacy_targets = sorted(t for t in [*symbols.renames.values(), *symbols.contrib_reexports.values()]
                            if symbols.needs_legacy_keras(t))
    same = [(compat_source(s), t) for s, t in sorted(symbols.renames.items())
            if not t.startswith(COMPAT_PREFIX) and not s.startswith("tf.keras.")]
    signatures = [compat_source(name) for name in sorted(set(keywords.functions) | set(symbols.tf2_keywords))]
    request = {"resolve": [compat_source(s) for s in sources] + legacy_targets,
               "signatures": signatures, "same": same}
    return probe(request, legacy_keras=True)


@pytest.fixture(scope="module")
def default(tables):
    """Facts from TensorFlow as users run it: the TF2 side."""
    symbols, keywords = tables
    targets = set(symbols.renames.values()) | set(symbols.contrib.values()) | set(symbols.contrib_reexports.values())
    targets |= {entry["target"] for entry in symbols.pre_1_0.values()}
    targets |= {spec.target for spec in keywords.functions.values()}
    targets |= {f"tf.{dtype}" for dtype in keywords.casts.values()}
    signatures = {spec.target for spec in keywords.functions.values()} | set(symbols.tf2_keywords)
    request = {"resolve": sorted(targets), "signatures": sorted(signatures), "same": []}
    return probe(request, legacy_keras=False)


def test_tables_are_loaded_and_versioned(tables):
    symbols, keywords = tables
    assert symbols.tf_version and symbols.tf_version == keywords.tf_version
    assert len(symbols.renames) > 500 and len(keywords.functions) > 100
    assert symbols.renames["tf.placeholder"] == "tf.compat.v1.placeholder"
    assert symbols.renames["tf.log"] == "tf.math.log"
    assert keywords.functions["tf.reduce_sum"].keyword_renames["keep_dims"] == "keepdims"


def test_every_source_is_a_v1_name(tables, legacy):
    symbols, keywords = tables
    resolved = set(legacy["resolved"])
    sources = set(symbols.renames) | set(keywords.functions) | set(keywords.casts)
    missing = sorted(s for s in sources if compat_source(s) not in resolved)
    assert not missing, missing[:20]


def test_every_target_is_a_tf2_name(tables, default, legacy):
    symbols, keywords = tables
    resolved = set(default["resolved"])
    legacy_resolved = set(legacy["resolved"])
    for source, target in symbols.renames.items():
        where = legacy_resolved if symbols.needs_legacy_keras(target) else resolved
        assert target in where, (source, target)
    for spec in keywords.functions.values():
        assert spec.target in resolved, spec.name
    for source, target in symbols.contrib.items():
        assert target in resolved, (source, target)
    for source, target in symbols.contrib_reexports.items():
        where = legacy_resolved if symbols.needs_legacy_keras(target) else resolved
        assert target in where, (source, target)
    for dtype in keywords.casts.values():
        assert f"tf.{dtype}" in resolved


def test_tensorflow_0_names_are_gone_and_renamed_to_tf2_names(tables, default):
    """The names TensorFlow 1.0 renamed are not TF1 names any more (else the v1 table would hold
    them), and each is renamed to a name TF2 resolves."""
    from transforms.common.api_paths import missing_part
    symbols, _ = tables
    assert symbols.pre_1_0["tf.mul"]["target"] == "tf.multiply"
    assert symbols.pre_1_0["tf.train.SummaryWriter"]["target"] == "tf.compat.v1.summary.FileWriter"
    resolved = set(default["resolved"])
    for source, entry in symbols.pre_1_0.items():
        assert source not in symbols.renames and missing_part(source), source
        assert entry["target"] in resolved and entry["keywords"], (source, entry)


def test_contrib_rnn_reexports_cover_the_core_cells(tables):
    """TF 1.x's tf.contrib.rnn re-exported the core cells; the table renames each of them."""
    reexports = tables[0].contrib_reexports
    for cell in ("BasicLSTMCell", "BasicRNNCell", "GRUCell", "LSTMCell", "MultiRNNCell", "DropoutWrapper",
                 "LSTMStateTuple"):
        assert reexports[f"tf.contrib.rnn.{cell}"] == f"tf.compat.v1.nn.rnn_cell.{cell}"
    assert reexports["tf.contrib.rnn.static_rnn"] == "tf.compat.v1.nn.static_rnn"
    assert not any(name.startswith("tf.contrib.rnn.LayerNorm") for name in reexports)


def test_legacy_keras_targets_fail_under_keras_3(tables, default):
    """The legacy-Keras flag is needed: these names exist only with tf-keras."""
    symbols, _ = tables
    leaves = [t for t in symbols.renames.values()
              if symbols.needs_legacy_keras(t) and t not in symbols.legacy_keras_modules]
    assert "tf.compat.v1.layers.dense" in leaves
    assert not set(leaves) & set(default["resolved"])


def test_no_keras_legacy_optimizers(tables):
    symbols, keywords = tables
    targets = list(symbols.renames.values()) + [s.target for s in keywords.functions.values()]
    assert not [t for t in targets if t.startswith("tf.keras.optimizers.legacy")]


def test_renames_to_tf2_names_keep_the_same_object(legacy):
    different = sorted(source for source, same in legacy["same"].items() if not same)
    assert not different, different


def test_keyword_data_matches_the_real_signatures(tables, legacy, default):
    _, keywords = tables
    for name, spec in keywords.functions.items():
        v1 = legacy["signatures"][compat_source(name)]
        v2 = default["signatures"][spec.target]
        assert list(spec.v1_params) == v1, name
        assert list(spec.v2_params) == v2, name
        for old, new in spec.keyword_renames.items():
            assert old in v1 and new in v2, (name, old, new)
        for dropped in spec.dropped:
            assert dropped in v1 and dropped not in v2, (name, dropped)


def test_tf2_only_keywords_are_exactly_that(tables, legacy, default):
    symbols, _ = tables
    assert "step" in symbols.tf2_keywords["tf.summary.scalar"]
    for name, words in symbols.tf2_keywords.items():
        v1 = legacy["signatures"][compat_source(name)]
        v2 = default["signatures"][name]
        assert words and all(word in v2 and word not in v1 for word in words), name


def test_converter_reorders_agree_with_v1_positions(tables):
    _, keywords = tables
    checked = 0
    for spec in keywords.functions.values():
        for index, name in enumerate(spec.reorder or ()):
            if name is not None:
                assert spec.v1_positional[index] == name, spec.name
                checked += 1
    assert checked > 50


@pytest.mark.slow
def test_regenerating_reproduces_the_checked_in_files(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_api_tables.py"),
                    "--output-dir", str(tmp_path)], check=True, capture_output=True, timeout=600)
    for name in ("symbols.json", "keywords.json"):
        assert (tmp_path / name).read_bytes() == (ROOT / "transforms" / "data" / name).read_bytes(), name


def test_regenerating_the_slim_table_reproduces_it(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_slim_table.py"),
                    "--output-dir", str(tmp_path)], check=True, capture_output=True, timeout=300)
    assert (tmp_path / "slim.json").read_bytes() == (ROOT / "transforms" / "data" / "slim.json").read_bytes()


def test_slim_table_knows_the_arg_scope_ops_and_their_shared_keys():
    from transforms.common.tables import slim_table

    ops = slim_table()["arg_scope_ops"]
    assert ops["tf.contrib.slim.conv2d"]["key"] == ops["tf.contrib.layers.convolution2d"]["key"]
    assert ops["tf.contrib.layers.max_pool2d"]["parameters"][:3] == ["inputs", "kernel_size", "stride"]
    assert slim_table()["layer_aliases"]["tf.contrib.slim.fully_connected"] == "tf.contrib.layers.fully_connected"


def test_every_rename_target_exists_in_the_api_paths_table(tables):
    """The existence table that judges levels (api_paths.json) agrees with the rename table: every
    name a rename writes exists in the installed API, legacy-Keras modules included."""
    from transforms.common.api_paths import missing_part
    symbols, _ = tables
    missing = {target: missing_part(target) for target in symbols.renames.values() if missing_part(target)}
    assert not missing


def test_the_api_paths_table_describes_the_installed_tensorflow():
    from importlib import metadata

    from transforms.common.api_paths import tensorflow_version
    assert tensorflow_version() == metadata.version("tensorflow"), "run scripts/generate_api_paths.py"


@pytest.mark.slow
def test_regenerating_the_api_paths_table_reproduces_it(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_api_paths.py"),
                    "--output-dir", str(tmp_path)], check=True, capture_output=True, timeout=600)
    assert (tmp_path / "api_paths.json").read_bytes() == (ROOT / "transforms" / "data" / "api_paths.json").read_bytes()


def test_both_spellings_of_a_renamed_symbol_are_the_same_graph_symbol(tables):
    """The graph analysis sees the code before and after the renames (the stability run): a
    queue refused as `tf.FIFOQueue` must be refused as `tf.queue.FIFOQueue` too."""
    def category(name):
        return categorize(canonical_tf_name("tensorflow" + name[len("tf"):]) or name)
    symbols, _ = tables
    differing = [(old, new) for old, new in symbols.renames.items() if category(old) != category(new)]
    assert differing == []
    assert category("tf.queue.FIFOQueue") == category("tf.FIFOQueue") == (Category.UNSUPPORTED, "queues")
