"""RNN cells -> Keras recurrent layers (transforms/graph/rnn/cells.py) and the harness's conversion of
TF1 cell weights to the Keras layout (migrate/harness/rnn_weights.py).

The conversion is checked against the cells' own equations: one step of each TF1 cell, written out in
NumPy from TF1's definitions (packed [inputs, state] kernel, gates i, j, f, o with forget_bias for the
LSTM; reset/update gates then candidate for the GRU), must equal one step of the Keras cell (Keras's
equations, gate order i, f, c, o / z, r, h) run with the converted weights."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from migrate.harness.rnn_weights import rnn_source

ROOT = Path(__file__).resolve().parent.parent
RNG = np.random.RandomState(0)
INPUTS, UNITS = 3, 4


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def convert(keras_cell: str, legacy: dict[str, np.ndarray], layer: str = "rnn") -> dict[str, np.ndarray]:
    weights = {}
    for part in ("kernel", "recurrent_kernel", "bias"):
        sources, make = rnn_source(f"{layer}/{keras_cell}/{part}", list(legacy))
        weights[part] = make([legacy[name] for name in sources])
    return weights


def test_lstm_weights_give_the_tf1_cell_step():
    kernel, bias = RNG.randn(INPUTS + UNITS, 4 * UNITS), RNG.randn(4 * UNITS)
    x, c, h = RNG.randn(2, INPUTS), RNG.randn(2, UNITS), RNG.randn(2, UNITS)
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)  # TF1 LSTMCell
    tf1_c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)
    tf1_h = sigmoid(o) * np.tanh(tf1_c)

    w = convert("lstm_cell", {"rnn/lstm_cell/kernel": kernel, "rnn/lstm_cell/bias": bias})
    gi, gf, gc, go = np.split(x @ w["kernel"] + h @ w["recurrent_kernel"] + w["bias"], 4, axis=1)  # Keras LSTMCell
    keras_c = sigmoid(gf) * c + sigmoid(gi) * np.tanh(gc)
    keras_h = sigmoid(go) * np.tanh(keras_c)
    np.testing.assert_allclose(keras_c, tf1_c, rtol=1e-12)
    np.testing.assert_allclose(keras_h, tf1_h, rtol=1e-12)


def test_gru_weights_give_the_tf1_cell_step():
    legacy = {"enc/gru_cell/gates/kernel": RNG.randn(INPUTS + UNITS, 2 * UNITS),
              "enc/gru_cell/gates/bias": RNG.randn(2 * UNITS),
              "enc/gru_cell/candidate/kernel": RNG.randn(INPUTS + UNITS, UNITS),
              "enc/gru_cell/candidate/bias": RNG.randn(UNITS)}
    x, h = RNG.randn(2, INPUTS), RNG.randn(2, UNITS)
    gates = sigmoid(np.concatenate([x, h], 1) @ legacy["enc/gru_cell/gates/kernel"] + legacy["enc/gru_cell/gates/bias"])
    r, u = np.split(gates, 2, axis=1)  # TF1 GRUCell
    candidate = np.tanh(np.concatenate([x, r * h], 1) @ legacy["enc/gru_cell/candidate/kernel"]
                        + legacy["enc/gru_cell/candidate/bias"])
    tf1_h = u * h + (1 - u) * candidate

    w = convert("gru_cell", legacy, layer="enc")
    kz, kr, kh = np.split(w["kernel"], 3, axis=1)  # Keras GRUCell, reset_after=False
    rz, rr, rh = np.split(w["recurrent_kernel"], 3, axis=1)
    bz, br, bh = np.split(w["bias"], 3)
    z, r2 = sigmoid(x @ kz + h @ rz + bz), sigmoid(x @ kr + h @ rr + br)
    keras_h = z * h + (1 - z) * np.tanh(x @ kh + (r2 * h) @ rh + bh)
    np.testing.assert_allclose(keras_h, tf1_h, rtol=1e-12)


def test_basic_rnn_weights_give_the_tf1_cell_step():
    kernel, bias = RNG.randn(INPUTS + UNITS, UNITS), RNG.randn(UNITS)
    x, h = RNG.randn(2, INPUTS), RNG.randn(2, UNITS)
    w = convert("simple_rnn_cell", {"outer/rnn/basic_rnn_cell/kernel": kernel, "outer/rnn/basic_rnn_cell/bias": bias})
    np.testing.assert_allclose(np.tanh(x @ w["kernel"] + h @ w["recurrent_kernel"] + w["bias"]),
                               np.tanh(np.concatenate([x, h], 1) @ kernel + bias), rtol=1e-12)


def test_other_variables_are_not_rnn_weights():
    assert rnn_source("dense/kernel", ["dense/kernel"]) is None
    assert rnn_source("rnn/lstm_cell/kernel", ["other/kernel"]) is None


def test_lstm_example_is_equivalent_under_the_harness(tmp_path: Path):
    report = tmp_path / "report.json"
    process = subprocess.run([sys.executable, "-m", "migrate", "verify", str(ROOT / "legacy_examples" / "rnn_lstm_classifier.py"),
                              "--report", str(report)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    program = json.loads(report.read_text())["programs"][0]
    assert program["verdict"] == "equivalent"
    converted = [pair for pair in program["alignment"]["pairs"] if "RNN cell layout" in pair["how"]]
    assert {pair["migrated"] for pair in converted} == {"rnn/lstm_cell/kernel", "rnn/lstm_cell/recurrent_kernel",
                                                        "rnn/lstm_cell/bias"}


def test_bidirectional_forward_layer_maps_to_the_fw_scope():
    legacy = ["tagger/bidirectional_rnn/fw/lstm_cell/kernel", "tagger/bidirectional_rnn/fw/lstm_cell/bias",
              "tagger/bidirectional_rnn/bw/lstm_cell/kernel", "tagger/bidirectional_rnn/bw/lstm_cell/bias"]
    forward = rnn_source("tagger/bidirectional_rnn/forward_fw/lstm_cell/kernel", legacy)
    backward = rnn_source("tagger/bidirectional_rnn/bw/lstm_cell/recurrent_kernel", legacy)
    assert forward[0] == legacy[:2] and backward[0] == legacy[2:]


def test_stacked_layer_maps_to_its_multi_rnn_cell_scope():
    legacy = [f"rnn/multi_rnn_cell/cell_{k}/lstm_cell/{part}" for k in (0, 1) for part in ("kernel", "bias")]
    assert rnn_source("rnn_multi_rnn_cell_1/lstm_cell/kernel", legacy)[0] == legacy[2:]
    assert rnn_source("rnn_multi_rnn_cell_0/lstm_cell/bias", legacy)[0] == legacy[:2]


@pytest.mark.parametrize("name, converted_names", [
    ("rnn_bidirectional_tagger.py", {"bidirectional_rnn/forward_fw/lstm_cell/kernel", "bidirectional_rnn/bw/lstm_cell/kernel"}),
    ("rnn_static_contrib.py", {"rnn/lstm_cell/kernel", "rnn/lstm_cell/recurrent_kernel", "rnn/lstm_cell/bias"}),
    ("mixed_gru_data_summaries.py", {"rnn/gru_cell/kernel", "rnn/gru_cell/recurrent_kernel", "rnn/gru_cell/bias"}),
    ("rnn_bidirectional_lengths.py", {"biGRU/forward_fw/gru_cell/kernel", "biGRU/bw/gru_cell/kernel"}),
    ("rnn_stacked_lstm.py", {"rnn_multi_rnn_cell_0/lstm_cell/kernel", "rnn_multi_rnn_cell_1/lstm_cell/recurrent_kernel",
                             "rnn_multi_rnn_cell_2/gru_cell/bias"}),
    ("rnn_stacked_l2_penalty.py", {"rnn_multi_rnn_cell_0/lstm_cell/bias", "rnn_multi_rnn_cell_1/lstm_cell/kernel"}),
])
def test_rnn_examples_are_equivalent_under_the_harness(name, converted_names, tmp_path: Path):
    report = tmp_path / "report.json"
    process = subprocess.run([sys.executable, "-m", "migrate", "verify",
                              str(ROOT / "legacy_examples" / name), "--report", str(report)],
                             capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    program = json.loads(report.read_text())["programs"][0]
    assert program["verdict"] == "equivalent" and program["migration"]["level"] == "tf2"
    converted = {pair["migrated"] for pair in program["alignment"]["pairs"] if "RNN cell layout" in pair["how"]}
    assert converted_names <= converted


@pytest.mark.parametrize("keras_layer, keras_cell, legacy", [
    ("LSTM", "lstm_cell", {"rnn/lstm_cell/kernel": (INPUTS + UNITS, 4 * UNITS), "rnn/lstm_cell/bias": (4 * UNITS,)}),
    ("GRU", "gru_cell", {"rnn/gru_cell/gates/kernel": (INPUTS + UNITS, 2 * UNITS), "rnn/gru_cell/gates/bias": (2 * UNITS,),
                         "rnn/gru_cell/candidate/kernel": (INPUTS + UNITS, UNITS),
                         "rnn/gru_cell/candidate/bias": (UNITS,)}),
    ("SimpleRNN", "simple_rnn_cell", {"rnn/basic_rnn_cell/kernel": (INPUTS + UNITS, UNITS),
                                      "rnn/basic_rnn_cell/bias": (UNITS,)}),
])
def test_written_cell_variable_functions_give_back_the_tf1_variables(keras_layer, keras_cell, legacy):
    """What a converted graph-code `[... for v in tf.trainable_variables()]` iterates for an RNN layer
    (transforms/graph/rnn/cell_variables.py) is the inverse of the harness's TF1 -> Keras layout."""
    import tensorflow as tf

    from transforms.graph.rnn.cell_variables import _CELLS, SOURCES

    arrays = {name: RNG.randn(*shape).astype(np.float32) for name, shape in legacy.items()}
    options = {"reset_after": False} if keras_layer == "GRU" else {}
    layer = getattr(tf.keras.layers, keras_layer)(UNITS, **options)
    layer.build((None, 2, INPUTS))
    for part, value in convert(keras_cell, arrays).items():
        getattr(layer.cell, part).assign(value)
    function = _CELLS[keras_layer][0]
    namespace = {"tf": tf}
    exec(SOURCES[function], namespace)
    for computed, expected in zip(namespace[function](layer), arrays.values(), strict=True):
        np.testing.assert_allclose(computed.numpy(), expected, rtol=0, atol=1e-6)
