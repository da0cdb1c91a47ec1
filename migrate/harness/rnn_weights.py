"""Legacy TF1 RNN cell weights -> the Keras recurrent layer's (see transforms/graph/rnn/cells.py).

TF1 cells keep one kernel for [inputs, state] and their own gate order; Keras layers keep a kernel,
a recurrent kernel and a bias, in Keras's gate order:

    LSTMCell / BasicLSTMCell  `<scope>/lstm_cell/{kernel, bias}` (or basic_lstm_cell): gates i, j, f, o
                              and forget_bias (1.0) added at run time -> LSTM: gates i, f, c(=j), o,
                              the forget bias folded into the bias
    GRUCell                   `<scope>/gru_cell/{gates,candidate}/{kernel,bias}`: gates r, u
                              -> GRU(reset_after=False): z(=u), r, h(=candidate)
    BasicRNNCell              `<scope>/basic_rnn_cell/{kernel, bias}` -> SimpleRNN

A bidirectional run keeps each direction's cell under `<scope>/fw` and `<scope>/bw`; Keras's
Bidirectional names its forward layer `forward_<name>` (the rewrite names them fw and bw). A
MultiRNNCell keeps cell k under `<scope>/multi_rnn_cell/cell_<k>`, the rewrite's layer k is
`<scope>_multi_rnn_cell_<k>`.

`rnn_source(name, legacy_names)` says which legacy variables a migrated Keras RNN variable comes
from and how to compute its value from them. NumPy only: it runs inside the migrated-side process.
"""
from __future__ import annotations

import re

import numpy as np

TF1_CELLS = {"lstm_cell": ("lstm_cell", "basic_lstm_cell"), "gru_cell": ("gru_cell",),
             "simple_rnn_cell": ("basic_rnn_cell",)}
TF1_PARTS = {"lstm_cell": ("kernel", "bias"), "gru_cell": ("gates/kernel", "gates/bias", "candidate/kernel",
                                                            "candidate/bias"),
             "simple_rnn_cell": ("kernel", "bias")}
KERAS_PARTS = ("kernel", "recurrent_kernel", "bias")
FORGET_BIAS = 1.0  # the only value the rewrite accepts
# A MultiRNNCell's layer k, named `<scope>_multi_rnn_cell_<k>` by the rewrite: TF1's `<scope>/multi_rnn_cell/cell_<k>`.
_STACKED_LAYER = re.compile(r"(.*)_multi_rnn_cell_(\d+)")


def rnn_source(name: str, legacy_names: list[str]):
    """(legacy names used, convert) for a Keras RNN variable `<layer>/<keras cell>/<part>`, or None.
    `convert(arrays)` takes the legacy arrays in that order and returns the Keras variable's value."""
    prefix, _, part = name.rpartition("/")
    layer, _, keras_cell = prefix.rpartition("/")
    if layer == "forward_fw" or layer.endswith("/forward_fw"):
        layer = layer[:-len("forward_fw")] + "fw"
    stacked = _STACKED_LAYER.fullmatch(layer)
    if stacked:
        layer = f"{stacked[1]}/multi_rnn_cell/cell_{stacked[2]}"
    if keras_cell not in TF1_CELLS or part not in KERAS_PARTS:
        return None
    for tf1_cell in TF1_CELLS[keras_cell]:
        wanted = [f"{layer}/{tf1_cell}/{tf1_part}" if layer else f"{tf1_cell}/{tf1_part}"
                  for tf1_part in TF1_PARTS[keras_cell]]
        found = [_find(want, legacy_names) for want in wanted]
        if all(found):
            return found, lambda arrays, cell=keras_cell: CONVERTERS[cell](arrays)[part]
    return None


def _find(wanted: str, names: list[str]) -> str | None:
    matches = [name for name in names if name == wanted or name.endswith("/" + wanted)]
    return matches[0] if len(matches) == 1 else None


def _split_rows(kernel: np.ndarray, units: int) -> tuple[np.ndarray, np.ndarray]:
    inputs = kernel.shape[0] - units
    return kernel[:inputs], kernel[inputs:]


def _lstm(arrays) -> dict[str, np.ndarray]:
    kernel, bias = arrays
    units = kernel.shape[1] // 4

    def keras_order(matrix):
        i, j, f, o = np.split(matrix, 4, axis=-1)
        return np.concatenate([i, f, j, o], axis=-1)

    inputs, recurrent = _split_rows(kernel, units)
    keras_bias = keras_order(bias).copy()
    keras_bias[units:2 * units] += FORGET_BIAS
    return {"kernel": keras_order(inputs), "recurrent_kernel": keras_order(recurrent), "bias": keras_bias}


def _gru(arrays) -> dict[str, np.ndarray]:
    gates_kernel, gates_bias, candidate_kernel, candidate_bias = arrays
    units = candidate_kernel.shape[1]

    def keras_order(gates, candidate):
        reset, update = np.split(gates, 2, axis=-1)
        return np.concatenate([update, reset, candidate], axis=-1)

    gates_in, gates_rec = _split_rows(gates_kernel, units)
    candidate_in, candidate_rec = _split_rows(candidate_kernel, units)
    return {"kernel": keras_order(gates_in, candidate_in), "recurrent_kernel": keras_order(gates_rec, candidate_rec),
            "bias": keras_order(gates_bias, candidate_bias)}


def _simple(arrays) -> dict[str, np.ndarray]:
    kernel, bias = arrays
    inputs, recurrent = _split_rows(kernel, kernel.shape[1])
    return {"kernel": inputs, "recurrent_kernel": recurrent, "bias": bias}


CONVERTERS = {"lstm_cell": _lstm, "gru_cell": _gru, "simple_rnn_cell": _simple}
