"""`tf.contrib` under the legacy runtime: served from where TF 2.21, tf-slim and tf-keras keep its code;
anything else fails with an error naming the exact symbol.

Each check runs a small TF1 program of ours in a fresh interpreter (the runtime replaces
`sys.modules['tensorflow']`, which must not leak into the test process).
"""
from tests.test_legacy_runtime import run_legacy, write_script


def test_contrib_modules_real_code_uses_resolve_to_their_homes(tmp_path):
    script = write_script(tmp_path, "contrib_uses.py", """
        import numpy as np
        import tensorflow as tf
        from tensorflow.contrib import rnn
        from tensorflow.contrib.framework import arg_scope
        from tensorflow.contrib.layers import fully_connected, l2_regularizer, xavier_initializer

        inputs = tf.constant(np.random.RandomState(0).normal(size=(4, 5, 3)).astype(np.float32))
        labels = tf.constant([0, 1, 1, 0])
        cell = rnn.MultiRNNCell([rnn.LSTMCell(6), tf.contrib.rnn.GRUCell(6)])
        outputs, _ = tf.contrib.rnn.static_rnn(cell, tf.unstack(inputs, axis=1), dtype=tf.float32)
        _, state = tf.contrib.rnn.dynamic_rnn(rnn.BasicLSTMCell(4), inputs, dtype=tf.float32, scope="dyn")
        with arg_scope([fully_connected], weights_initializer=xavier_initializer(seed=1),
                       weights_regularizer=l2_regularizer(0.01)):
            logits = fully_connected(outputs[-1], 2, activation_fn=None, scope="fc")
        loss = tf.contrib.losses.sparse_softmax_cross_entropy(logits, labels)
        total = loss + tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
        train_op = tf.contrib.training.create_train_op(total, tf.train.GradientDescentOptimizer(0.1))
        accuracy, update = tf.contrib.metrics.streaming_accuracy(tf.argmax(logits, 1), labels)
        table = tf.contrib.lookup.HashTable(
            tf.contrib.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
        dataset = tf.data.Dataset.range(3).apply(tf.contrib.data.shuffle_and_repeat(3, count=2, seed=1))
        print("nest", tf.contrib.framework.nest.flatten({"b": [1, 2], "a": 0}))
        print("constant", tf.contrib.util.constant_value(tf.constant(7)))
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(), tf.tables_initializer()])
            first, second = sess.run(train_op), sess.run(train_op)
            sess.run(update)
            print("trained", second < first, "accuracy", 0.0 <= sess.run(accuracy) <= 1.0)
            print("lookup", sess.run(table.lookup(tf.constant(["b", "z"]))).tolist())
            item = tf.data.make_one_shot_iterator(dataset).get_next()
            print("state", type(state).__name__, "items", sorted(int(sess.run(item)) for _ in range(6)))
    """)
    result = run_legacy(script)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "nest [0, 1, 2]" in result.stdout and "constant 7" in result.stdout
    assert "trained True accuracy True" in result.stdout
    assert "lookup [2, -1]" in result.stdout
    assert "state LSTMStateTuple items [0, 0, 1, 1, 2, 2]" in result.stdout


def test_a_symbol_without_a_home_is_named_in_the_error(tmp_path):
    script = write_script(tmp_path, "contrib_missing.py", """
        import tensorflow as tf
        try:
            tf.contrib.rnn.LayerNormBasicLSTMCell(4)
        except AttributeError as error:
            print("attribute:", error)
        print("hasattr:", hasattr(tf.contrib.layers, "no_such_layer"))
        try:
            from tensorflow.contrib.rnn import LSTMBlockCell
        except ImportError as error:
            print("from-import:", error)
        try:
            from tensorflow.contrib.seq2seq import BasicDecoder
        except ImportError as error:
            print("module:", error)
        from tensorflow.contrib.slim.nets import vgg  # a submodule of a home
        print("submodule:", callable(vgg.vgg_a))
    """)
    result = run_legacy(script)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert ("attribute: tf.contrib.rnn.LayerNormBasicLSTMCell has no home in TensorFlow 2.21: the legacy runtime "
            "serves tf.contrib.rnn from tensorflow.compat.v1.nn.rnn_cell") in out
    assert "hasattr: False" in out
    assert "from-import: tf.contrib.rnn.LSTMBlockCell has no home in TensorFlow 2.21" in out
    assert "module: tf.contrib.seq2seq has no home in TensorFlow 2.21" in out and "TensorFlow Addons" in out
    assert "submodule: True" in out


def test_contrib_batch_norm_inside_tf_cond(tmp_path):
    """tf-slim 1.1's batch_norm reaches for `ops.Tensor` and `control_flow_ops.cond`, which moved in
    TF 2.x (restored by `_legacy_patches`): both the tensor `is_training` form and the TF1 idiom of
    two batch_norm calls sharing variables in the branches of a tf.cond."""
    script = write_script(tmp_path, "bn_cond.py", """
        import numpy as np
        import tensorflow as tf
        from tensorflow.contrib.layers import batch_norm

        x = tf.placeholder(tf.float32, [None, 3])
        training = tf.placeholder(tf.bool, [])
        by_tensor = batch_norm(x, is_training=training, scope="by_tensor")

        def normalised(is_training, reuse):
            return batch_norm(x, is_training=is_training, updates_collections=None, reuse=reuse, scope="in_cond")

        in_cond = tf.cond(training, lambda: normalised(True, None), lambda: normalised(False, True))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            step = tf.identity(by_tensor)
        data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            trained = sess.run([step, in_cond], {x: data, training: True})
            sess.run([by_tensor, in_cond], {x: data, training: False})
            means = sess.run(tf.global_variables("in_cond")[1:2] + tf.global_variables("by_tensor")[1:2])
        print("normalised", np.allclose(trained[1], [[-1, -1, -1], [1, 1, 1]], atol=1e-2))
        print("moving means", [[round(float(value), 4) for value in mean] for mean in means])
        print("variables", len(tf.global_variables("in_cond")))
    """)
    result = run_legacy(script)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "normalised True" in result.stdout
    # One update (decay 0.999) of each moving mean towards the batch mean [1.5, 2.5, 3.5].
    assert "moving means [[0.0015, 0.0025, 0.0035], [0.0015, 0.0025, 0.0035]]" in result.stdout
    assert "variables 3" in result.stdout
