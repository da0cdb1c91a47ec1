"""Regression MLP regularised with dropout, the keep_prob placeholder way.

keep_prob is fed 0.5 while training and 1.0 when evaluating, so one graph serves both.
The dropout masks depend on the runtime's random stream, which makes the trained
weights runtime-specific; the evaluation before training (keep_prob=1.0) does not.
"""
import numpy as np
import tensorflow as tf

STEPS = 30


def build_model(num_features, hidden=64):
    x = tf.placeholder(tf.float32, [None, num_features], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    keep_prob = tf.placeholder(tf.float32, name="keep_prob")

    w1 = tf.Variable(tf.random_normal([num_features, hidden], stddev=0.2, seed=21))
    b1 = tf.Variable(tf.constant(0.1, shape=[hidden]))
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    h_drop = tf.nn.dropout(h, keep_prob)

    w2 = tf.Variable(tf.random_normal([hidden, 1], stddev=0.2, seed=22))
    b2 = tf.Variable(tf.zeros([1]))
    prediction = tf.matmul(h_drop, w2) + b2
    mse = tf.reduce_mean(tf.square(prediction - y))
    return {"x": x, "y": y, "keep_prob": keep_prob, "prediction": prediction, "mse": mse}


def evaluate(sess, model, features, targets):
    """MSE with dropout switched off."""
    feed = {model["x"]: features, model["y"]: targets, model["keep_prob"]: 1.0}
    return sess.run(model["mse"], feed_dict=feed)


def main():
    tf.set_random_seed(99)
    rng = np.random.RandomState(99)
    features = rng.uniform(-1.0, 1.0, size=(200, 5)).astype(np.float32)
    true_w = rng.normal(size=(5, 1)).astype(np.float32)
    targets = np.sin(features.dot(true_w)) + 0.05 * rng.normal(size=(200, 1)).astype(np.float32)

    model = build_model(5)
    train_op = tf.train.AdamOptimizer(0.01).minimize(model["mse"])
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    print("RESULT eval_mse_before_training %r" % float(evaluate(sess, model, features, targets)))

    train_feed = {model["x"]: features, model["y"]: targets, model["keep_prob"]: 0.5}
    for step in range(STEPS):
        _, train_mse = sess.run([train_op, model["mse"]], feed_dict=train_feed)
        if step % 10 == 0:
            print("step %2d  train mse (keep_prob=0.5) %.4f" % (step, train_mse))

    print("RESULT eval_mse_after_training %r" % float(evaluate(sess, model, features, targets)))
    sample = sess.run(model["prediction"], {model["x"]: features[:3], model["keep_prob"]: 1.0})
    print("RESULT eval_predictions %s" % [float(p) for p in sample.ravel()])
    sess.close()


if __name__ == "__main__":
    main()
