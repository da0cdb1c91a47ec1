"""A policy-gradient agent in the shape of the reinforcement-learning tutorials of 2016-2017: a
two-layer policy network over `tf.trainable_variables()`, the gradients of each episode fetched
with `sess.run(tf.gradients(loss, tvars), ...)` and summed into a NumPy buffer, and every few
episodes the buffer fed back through one placeholder per variable to
`adam.apply_gradients(zip(batchGrad, tvars))`. The buffer starts as `sess.run(tvars)` times zero.

The environment is a small seeded cart in NumPy (no gym); the weights start from seeded NumPy.
The rewards per batch, the last gradients and the final weights are printed.
"""
import json

import numpy as np
import tensorflow as tf

H = 8  # hidden units
D = 4  # observation size
BATCH_EPISODES = 3
EPISODES = 12
GAMMA = 0.99

rng = np.random.RandomState(3)
np.random.seed(3)


def xavier(shape):
    return (rng.randn(*shape) / np.sqrt(shape[0] / 2.0)).astype(np.float32)


class Cart:
    """A cart on a line: the action pushes it left or right; the episode ends when it leaves [-2, 2]."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.state = None

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=D)
        return self.state

    def step(self, action):
        x, v, angle, spin = self.state
        force = 0.2 if action == 1 else -0.2
        spin = spin + 0.1 * angle - 0.05 * force
        angle = angle + 0.1 * spin
        v = v + force + 0.02 * angle
        x = x + 0.1 * v
        self.state = np.array([x, v, angle, spin])
        done = abs(x) > 2.0 or abs(angle) > 0.5
        return self.state, 1.0, done


observations = tf.placeholder(tf.float32, [None, D], name="input_x")
W1 = tf.Variable(xavier([D, H]), name="W1")
layer1 = tf.nn.relu(tf.matmul(observations, W1))
W2 = tf.Variable(xavier([H, 1]), name="W2")
score = tf.matmul(layer1, W2)
probability = tf.nn.sigmoid(score)

tvars = tf.trainable_variables()
input_y = tf.placeholder(tf.float32, [None, 1], name="input_y")
advantages = tf.placeholder(tf.float32, name="reward_signal")

loglik = tf.log(input_y * (input_y - probability) + (1 - input_y) * (input_y + probability))
loss = -tf.reduce_mean(loglik * advantages)
newGrads = tf.gradients(loss, tvars)

adam = tf.train.AdamOptimizer(learning_rate=0.05)
W1Grad = tf.placeholder(tf.float32, name="batch_grad1")
W2Grad = tf.placeholder(tf.float32, name="batch_grad2")
batchGrad = [W1Grad, W2Grad]
updateGrads = adam.apply_gradients(zip(batchGrad, tvars))


def discount_rewards(r):
    discounted = np.zeros_like(r)
    running = 0.0
    for t in reversed(range(r.size)):
        running = running * GAMMA + r[t]
        discounted[t] = running
    return discounted


env = Cart(seed=11)
xs, ys, rewards = [], [], []
batch_rewards = []
reward_sum = 0.0
episode = 0
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    observation = env.reset()

    gradBuffer = sess.run(tvars)
    for ix, grad in enumerate(gradBuffer):
        gradBuffer[ix] = grad * 0

    while episode < EPISODES:
        x = np.reshape(observation, [1, D])
        tfprob = sess.run(probability, feed_dict={observations: x})
        action = 1 if np.random.uniform() < tfprob else 0
        xs.append(x)
        ys.append(1 if action == 0 else 0)

        observation, reward, done = env.step(action)
        reward_sum += reward
        rewards.append(reward)

        if done or len(rewards) >= 40:
            episode += 1
            epx = np.vstack(xs)
            epy = np.vstack(ys)
            epr = np.vstack(rewards)
            xs, ys, rewards = [], [], []

            discounted_epr = discount_rewards(epr)
            discounted_epr -= np.mean(discounted_epr)
            discounted_epr /= np.std(discounted_epr) + 1e-6

            tGrad = sess.run(newGrads, feed_dict={observations: epx, input_y: epy, advantages: discounted_epr})
            for ix, grad in enumerate(tGrad):
                gradBuffer[ix] += grad

            if episode % BATCH_EPISODES == 0:
                sess.run(updateGrads, feed_dict={W1Grad: gradBuffer[0], W2Grad: gradBuffer[1]})
                for ix, grad in enumerate(gradBuffer):
                    gradBuffer[ix] = grad * 0
                batch_rewards.append(reward_sum / BATCH_EPISODES)
                reward_sum = 0.0

            observation = env.reset()

    final = sess.run(tvars)

print("RESULT batch_rewards %s" % json.dumps(batch_rewards))
print("RESULT last_gradient_norms %s" % json.dumps([float(np.linalg.norm(g)) for g in tGrad]))
print("RESULT final_weight_sums %s" % json.dumps([float(w.sum()) for w in final]))
