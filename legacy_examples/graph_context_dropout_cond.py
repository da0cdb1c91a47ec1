"""A training function in the style of the TF1 tutorials and of research code such as GAT: the whole
program inside `with tf.Graph().as_default():`, its inputs under a name scope, layers made by a helper
of the file with `tf.get_variable` in variable scopes, dropout switched by a boolean placeholder
through `tf.cond`, Momentum with L2 weight decay over `tf.trainable_variables()`, and a validation
pass after each epoch.

The helper becomes a tf.Module, the decay lists its weights, and each run site a step function. The
training run always feeds `is_train: True` and the validation run `False`, so each step function holds
the branch its run took: dropout in `train_step`, none in the validation function. Until 2026-12-02
TFM201 refused the file and TFM203 wrapped the graph (it was `wrapped_graph_context.py`).
"""
import numpy as np
import tensorflow as tf

EPOCHS = 8
BATCH = 32


def dense(inputs, units, name, activation=None):
    with tf.variable_scope(name):
        weights = tf.get_variable("weights", [inputs.shape[1], units],
                                  initializer=tf.truncated_normal_initializer(stddev=0.3, seed=7))
        biases = tf.get_variable("biases", [units], initializer=tf.constant_initializer(0.1))
        outputs = tf.matmul(inputs, weights) + biases
        return activation(outputs) if activation is not None else outputs


def run_training(features, labels):
    train_x, valid_x = features[:160], features[160:]
    train_y, valid_y = labels[:160], labels[160:]
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(11)
        with tf.name_scope("input"):
            x = tf.placeholder(tf.float32, [None, 10], name="x")
            y = tf.placeholder(tf.int64, [None], name="y")
            is_train = tf.placeholder(tf.bool, [], name="is_train")
        hidden = dense(x, 24, "hidden", tf.nn.relu)
        hidden = tf.cond(is_train, lambda: tf.nn.dropout(hidden, keep_prob=0.8), lambda: hidden)
        logits = dense(hidden, 3, "logits")
        cross_entropy = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        decay = tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables() if "weights" in v.name])
        loss = cross_entropy + 5e-4 * decay
        train_op = tf.train.MomentumOptimizer(0.05, momentum=0.9).minimize(loss)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())

        with tf.Session(graph=graph) as sess:
            sess.run(init_op)
            for epoch in range(EPOCHS):
                train_loss = 0.0
                for start in range(0, len(train_x), BATCH):
                    _, batch_loss = sess.run([train_op, loss], feed_dict={
                        x: train_x[start:start + BATCH], y: train_y[start:start + BATCH], is_train: True})
                    train_loss += batch_loss
                valid_loss, valid_accuracy = sess.run([loss, accuracy],
                                                      feed_dict={x: valid_x, y: valid_y, is_train: False})
                print("epoch %d: train loss %.4f, validation loss %.4f" % (epoch, train_loss, valid_loss))
            print("RESULT validation_accuracy", valid_accuracy)
            print("RESULT validation_loss", valid_loss)


if __name__ == "__main__":
    rng = np.random.RandomState(4)
    inputs = rng.normal(size=(220, 10)).astype(np.float32)
    classes = (np.argmax(inputs[:, :3], axis=1)).astype(np.int64)
    run_training(inputs, classes)
