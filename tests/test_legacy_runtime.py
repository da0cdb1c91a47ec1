"""The legacy runtime runs unmodified TF1 scripts on TF 2.21.

Every check runs a tiny TF1 script in a fresh interpreter: the runtime replaces
`sys.modules['tensorflow']`, which must never leak into the test process.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def clean_env():
    """The caller's environment without TF_USE_LEGACY_KERAS: the runtime must set it itself."""
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def write_script(directory, name, source):
    path = Path(directory) / name
    path.write_text(textwrap.dedent(source))
    return path


def run_legacy(script, *args, cwd=None):
    command = [sys.executable, "-m", "migrate.legacy_runtime", str(script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180,
                          cwd=cwd or script.parent, env=clean_env())


def test_every_import_spelling_gets_the_v1_api_in_graph_mode(tmp_path):
    script = write_script(tmp_path, "spellings.py", """
        import tensorflow
        import tensorflow as tf
        import tensorflow.compat.v1 as tf_v1
        from tensorflow import placeholder, Session
        from tensorflow.python.framework import ops  # TensorFlow internals still import
        import numpy as np

        assert tf is tensorflow
        assert tf.placeholder is tf_v1.placeholder is placeholder
        assert not tf.executing_eagerly()
        x = placeholder(tf.float32, [2])
        doubled = tf.layers.dense(tf.reshape(x, [1, 2]), 1, use_bias=False,
                                  kernel_initializer=tf.ones_initializer())
        with Session() as sess:
            sess.run(tf.global_variables_initializer())
            print("value", sess.run(doubled, {x: [1.5, 2.0]})[0, 0])
        print("graph tensor", isinstance(x, ops.Tensor))
        print("version", tf.__version__)
        print("aliases", np.float is float, np.int is int, np.object is object,
              np.float_ is np.float64)
    """)
    result = run_legacy(script)
    assert result.returncode == 0, result.stderr
    assert "value 3.5" in result.stdout
    assert "graph tensor True" in result.stdout
    assert "version 2." in result.stdout
    assert "aliases True True True True" in result.stdout


def test_script_runs_as_main_with_its_argv_path_and_exit_code(tmp_path):
    script = write_script(tmp_path, "exits.py", """
        import sys
        import tensorflow as tf
        print("name", __name__)
        print("argv", sys.argv[1:])
        print("path0", sys.path[0])
        sys.exit(int(sys.argv[1]))
    """)
    result = run_legacy(script, "7", "--flag", cwd=ROOT)
    assert result.returncode == 7, result.stderr
    assert "name __main__" in result.stdout
    assert "argv ['7', '--flag']" in result.stdout
    assert f"path0 {tmp_path}" in result.stdout


def test_uncaught_exception_exits_nonzero_with_traceback(tmp_path):
    script = write_script(tmp_path, "crash.py", """
        import tensorflow as tf
        raise ValueError("legacy script failed")
    """)
    result = run_legacy(script)
    assert result.returncode == 1
    assert "ValueError: legacy script failed" in result.stderr


def test_contrib_slim_layers_and_framework_are_served_by_tf_slim(tmp_path):
    script = write_script(tmp_path, "slim_net.py", """
        import numpy as np
        import tensorflow as tf
        import tensorflow.contrib.slim as slim
        from tensorflow.contrib.slim.nets import vgg

        assert tf.contrib.slim is slim and callable(vgg.vgg_a)
        images = tf.constant(np.random.RandomState(0).normal(size=(2, 8, 8, 3)).astype(np.float32))
        xavier = tf.contrib.layers.xavier_initializer(seed=1)
        with tf.contrib.framework.arg_scope([slim.conv2d, slim.fully_connected],
                                            weights_initializer=xavier):
            net = slim.conv2d(images, 4, [3, 3], scope="conv")
            net = slim.batch_norm(net, is_training=True)
            logits = slim.fully_connected(slim.flatten(net), 2, activation_fn=None, scope="fc")
        loss = tf.reduce_mean(tf.square(logits))
        train_op = slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.01),
                                                   clip_gradient_norm=4.0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first, second = sess.run(train_op), sess.run(train_op)
        print("variables", len(slim.get_model_variables()))
        print("loss decreased", second < first)
    """)
    result = run_legacy(script)
    assert result.returncode == 0, result.stderr
    # conv weights and biases, batch-norm beta and its two moving statistics, fc weights and biases
    assert "variables 7" in result.stdout
    assert "loss decreased True" in result.stdout


def test_unserved_contrib_module_fails_with_a_message_naming_it(tmp_path):
    script = write_script(tmp_path, "contrib_rnn.py", """
        import tensorflow as tf
        try:
            tf.contrib.crf.crf_log_likelihood
        except AttributeError as error:
            print("attribute:", error)
        try:
            from tensorflow.contrib import seq2seq
        except ImportError as error:
            print("from-import:", error)
        import tensorflow.contrib.learn
    """)
    result = run_legacy(script)
    assert result.returncode == 1
    assert "attribute: tf.contrib.crf has no home in TensorFlow 2" in result.stdout
    assert "from-import: tf.contrib.seq2seq has no home in TensorFlow 2" in result.stdout
    assert "tf.contrib.learn has no home in TensorFlow 2" in result.stderr


def test_contrib_rnn_core_is_served_from_compat_v1(tmp_path):
    script = write_script(tmp_path, "contrib_rnn_core.py", """
        import tensorflow as tf
        from tensorflow.contrib import rnn
        steps = [tf.ones([2, 3])] * 4
        outputs, state = tf.contrib.rnn.static_rnn(rnn.BasicLSTMCell(5), steps, dtype=tf.float32)
        print("outputs", len(outputs), outputs[-1].shape.as_list(), type(state).__name__)
    """)
    result = run_legacy(script)
    assert result.returncode == 0, result.stderr
    assert "outputs 4 [2, 5] LSTMStateTuple" in result.stdout


def test_script_can_define_its_own_log_dir_flag(tmp_path):
    script = write_script(tmp_path, "flags_script.py", """
        import tensorflow as tf
        tf.app.flags.DEFINE_string("log_dir", "/tmp/default", "Where summaries go.")
        tf.app.flags.DEFINE_integer("steps", 1, "Training steps.")
        FLAGS = tf.app.flags.FLAGS

        def main(argv):
            print("log_dir", FLAGS.log_dir, "steps", FLAGS.steps)
            return 3

        if __name__ == "__main__":
            tf.app.run()
    """)
    result = run_legacy(script, "--log_dir=/tmp/custom", "--steps=4")
    assert result.returncode == 3, result.stderr
    assert "log_dir /tmp/custom steps 4" in result.stdout


def test_install_is_idempotent_and_run_script_is_importable(tmp_path):
    target = write_script(tmp_path, "target.py", """
        import sys
        import tensorflow as tf
        print("target", __name__, sys.argv[1:], tf.placeholder.__module__)
    """)
    driver = write_script(tmp_path, "driver.py", f"""
        from migrate import legacy_runtime
        first = legacy_runtime.install()
        assert legacy_runtime.install() is first
        import tensorflow
        assert tensorflow is first
        legacy_runtime.run_script({str(target)!r}, ["a"])
        print("after", tensorflow.__name__)
    """)
    result = subprocess.run([sys.executable, str(driver)], capture_output=True, text=True,
                            timeout=180, cwd=tmp_path, env=clean_env())
    assert result.returncode == 0, result.stderr
    assert "target __main__ ['a']" in result.stdout
    assert "after tensorflow" in result.stdout
