"""Issue 16: TF1 idioms that stopped TFM201 in real programs, run legacy vs migrated.

Each program is written as its TF1 original did it (seeded NumPy weights, RESULT lines); the legacy
program runs on migrate.legacy_runtime, the migrated one (the whole pipeline, as `tf-migrate apply`
writes it) on plain TF 2, and both must print the same numbers. Exact outputs are in
tests/fixtures/sessions_to_functions/ (chained_assignment, conditional_graph, ...)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from migrate.runner import Options, migrate_code
from test_sessions_to_functions_examples import FORBIDDEN, close, code_names, results, run

SEEDED_GRAPH = """\
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
data = rng.normal(size=(8, 3)).astype(np.float32)
target = rng.normal(size=(8, 1)).astype(np.float32)
"""
TRAINING = """\
loss = tf.reduce_mean(tf.square(out - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, value = sess.run([train_op, loss], feed_dict={x: data, y: target})
        print("RESULT loss_%d %r" % (step, float(value)))
    print("RESULT out %r" % [float(v) for v in sess.run(out, {x: data}).ravel()])
"""
PROGRAMS = {
    # Kyubyong/dc_tts (`tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'Text2Mel')`) and GANs:
    # each network trained on the variables its scope holds, read from the collection
    "trainable_collection_scoped": SEEDED_GRAPH + """\
noise = rng.normal(size=(8, 3)).astype(np.float32)
x = tf.placeholder(tf.float32, [None, 2])
z = tf.placeholder(tf.float32, [None, 3])


def generator(codes):
    with tf.variable_scope("generator"):
        w = tf.get_variable("w", initializer=tf.constant(rng.normal(size=(3, 2)).astype(np.float32)))
        return tf.matmul(codes, w)


def discriminator(samples, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        w = tf.get_variable("w", initializer=tf.constant(rng.normal(size=(2, 1)).astype(np.float32)))
        return tf.matmul(samples, w)


fake = generator(z)
d_real = discriminator(x)
d_fake = discriminator(fake, reuse=True)
d_loss = tf.reduce_mean(tf.nn.softplus(-d_real) + tf.nn.softplus(d_fake))
g_loss = tf.reduce_mean(tf.nn.softplus(-d_fake))
d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "generator")
d_train = tf.train.GradientDescentOptimizer(0.1).minimize(d_loss, var_list=d_vars)
g_train = tf.train.GradientDescentOptimizer(0.1).minimize(g_loss, var_list=g_vars)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, dl = sess.run([d_train, d_loss], {x: data[:, :2], z: noise})
        _, gl = sess.run([g_train, g_loss], {z: noise})
        print("RESULT losses_%d %s" % (step, [float(dl), float(gl)]))
""",
    # wiseodd/generative-models (wgan, dualgan): the critic's weights clipped by assignments fetched in
    # the same run as its train op, which TF1 ran before the update (the update waits for the gradients)
    "weights_clipped_beside_train_op": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
w1 = tf.Variable(rng.normal(scale=0.1, size=(3, 4)).astype(np.float32))
b1 = tf.Variable(np.zeros(4, np.float32))
w2 = tf.Variable(rng.normal(scale=0.1, size=(4, 1)).astype(np.float32))
theta_D = [w1, b1, w2]
critic = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)
D_loss = -tf.reduce_mean(critic)
D_solver = tf.train.RMSPropOptimizer(learning_rate=1e-2).minimize(D_loss, var_list=theta_D)
clip_D = [p.assign(tf.clip_by_value(p, -0.05, 0.05)) for p in theta_D]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(6):
        _, value, _ = sess.run([D_solver, D_loss, clip_D], feed_dict={x: data})
        print("RESULT loss_%d %r" % (step, float(value)))
    print("RESULT w1 %r" % [float(v) for v in sess.run(w1).ravel()])
    print("RESULT w2 %r" % [float(v) for v in sess.run(w2).ravel()])
""",
    # wiseodd/generative-models (discogan): one Adam minimizes both networks' losses; TF1 shared its
    # beta powers between the two train ops, which advanced them at each run of either
    "optimizer_shared_by_two_losses": SEEDED_GRAPH + """\
noise = rng.normal(size=(8, 2)).astype(np.float32)
x = tf.placeholder(tf.float32, [None, 3])
z = tf.placeholder(tf.float32, [None, 2])
g_w = tf.Variable(rng.normal(size=(2, 3)).astype(np.float32))
d_w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
d_b = tf.Variable(np.zeros(1, np.float32))
theta_G = [g_w]
theta_D = [d_w, d_b]
fake = tf.matmul(z, g_w)
d_real = tf.matmul(x, d_w) + d_b
d_fake = tf.matmul(fake, d_w) + d_b
d_loss = tf.reduce_mean(tf.nn.softplus(-d_real) + tf.nn.softplus(d_fake))
g_loss = tf.reduce_mean(tf.nn.softplus(-d_fake))
solver = tf.train.AdamOptimizer(learning_rate=0.05)
d_solver = solver.minimize(d_loss, var_list=theta_D)
g_solver = solver.minimize(g_loss, var_list=theta_G)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(5):
        _, dl = sess.run([d_solver, d_loss], feed_dict={x: data, z: noise})
        _, gl = sess.run([g_solver, g_loss], feed_dict={z: noise})
        _, gl = sess.run([g_solver, g_loss], feed_dict={z: noise})
        print("RESULT losses_%d %s" % (step, [float(dl), float(gl)]))
    print("RESULT g_w %r" % [float(v) for v in sess.run(g_w).ravel()])
""",
    # sherjilozair/char-rnn-tensorflow, brightmart/text_classification: gradients clipped between
    # computing and applying them, by tf.gradients or compute_gradients; a global step applied with them
    "clipped_gradients": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32))
v = tf.Variable(rng.normal(size=(4, 1)).astype(np.float32))
out = tf.matmul(tf.nn.tanh(tf.matmul(x, w)), v)
loss = tf.reduce_mean(tf.square(out - y))
global_step = tf.Variable(0, trainable=False)
tvars = tf.trainable_variables()
grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), 0.5)
train_op = tf.train.GradientDescentOptimizer(0.3).apply_gradients(zip(grads, tvars), global_step=global_step)
second = tf.train.MomentumOptimizer(0.05, 0.9)
pairs = second.compute_gradients(loss, var_list=[v])
capped = [(tf.clip_by_value(grad, -0.1, 0.1), var) for grad, var in pairs]
second_op = second.apply_gradients(capped)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, value = sess.run([train_op, loss], feed_dict={x: data, y: target})
        sess.run(second_op, feed_dict={x: data, y: target})
        print("RESULT loss_%d %r" % (step, float(value)))
    print("RESULT step %r" % int(sess.run(global_step)))
    print("RESULT out %r" % [float(v) for v in sess.run(out, {x: data}).ravel()])
""",
    # znxlwm/tensorflow-MNIST-GAN-DCGAN: each network trained on the variables its scope names
    # (`[var for var in T_vars if var.name.startswith('discriminator')]`), its layers tf.layers calls,
    # batch normalisation's moving averages updated through UPDATE_OPS
    "layer_variables_by_scope": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
z = tf.placeholder(tf.float32, [None, 2])
is_train = tf.placeholder(tf.bool)


def generator(noise, training):
    with tf.variable_scope("generator"):
        hidden = tf.layers.dense(noise, 4, kernel_initializer=tf.constant_initializer(0.3))
        hidden = tf.nn.relu(tf.layers.batch_normalization(hidden, training=training))
        return tf.layers.dense(hidden, 3, kernel_initializer=tf.constant_initializer(-0.2))


def discriminator(inputs, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        hidden = tf.layers.dense(inputs, 4, activation=tf.nn.tanh, kernel_initializer=tf.constant_initializer(0.2))
        return tf.layers.dense(hidden, 1, kernel_initializer=tf.constant_initializer(-0.1))


fake = generator(z, is_train)
real_score = discriminator(x)
fake_score = discriminator(fake, reuse=True)
d_loss = tf.reduce_mean(tf.square(real_score - 1.0)) + tf.reduce_mean(tf.square(fake_score))
g_loss = tf.reduce_mean(tf.square(fake_score - 1.0))
t_vars = tf.trainable_variables()
d_vars = [var for var in t_vars if var.name.startswith("discriminator")]
g_vars = [var for var in t_vars if "generator/" in var.name]
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    d_train = tf.train.GradientDescentOptimizer(0.1).minimize(d_loss, var_list=d_vars)
    g_train = tf.train.GradientDescentOptimizer(0.05).minimize(g_loss, var_list=g_vars)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, d_value = sess.run([d_train, d_loss], feed_dict={x: data, z: data[:, :2], is_train: True})
        _, g_value = sess.run([g_train, g_loss], feed_dict={z: data[:, 1:], is_train: True})
        print("RESULT losses_%d %r" % (step, [float(d_value), float(g_value)]))
    print("RESULT fake %r" % [float(v) for v in sess.run(fake, {z: data[:, :2], is_train: False}).ravel()])
""",
    # znxlwm/tensorflow-MNIST-GAN-DCGAN: a discriminator's layers built by one call and reused by the
    # next (`reuse=True`); the data normalised by `tf.image.resize_images(...).eval()` before training
    "layer_function_reused": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
z = tf.placeholder(tf.float32, [None, 2])


def generator(noise):
    with tf.variable_scope("generator"):
        grid = tf.reshape(noise, [-1, 1, 1, 2])
        grid = tf.layers.conv2d_transpose(grid, 3, [2, 2], strides=(2, 2), padding="same",
                                          kernel_initializer=tf.constant_initializer(0.3))
        return tf.reduce_mean(grid, axis=[1, 2]) + tf.layers.dense(noise, 3, kernel_initializer=tf.constant_initializer(0.1))


def discriminator(inputs, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        hidden = tf.layers.dense(inputs, 4, activation=tf.nn.tanh, kernel_initializer=tf.constant_initializer(0.2))
        return tf.layers.dense(hidden, 1, kernel_initializer=tf.constant_initializer(-0.1))


fake = generator(z)
real_score = discriminator(x)
fake_score = discriminator(fake, reuse=True)
loss = tf.reduce_mean(tf.square(real_score - 1.0)) + tf.reduce_mean(tf.square(fake_score))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    scaled = tf.nn.l2_normalize(data, 1).eval()
    for step in range(4):
        _, value = sess.run([train_op, loss], feed_dict={x: scaled, z: data[:, :2]})
        print("RESULT loss_%d %r" % (step, float(value)))
    print("RESULT fake %r" % [float(v) for v in sess.run(fake_score, {z: data[:, :2]}).ravel()])
""",
    # pannous/tensorflow-speech-recognition: `x = inputX = inputs = tf.placeholder(...)`, the later
    # names rebound to tensors; `xg = generated_x = tf.matmul(...)`
    "chained_assignment": SEEDED_GRAPH + """\
x = inputs = tf.placeholder(tf.float32, [None, 3])
y = target_values = tf.placeholder(tf.float32, [None, 1])
inputs = tf.nn.tanh(inputs)
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
out = prediction = tf.matmul(inputs, w)
""" + TRAINING,
    # pannous/tensorflow-speech-recognition speech_encoder.py: `if n3 == 20: y = ... else: y = ...`
    "conditional_graph": SEEDED_GRAPH + """\
n_outputs = 4
squash = True
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.normal(size=(3, n_outputs)).astype(np.float32))
h = tf.matmul(x, w)
if squash:
    h = tf.nn.tanh(h)
if n_outputs == 20:
    out = tf.reduce_sum(tf.slice(h, [0, 0], [-1, 10]), axis=1, keepdims=True)
elif n_outputs == 4:
    out = tf.reduce_sum(tf.nn.softmax(h) * h, axis=1, keepdims=True)
else:
    out = h
""" + TRAINING,
    # pannous/tensorflow-speech-recognition speech_encoder.py: `l_rate = tf.Variable(0.003)`,
    # `AdamOptimizer(learning_rate=l_rate)`, `sess.run(tf.assign(l_rate, l_rate * 0.1))`
    "variable_learning_rate": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
learning_rate = tf.Variable(0.1)  # trainable, as in the original: no gradient reaches it
decay = tf.assign(learning_rate, learning_rate * 0.5)
out = tf.matmul(x, w)
loss = tf.reduce_mean(tf.square(out - y))
train_op = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(6):
        if step % 2 == 1:
            sess.run(decay)
        _, value = sess.run([train_op, loss], feed_dict={x: data, y: target})
        print("RESULT loss_%d %r" % (step, float(value)))
    print("RESULT rate %r" % float(sess.run(learning_rate)))
""",
    # the same file: `tf.scan(rnn_step, ...)`, the variables read only inside the function it is given
    "helper_passed_to_scan": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w_in = tf.Variable(rng.normal(size=(1, 2)).astype(np.float32))
w_state = tf.Variable(rng.normal(size=(2, 2)).astype(np.float32))
w_out = tf.Variable(rng.normal(size=(2, 1)).astype(np.float32))


def rnn_step(state, column):
    return tf.tanh(tf.matmul(state, w_state) + tf.matmul(column, w_in))


states = tf.scan(rnn_step, tf.expand_dims(tf.transpose(x), -1), initializer=tf.zeros([8, 2]))
out = tf.matmul(states[-1], w_out)
""" + TRAINING,
    # Hezi-Resheff/Oreilly-Learning-TensorFlow vanilla_rnn_with_tfboard.py (from TensorFlow's TensorBoard
    # tutorial): `variable_summaries(Wx)` adds the summaries of a variable under the caller's name scope
    "summary_helper": SEEDED_GRAPH + """\


def variable_summaries(var):
    with tf.name_scope('summaries'):
        mean = tf.reduce_mean(var)
        tf.summary.scalar('mean', mean)
        with tf.name_scope('stddev'):
            stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
        tf.summary.scalar('stddev', stddev)


x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
with tf.name_scope("weights"):
    w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
    variable_summaries(w)
with tf.name_scope("bias"):
    b = tf.Variable(np.ones(1, np.float32))
    variable_summaries(b)
out = tf.matmul(x, w) + b
loss = tf.reduce_mean(tf.square(out - y))
tf.summary.scalar("loss", loss)
merged = tf.summary.merge_all()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
writer = tf.summary.FileWriter("logs")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
        summary = sess.run(merged, feed_dict={x: data, y: target})  # alone: not racing the update
        writer.add_summary(summary, step)
        _, value = sess.run([train_op, loss], feed_dict={x: data, y: target})
        print("RESULT loss_%d %r" % (step, float(value)))
writer.close()
""",
    # awjuliani's policy-gradient notebooks: gradients summed in NumPy over episodes, then fed through
    # placeholders to `apply_gradients(zip(...))`; here with a list display and a global step
    "fed_gradients_global_step": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
b = tf.Variable(np.ones(1, np.float32))
global_step = tf.Variable(0, trainable=False)
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
grads = tf.gradients(loss, [w, b])
w_grad = tf.placeholder(tf.float32, [3, 1])
b_grad = tf.placeholder(tf.float32, [1])
apply_op = tf.train.MomentumOptimizer(0.05, 0.9).apply_gradients(zip([w_grad, b_grad], [w, b]),
                                                                  global_step=global_step)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
        summed = [np.zeros((3, 1), np.float32), np.zeros(1, np.float32)]
        for half in (data[:4], data[4:]):
            g_w, g_b = sess.run(grads, feed_dict={x: half, y: target[:4]})
            summed[0] += g_w
            summed[1] += g_b
        sess.run(apply_op, feed_dict={w_grad: summed[0], b_grad: summed[1]})
        print("RESULT loss_%d %r" % (step, float(sess.run(loss, {x: data, y: target}))))
    print("RESULT step %r" % int(sess.run(global_step)))
""",
    # One Adam for a GAN's two losses with a decaying rate (only the discriminator's minimize steps the
    # global step): TF1 read the schedule at the global step's value, not at a count of applies
    "schedule_shared_optimizer": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
z = tf.placeholder(tf.float32, [None, 2])
g_w = tf.Variable(rng.normal(size=(2, 3)).astype(np.float32))
d_w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
fake = tf.matmul(z, g_w)
d_loss = tf.reduce_mean(tf.nn.softplus(-tf.matmul(x, d_w)) + tf.nn.softplus(tf.matmul(fake, d_w)))
g_loss = tf.reduce_mean(tf.nn.softplus(-tf.matmul(fake, d_w)))
global_step = tf.Variable(0, trainable=False)
rate = tf.train.exponential_decay(0.1, global_step, 2, 0.5, staircase=True)
solver = tf.train.AdamOptimizer(learning_rate=rate)
d_solver = solver.minimize(d_loss, var_list=[d_w], global_step=global_step)
g_solver = solver.minimize(g_loss, var_list=[g_w])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(5):
        noise = data[:, :2]
        _, d_value = sess.run([d_solver, d_loss], feed_dict={x: data, z: noise})
        _, g_value = sess.run([g_solver, g_loss], feed_dict={z: noise})
        print("RESULT losses_%d %r" % (step, [float(d_value), float(g_value)]))
""",
    # word2vec tutorials: a decay over a global step that minimize() is not given; here another op
    # steps it every other iteration
    "schedule_step_incremented_apart": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
global_step = tf.Variable(0, trainable=False)
increment = tf.assign_add(global_step, 1)
rate = tf.train.exponential_decay(0.1, global_step, 1, 0.5, staircase=True)
train_op = tf.train.GradientDescentOptimizer(rate).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(6):
        _, value = sess.run([train_op, loss], feed_dict={x: data, y: target})
        if step % 2:
            sess.run(increment)
        print("RESULT loss_%d %r" % (step, float(value)))
""",
    # gradients fetched to be looked at, alone and with the loss, in runs at the graph's own level
    "gradients_fetched": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
b = tf.Variable(np.ones(1, np.float32))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
grads = tf.gradients(loss, [w, b])
sess = tf.Session()
sess.run(tf.global_variables_initializer())
value, gradient_values = sess.run([loss, grads], feed_dict={x: data})
print("RESULT loss %r" % float(value))
print("RESULT grads %r" % [float(g.sum()) for g in gradient_values])
print("RESULT b_grad %r" % float(sess.run(grads, {x: data})[1].sum()))
""",
    # awjuliani's Model-Network: a graph tensor's name given the value a run fetched (`loss, ... =
    # sess.run([model_loss, ...])`) and read as that value below; graph code built from it after the
    # run bakes the NumPy value in, as TF1's graph did
    "tensor_name_rebound": SEEDED_GRAPH + """\
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(rng.normal(size=(3, 1)).astype(np.float32))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
grads = tf.gradients(loss, [w])
model_loss = tf.reduce_sum(tf.matmul(x, w))
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(model_loss)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
for step in range(3):
    loss, _ = sess.run([model_loss, train_op], {x: data})
    gradient = sess.run(grads, {x: data})
    print("RESULT step_%d %r" % (step, [float(loss), float(gradient[0].sum())]))
h = tf.matmul(x, w)
h = sess.run(h, {x: data})
total = tf.reduce_sum(h * 2.0)
print("RESULT total %r" % float(sess.run(total)))
""",
}


# Programs whose legacy run races (TF1 fixed no order between the ops of one run, and its executor's
# varies with load): the legacy side runs them in the order the migration chose, made deterministic
# (as test_wasserstein_example_clips_the_critic_before_each_of_its_steps does for the example).
LEGACY_ORDERED = {
    "weights_clipped_beside_train_op": (
        "        _, value, _ = sess.run([D_solver, D_loss, clip_D], feed_dict={x: data})\n",
        "        sess.run(clip_D)\n        _, value = sess.run([D_solver, D_loss], feed_dict={x: data})\n"),
}


def legacy_source(name: str) -> str:
    source = PROGRAMS[name]
    if name in LEGACY_ORDERED:
        racing, ordered = LEGACY_ORDERED[name]
        assert racing in source
        source = source.replace(racing, ordered)
    return source


def migrated_source(source: str) -> str:
    outcome = migrate_code(source, Options())
    refusals = [f.message for f in outcome.findings if f.code == "TFM201" and not f.fixed]
    assert not refusals, refusals
    assert not code_names(outcome.module.code) & set(FORBIDDEN)
    return outcome.module.code


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_migrated_program_prints_the_legacy_results(name: str, tmp_path: Path) -> None:
    legacy_dir, new_dir = tmp_path / "legacy", tmp_path / "migrated"
    legacy_dir.mkdir(), new_dir.mkdir()
    legacy_path, new_path = legacy_dir / f"{name}.py", new_dir / f"{name}.py"
    legacy_path.write_text(legacy_source(name), encoding="utf-8")
    new_path.write_text(migrated_source(PROGRAMS[name]), encoding="utf-8")
    with ThreadPoolExecutor(max_workers=1) as pool:
        legacy = pool.submit(run, ["-m", "migrate.legacy_runtime", str(legacy_path)], legacy_dir)
        new_process = run([str(new_path)], new_dir)
        legacy_results = results(legacy.result())
    new_results = results(new_process)
    assert "retracing" not in new_process.stderr.lower()
    assert legacy_results.keys() == new_results.keys()
    assert all(close(legacy_results[key], new_results[key]) for key in legacy_results), (legacy_results, new_results)
    if name == "summary_helper":
        legacy_scalars, new_scalars = written_scalars(legacy_dir), written_scalars(new_dir)
        assert set(legacy_scalars) == {"weights/summaries/mean_1", "weights/summaries/stddev_1", "bias/summaries/mean_1",
                                       "bias/summaries/stddev_1", "loss"}
        # TF1 made op names unique ignoring case: `mean` after the scope's `Mean` op, `stddev` after the
        # `stddev` name scope, got `_1`; the converted tags keep the names the program wrote.
        legacy_scalars = {tag.removesuffix("_1"): values for tag, values in legacy_scalars.items()}
        assert legacy_scalars.keys() == new_scalars.keys()
        assert all(close(legacy_scalars[tag], new_scalars[tag]) for tag in legacy_scalars), (legacy_scalars, new_scalars)


def written_scalars(directory: Path) -> dict[str, list[float]]:
    """{tag: values by step} of the scalar summaries in the event files under directory/logs (TF1 simple
    values or TF2 scalar tensors)."""
    import tensorflow as tf

    scalars: dict[str, list[float]] = {}
    for path in sorted((directory / "logs").glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                number = value.simple_value if value.WhichOneof("value") == "simple_value" else float(
                    tf.make_ndarray(value.tensor))
                scalars.setdefault(value.tag, []).append(number)
    return scalars
