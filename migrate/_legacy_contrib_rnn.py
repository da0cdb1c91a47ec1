"""`tf.contrib.rnn` for the legacy runtime: the core of it that TensorFlow 1.x's later releases had
already moved to `tf.nn.rnn_cell` and `tf.nn`, where `tf.compat.v1` still keeps it. The contrib-only
cells (LayerNorm, NAS, attention wrappers...) are not served: using one fails with AttributeError."""
from tensorflow.compat.v1.nn import (  # noqa: F401
    bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn, static_state_saving_rnn,
)
from tensorflow.compat.v1.nn.rnn_cell import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DeviceWrapper, DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell,
    ResidualWrapper, RNNCell,
)
