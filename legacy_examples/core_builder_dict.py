"""Three-class softmax classifier whose graph comes from a `build_graph(config)` function.

The builder returns its placeholders and tensors in a dict; `train_epoch(sess, graph, ...)` and
`evaluate(sess, graph, ...)` helpers take the session and that dict; the session is a plain
`tf.Session()` closed at the end. The initial weights are seeded NumPy arrays (through
`tf.constant_initializer` and `tf.Variable(array)`), so every runtime starts from the same point.
"""
import numpy as np
import tensorflow as tf

CONFIG = {"inputs": 4, "hidden": 12, "classes": 3, "learning_rate": 0.2, "momentum": 0.9}
EPOCHS = 6
BATCH = 30


def make_data(rng, count):
    centers = np.array([[1.0, 0.0, -1.0, 0.5], [-1.0, 1.0, 0.0, -0.5], [0.0, -1.0, 1.0, 0.0]], np.float32)
    labels = rng.randint(0, 3, size=count)
    points = centers[labels] + 0.6 * rng.normal(size=(count, 4)).astype(np.float32)
    return points.astype(np.float32), labels.astype(np.int64)


def build_graph(config):
    weights_rng = np.random.RandomState(7)
    inputs = tf.placeholder(tf.float32, [None, config["inputs"]], name="inputs")
    labels = tf.placeholder(tf.int64, [None], name="labels")

    with tf.variable_scope("hidden"):
        w_hidden = tf.get_variable(
            "weights", shape=[config["inputs"], config["hidden"]],
            initializer=tf.constant_initializer(weights_rng.normal(0, 0.4, (config["inputs"], config["hidden"]))))
        b_hidden = tf.get_variable("biases", shape=[config["hidden"]], initializer=tf.zeros_initializer())
    hidden = tf.nn.tanh(tf.matmul(inputs, w_hidden) + b_hidden)

    w_out = tf.Variable(weights_rng.normal(0, 0.4, (config["hidden"], config["classes"])).astype(np.float32),
                        name="out_weights")
    b_out = tf.Variable(np.zeros(config["classes"], np.float32), name="out_biases")
    logits = tf.matmul(hidden, w_out) + b_out

    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    correct = tf.equal(tf.argmax(logits, axis=1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    optimizer = tf.train.MomentumOptimizer(config["learning_rate"], config["momentum"])
    train_op = optimizer.minimize(loss)
    return {"inputs": inputs, "labels": labels, "loss": loss, "accuracy": accuracy,
            "probabilities": tf.nn.softmax(logits), "train_op": train_op}


def train_epoch(sess, graph, points, targets):
    """One pass over the data in minibatches; the mean of the batch losses."""
    losses = []
    for start in range(0, len(points), BATCH):
        feed = {graph["inputs"]: points[start:start + BATCH], graph["labels"]: targets[start:start + BATCH]}
        _, batch_loss = sess.run([graph["train_op"], graph["loss"]], feed_dict=feed)
        losses.append(batch_loss)
    return float(np.mean(losses))


def evaluate(sess, graph, points, targets):
    return sess.run([graph["loss"], graph["accuracy"]], {graph["inputs"]: points, graph["labels"]: targets})


def main():
    rng = np.random.RandomState(3)
    train_points, train_labels = make_data(rng, 150)
    test_points, test_labels = make_data(rng, 60)

    graph = build_graph(CONFIG)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for epoch in range(EPOCHS):
        mean_loss = train_epoch(sess, graph, train_points, train_labels)
        print("RESULT epoch_%d_loss %r" % (epoch, mean_loss))

    test_loss, test_accuracy = evaluate(sess, graph, test_points, test_labels)
    print("RESULT test_loss %r" % float(test_loss))
    print("RESULT test_accuracy %r" % float(test_accuracy))
    first_two = sess.run(graph["probabilities"], feed_dict={graph["inputs"]: test_points[:2]})
    print("RESULT first_probabilities %s" % [float(p) for p in first_two.ravel()])
    sess.close()


if __name__ == "__main__":
    main()
