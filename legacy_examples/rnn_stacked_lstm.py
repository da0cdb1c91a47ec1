"""A stacked RNN the TF1 way: `tf.nn.rnn_cell.MultiRNNCell` of LSTM cells and a GRU cell.

The cells are a comprehension, `[tf.nn.rnn_cell.LSTMCell(UNITS) for _ in range(LAYERS)]`, then a
GRUCell appended, the stack run by `tf.nn.dynamic_rnn`; the top layer's final state (`state[-1]`,
the GRU's) and the first layer's hidden state (`state[0].h`) feed a dense layer predicting the next
value of a noisy sine wave. Adam trains it from minibatches; a held-out batch is evaluated at the end.
"""
import numpy as np
import tensorflow as tf

STEPS = 24
BATCH = 16
UNITS = 12
LAYERS = 2
TIME = 10

tf.set_random_seed(5)
rng = np.random.RandomState(5)
starts = rng.uniform(0.0, 2.0 * np.pi, size=(256, 1))
grid = starts + 0.3 * np.arange(TIME + 1)[None, :]
waves = (np.sin(grid) + rng.normal(0.0, 0.05, size=grid.shape)).astype(np.float32)
sequences, targets = waves[:, :TIME, None], waves[:, TIME:]

inputs = tf.placeholder(tf.float32, [None, TIME, 1], name="inputs")
next_values = tf.placeholder(tf.float32, [None, 1], name="next_values")
lstm_cells = [tf.nn.rnn_cell.LSTMCell(UNITS) for _ in range(LAYERS)]
top = tf.nn.rnn_cell.GRUCell(UNITS // 2)
stack = tf.nn.rnn_cell.MultiRNNCell(lstm_cells + [top])
outputs, state = tf.nn.dynamic_rnn(stack, inputs, dtype=tf.float32)
features = tf.concat([state[-1], state[0].h], axis=1)
prediction = tf.layers.dense(features, 1, name="regressor")
loss = tf.reduce_mean(tf.square(prediction - next_values))
train_op = tf.train.AdamOptimizer(0.02).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        start = (step * BATCH) % 224
        batch = slice(start, start + BATCH)
        _, value = sess.run([train_op, loss], {inputs: sequences[batch], next_values: targets[batch]})
        if step % 8 == 0:
            print("RESULT train_loss_%d %s" % (step, value))
    held_out = sess.run(loss, {inputs: sequences[224:], next_values: targets[224:]})
    print("RESULT held_out_loss %s" % held_out)
