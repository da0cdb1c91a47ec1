"""A DQN-style script whose helpers are given the session: `update_target(ops, sess)` copies the main
network's weights into the target network through a list of assign ops built with the graph, and
`evaluate(sess, network, states, targets)` runs a network's loss in batches, feeding it under a name.
The networks are a class whose instances keep their variables in named scopes, found again with
`tf.get_collection` to pair them; its `__init__` takes `states` and makes an attribute of that name.

TFM201 does not model a class with a local and an attribute of one name built twice, so the graph stays
TF1 code, wrapped once by `tf.compat.v1.wrap_function` (TFM203). The helpers are given the wrapped graph instead of the session,
and their runs, whose fetches are known only when they run, are pruned on their first run.
"""
import numpy as np
import tensorflow as tf

STEPS = 120
TAU = 0.1


class QNetwork:
    def __init__(self, scope, states, actions):
        with tf.variable_scope(scope):
            self.states = tf.placeholder(tf.float32, [None, states], name="states")
            self.targets = tf.placeholder(tf.float32, [None, actions], name="targets")
            init = tf.random_normal_initializer(stddev=0.2, seed=len(scope))
            hidden = tf.layers.dense(self.states, 16, tf.nn.relu, kernel_initializer=init)
            self.q_values = tf.layers.dense(hidden, actions, kernel_initializer=init)
            self.loss = tf.reduce_mean(tf.square(self.targets - self.q_values))
        self.variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)


def target_updates(main_variables, target_variables, tau):
    return [target.assign(tau * main + (1 - tau) * target) for main, target in zip(main_variables, target_variables)]


def update_target(ops, sess):
    for op in ops:
        sess.run(op)


def evaluate(sess, network, states, targets, batch=16):
    losses = []
    for start in range(0, len(states), batch):
        feed = {network.states: states[start:start + batch], network.targets: targets[start:start + batch]}
        losses.append(sess.run(network.loss, feed_dict=feed))
    return float(np.mean(losses))


rng = np.random.RandomState(2)
all_states = rng.normal(size=(96, 4)).astype(np.float32)
all_targets = np.stack([all_states[:, 0] - all_states[:, 1], all_states[:, 2] * 0.5], axis=1).astype(np.float32)

main_network = QNetwork("main", 4, 2)
target_network = QNetwork("target", 4, 2)
train_op = tf.train.RMSPropOptimizer(0.005).minimize(main_network.loss, var_list=main_network.variables)
copy_ops = target_updates(main_network.variables, target_network.variables, TAU)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        batch = rng.randint(0, len(all_states), 16)
        sess.run(train_op, feed_dict={main_network.states: all_states[batch],
                                      main_network.targets: all_targets[batch]})
        if step % 10 == 0:
            update_target(copy_ops, sess)
    print("RESULT main_loss", evaluate(sess, main_network, all_states, all_targets))
    print("RESULT target_loss", evaluate(sess, target_network, all_states, all_targets))
