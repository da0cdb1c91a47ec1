"""A graph class instantiated twice (a DQN's main and target networks, transforms/graph/structure/
class_instances.py), run on the legacy runtime and, migrated, on plain TF2: the same variables in
the same order (tf.trainable_variables() and its halves), the same losses and Q-values after
training the main network and moving the target network toward it with tf.assign ops."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from migrate.runner import migrate_path
from tests.test_sessions_to_functions_examples import FORBIDDEN, close, code_names, results, run

PROGRAM = '''\
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
states = rng.normal(size=(16, 4)).astype(np.float32)
rewards = rng.normal(size=(16,)).astype(np.float32)
actions = rng.randint(0, 2, size=16).astype(np.int32)


class Qnetwork:
    def __init__(self, seed, learning_rate=0.05):
        weights = np.random.RandomState(seed)
        self.scalarInput = tf.placeholder(tf.float32, [None, 4])
        self.W = tf.Variable(weights.normal(0, 0.5, size=(4, 8)).astype(np.float32))
        self.b = tf.Variable(np.zeros(8, np.float32))
        hidden = tf.nn.relu(tf.matmul(self.scalarInput, self.W) + self.b)
        self.AW = tf.Variable(weights.normal(0, 0.5, size=(8, 2)).astype(np.float32))
        self.Qout = tf.matmul(hidden, self.AW)
        self.predict = tf.argmax(self.Qout, 1)
        self.targetQ = tf.placeholder(tf.float32, [None])
        self.actions = tf.placeholder(tf.int32, [None])
        self.Q = tf.reduce_sum(self.Qout * tf.one_hot(self.actions, 2, dtype=tf.float32), axis=1)
        self.loss = tf.reduce_mean(tf.square(self.targetQ - self.Q))
        self.updateModel = tf.train.AdamOptimizer(learning_rate).minimize(self.loss)


mainQN = Qnetwork(1)
targetQN = Qnetwork(2, learning_rate=0.01)
trainables = tf.trainable_variables()
total_vars = len(trainables)
main_half = trainables[0:total_vars // 2]
tau = 0.2
update_W = tf.assign(targetQN.W, tau * mainQN.W + (1 - tau) * targetQN.W)
update_b = tf.assign(targetQN.b, tau * mainQN.b + (1 - tau) * targetQN.b)
update_AW = tf.assign(targetQN.AW, tau * mainQN.AW + (1 - tau) * targetQN.AW)

print("RESULT trainable_shapes %s" % [d for v in trainables for d in v.get_shape().as_list()])
print("RESULT main_half_shapes %s" % [d for v in main_half for d in v.get_shape().as_list()])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(6):
        next_q = sess.run(targetQN.Qout, feed_dict={targetQN.scalarInput: states})
        chosen = sess.run(mainQN.predict, feed_dict={mainQN.scalarInput: states})
        target = rewards + 0.9 * next_q[range(16), chosen]
        _, loss = sess.run([mainQN.updateModel, mainQN.loss],
                           feed_dict={mainQN.scalarInput: states, mainQN.targetQ: target, mainQN.actions: actions})
        losses.append(float(loss))
        sess.run([update_W, update_b, update_AW])
    main_q = sess.run(mainQN.Qout, feed_dict={mainQN.scalarInput: states})
    target_q = sess.run(targetQN.Qout, feed_dict={targetQN.scalarInput: states})
print("RESULT losses %s" % losses)
print("RESULT main_q %s" % [float(q) for q in main_q.ravel()])
print("RESULT target_q %s" % [float(q) for q in target_q.ravel()])
'''


def test_two_instances_give_the_legacy_variables_and_values(tmp_path: Path) -> None:
    legacy_path = tmp_path / "legacy" / "program.py"
    legacy_path.parent.mkdir()
    legacy_path.write_text(PROGRAM, encoding="utf-8")
    result = migrate_path(str(legacy_path))
    assert result.level == "tf2", result.findings
    assert not code_names(result.new_source) & set(FORBIDDEN)
    assert "class Qnetwork" not in result.new_source and "targetQN_Qout" in result.new_source
    migrated_path = tmp_path / "program.py"
    migrated_path.write_text(result.new_source, encoding="utf-8")
    with ThreadPoolExecutor(max_workers=1) as pool:
        legacy = pool.submit(run, ["-m", "migrate.legacy_runtime", str(legacy_path)], tmp_path)
        new_process = run([str(migrated_path)], tmp_path)
        legacy_results = results(legacy.result())
    new_results = results(new_process)
    assert "retracing" not in new_process.stderr.lower()
    assert legacy_results["trainable_shapes"] == [4, 8, 8, 8, 2, 4, 8, 8, 8, 2]
    assert legacy_results.keys() == new_results.keys()
    differing = {key: (legacy_results[key], new_results[key]) for key in legacy_results
                 if not close(legacy_results[key], new_results[key])}
    assert not differing


def test_node_origins_hold_their_nodes_and_answer_only_for_the_same_node():
    """A rebuilt node dropped by a later rewrite must not be freed while mapped: a node made afterwards
    could take its id and be given its origin (a finding would then point at an unrelated line)."""
    import gc

    import libcst as cst

    from transforms.common.syntax import NodeOrigins

    origins, original = NodeOrigins(), cst.parse_expression("a + b")
    rebuilt = cst.parse_expression("a - b")
    key = id(rebuilt)
    origins.add(rebuilt, original)
    del rebuilt
    gc.collect()
    (kept, origin), = origins.pairs()
    assert id(kept) == key and origin is original and origins.origin(kept) is original
    other = cst.parse_expression("a - b")
    assert origins.origin(other) is None and origins.origin(other, other) is other
    assert origins.merged(NodeOrigins()).origin(kept) is original
