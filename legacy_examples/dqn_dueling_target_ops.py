"""A Double-Dueling DQN in the style of awjuliani's DeepRL-Agents notebooks, on a tiny chain world.

A `Qnetwork` class holding its placeholders and ops as attributes: a
`tf.contrib.layers.fully_connected` hidden layer split by `tf.split` into advantage and value
streams, `tf.contrib.layers.xavier_initializer()` weights in `tf.Variable`s,
`tf.reduce_mean(..., keep_dims=True)`, `tf.argmax` actions, `tf.one_hot` of the fed actions and the
TD loss trained by Adam. Two instances (main and target); `tf.trainable_variables()` split in
halves by `updateTargetGraph`, which builds `var.assign(...)` soft-update ops into a list that
`updateTarget(op_holder, sess)` runs one by one. An epsilon-greedy loop over episodes calls the
network for each action, an experience buffer sampled with `random.sample`, the Double-DQN target
computed in NumPy from two more runs. Seeded `random`, `np.random` and `tf.set_random_seed`.
"""
from __future__ import division, print_function

import random

import numpy as np
import tensorflow as tf

N_STATES = 6
N_ACTIONS = 2

random.seed(3)
np.random.seed(3)
tf.set_random_seed(3)


class chainEnv():
    """Walk left or right along a chain; reaching the right end pays 1 and ends the episode."""

    def __init__(self, size):
        self.size = size
        self.actions = N_ACTIONS

    def reset(self):
        self.position = 0
        return self.state()

    def state(self):
        return np.eye(self.size, dtype=np.float32)[self.position]

    def step(self, action):
        self.position = max(0, self.position - 1) if action == 0 else self.position + 1
        if self.position == self.size - 1:
            return self.state(), 1.0, True
        return self.state(), -0.05, False


env = chainEnv(N_STATES)


class Qnetwork():
    def __init__(self, h_size):
        # The network receives the one-hot state and processes it through a hidden layer.
        self.scalarInput = tf.placeholder(shape=[None, N_STATES], dtype=tf.float32)
        self.hidden = tf.contrib.layers.fully_connected(self.scalarInput, h_size, activation_fn=tf.nn.relu)

        # We take the output of the hidden layer and split it into separate advantage and value streams.
        self.streamA, self.streamV = tf.split(self.hidden, 2, 1)
        xavier_init = tf.contrib.layers.xavier_initializer()
        self.AW = tf.Variable(xavier_init([h_size // 2, env.actions]))
        self.VW = tf.Variable(xavier_init([h_size // 2, 1]))
        self.Advantage = tf.matmul(self.streamA, self.AW)
        self.Value = tf.matmul(self.streamV, self.VW)

        # Then combine them together to get our final Q-values.
        self.Qout = self.Value + tf.subtract(self.Advantage, tf.reduce_mean(self.Advantage, axis=1, keep_dims=True))
        self.predict = tf.argmax(self.Qout, 1)

        # Below we obtain the loss by taking the sum of squares difference between the target and prediction Q values.
        self.targetQ = tf.placeholder(shape=[None], dtype=tf.float32)
        self.actions = tf.placeholder(shape=[None], dtype=tf.int32)
        self.actions_onehot = tf.one_hot(self.actions, env.actions, dtype=tf.float32)

        self.Q = tf.reduce_sum(tf.multiply(self.Qout, self.actions_onehot), axis=1)

        self.td_error = tf.square(self.targetQ - self.Q)
        self.loss = tf.reduce_mean(self.td_error)
        self.trainer = tf.train.AdamOptimizer(learning_rate=0.01)
        self.updateModel = self.trainer.minimize(self.loss)


class experience_buffer():
    def __init__(self, buffer_size=500):
        self.buffer = []
        self.buffer_size = buffer_size

    def add(self, experience):
        if len(self.buffer) + len(experience) >= self.buffer_size:
            self.buffer[0:(len(experience) + len(self.buffer)) - self.buffer_size] = []
        self.buffer.extend(experience)

    def sample(self, size):
        return random.sample(self.buffer, size)


def updateTargetGraph(tfVars, tau):
    total_vars = len(tfVars)
    op_holder = []
    for idx, var in enumerate(tfVars[0:total_vars // 2]):
        op_holder.append(tfVars[idx + total_vars // 2].assign(
            (var.value() * tau) + ((1 - tau) * tfVars[idx + total_vars // 2].value())))
    return op_holder


def updateTarget(op_holder, sess):
    for op in op_holder:
        sess.run(op)


batch_size = 8  # How many experiences to use for each training step.
update_freq = 2  # How often to perform a training step.
y = .9  # Discount factor on the target Q-values
startE = 1  # Starting chance of random action
endE = 0.1  # Final chance of random action
annealing_steps = 60.  # How many steps of training to reduce startE to endE.
num_episodes = 12  # How many episodes of game environment to train network with.
pre_train_steps = 20  # How many steps of random actions before training begins.
max_epLength = 15  # The max allowed length of our episode.
h_size = 16  # The size of the hidden layer before splitting it into Advantage and Value streams.
tau = 0.1  # Rate to update target network toward primary network

mainQN = Qnetwork(h_size)
targetQN = Qnetwork(h_size)

init = tf.global_variables_initializer()

trainables = tf.trainable_variables()

targetOps = updateTargetGraph(trainables, tau)

myBuffer = experience_buffer()

# Set the rate of random action decrease.
e = startE
stepDrop = (startE - endE) / annealing_steps

# create lists to contain total rewards and steps per episode
jList = []
rList = []
losses = []
total_steps = 0

with tf.Session() as sess:
    sess.run(init)
    for i in range(num_episodes):
        episodeBuffer = experience_buffer()
        # Reset environment and get first new observation
        s = env.reset()
        d = False
        rAll = 0
        j = 0
        # The Q-Network
        while j < max_epLength:
            j += 1
            # Choose an action by greedily (with e chance of random action) from the Q-network
            if np.random.rand(1) < e or total_steps < pre_train_steps:
                a = np.random.randint(0, N_ACTIONS)
            else:
                a = sess.run(mainQN.predict, feed_dict={mainQN.scalarInput: [s]})[0]
            s1, r, d = env.step(a)
            total_steps += 1
            episodeBuffer.add([(s, a, r, s1, d)])  # Save the experience to our episode buffer.

            if total_steps > pre_train_steps:
                if e > endE:
                    e -= stepDrop

                if total_steps % (update_freq) == 0 and len(myBuffer.buffer) >= batch_size:
                    trainBatch = myBuffer.sample(batch_size)  # Get a random batch of experiences.
                    states = np.vstack([t[0] for t in trainBatch])
                    actions = np.array([t[1] for t in trainBatch])
                    rewards = np.array([t[2] for t in trainBatch], dtype=np.float32)
                    next_states = np.vstack([t[3] for t in trainBatch])
                    dones = np.array([t[4] for t in trainBatch], dtype=np.float32)
                    # Below we perform the Double-DQN update to the target Q-values
                    Q1 = sess.run(mainQN.predict, feed_dict={mainQN.scalarInput: next_states})
                    Q2 = sess.run(targetQN.Qout, feed_dict={targetQN.scalarInput: next_states})
                    end_multiplier = -(dones - 1)
                    doubleQ = Q2[range(batch_size), Q1]
                    targetQ = rewards + (y * doubleQ * end_multiplier)
                    # Update the network with our target values.
                    _, loss = sess.run([mainQN.updateModel, mainQN.loss],
                                       feed_dict={mainQN.scalarInput: states, mainQN.targetQ: targetQ,
                                                  mainQN.actions: actions})
                    losses.append(float(loss))

                    updateTarget(targetOps, sess)  # Update the target network toward the primary network.
            rAll += r
            s = s1

            if d == True:
                break

        myBuffer.add(episodeBuffer.buffer)
        jList.append(j)
        rList.append(rAll)
        if len(rList) % 4 == 0:
            print(total_steps, np.mean(rList[-4:]), e)
    greedy = sess.run(mainQN.predict, feed_dict={mainQN.scalarInput: np.eye(N_STATES, dtype=np.float32)})
    q_values = sess.run(mainQN.Qout, feed_dict={mainQN.scalarInput: np.eye(N_STATES, dtype=np.float32)})
    target_q = sess.run(targetQN.Qout, feed_dict={targetQN.scalarInput: np.eye(N_STATES, dtype=np.float32)})

print("RESULT episode_lengths %s" % [float(j) for j in jList])
print("RESULT losses %s" % losses[::6])
print("RESULT greedy_actions %s" % [float(a) for a in greedy])
print("RESULT q_values %s" % [float(q) for q in q_values.ravel()])
print("RESULT target_q_values %s" % [float(q) for q in target_q.ravel()])
