"""Whatever level a file reaches, the migrated program runs on the TensorFlow we target: a program
whose graph stays on compat.v1 with v1 layers selects legacy Keras (TFM106) and runs, and a file
using a TensorFlow name the installed API lacks is judged tf1 with a finding naming it (TFM107)."""
from __future__ import annotations

import os
import subprocess
import sys

from migrate.runner import migrate_path

# TFM201 leaves this graph to the renames (its builder returns a tuple of expressions).
KEPT_ON_COMPAT = '''import numpy as np
import tensorflow as tf


def build(scale=np.float32(2.0)):
    x = tf.placeholder(tf.float32, [None, 3])
    h = tf.layers.dense(x, 4, kernel_initializer=tf.constant_initializer(0.5))
    return x, h * scale


x, h = build()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("RESULT total", sess.run(h, {x: [[1.0, 2.0, 3.0]]}).sum())
'''

GONE_FROM_TF2 = '''import tensorflow as tf

classifier = tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=[])
'''


def run(args: list[str], cwd) -> list[str]:
    """The RESULT lines of a program run with Keras 3 selected (the program must select legacy Keras itself)."""
    env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if line.startswith("RESULT")]


def test_a_graph_kept_on_compat_v1_with_v1_layers_runs_on_plain_tf2(tmp_path):
    legacy = tmp_path / "legacy.py"
    legacy.write_text(KEPT_ON_COMPAT)
    result = migrate_path(str(legacy))
    assert result.level == "wrapped"  # TFM201 refuses the builder's default argument; TFM203 wraps the graph
    assert any(f.code == "TFM106" and f.fixed for f in result.findings)
    migrated = tmp_path / "migrated.py"
    migrated.write_text(result.new_source)
    expected = run(["-m", "migrate.legacy_runtime", str(legacy)], tmp_path)
    assert expected == ["RESULT total 24.0"]
    assert run([str(migrated)], tmp_path) == expected


def test_a_name_missing_from_the_installed_tensorflow_makes_the_file_tf1(tmp_path):
    program = tmp_path / "estimator.py"
    program.write_text(GONE_FROM_TF2)
    result = migrate_path(str(program))
    assert result.level == "tf1"
    missing = [f for f in result.findings if f.code == "TFM107"]
    assert len(missing) == 1 and missing[0].message.startswith("tf.estimator does not exist") and not missing[0].fixed


VERSION_FALLBACKS = """\
import numpy as np
import tensorflow as tf

if "concat_v2" in dir(tf):
    def concat(tensors, axis):
        return tf.concat_v2(tensors, axis)
else:
    def concat(tensors, axis):
        return tf.concat(tensors, axis)


def upsample(x, w, shape):
    try:
        return tf.nn.conv2d_transpose(x, w, output_shape=shape, strides=[1, 2, 2, 1])
    except AttributeError:  # TensorFlow before 0.7
        return tf.nn.deconv2d(x, w, output_shape=shape, strides=[1, 2, 2, 1])


x = tf.constant(np.ones((1, 2, 2, 1), np.float32))
up = upsample(x, tf.ones([2, 2, 1, 1]), [1, 4, 4, 1])
with tf.Session() as sess:
    print("RESULT total %r" % float(sess.run(tf.reduce_sum(concat([up, up], 3)))))
"""


def test_names_only_a_version_fallback_reaches_do_not_make_the_file_tf1(tmp_path):
    """The fallback for TensorFlow 0.x (`except AttributeError:`, `if "concat_v2" in dir(tf):`)
    never runs on TF2: the program runs, so it is not tf1, and nothing is reported missing."""
    legacy = tmp_path / "legacy.py"
    legacy.write_text(VERSION_FALLBACKS)
    result = migrate_path(str(legacy))
    assert result.level != "tf1" and not [f for f in result.findings if f.code == "TFM107"]
    migrated = tmp_path / "migrated.py"
    migrated.write_text(result.new_source)
    expected = run(["-m", "migrate.legacy_runtime", str(legacy)], tmp_path)
    assert expected == ["RESULT total 32.0"]
    assert run([str(migrated)], tmp_path) == expected

    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(VERSION_FALLBACKS.replace("except AttributeError:", "except ValueError:"))
    assert migrate_path(str(unguarded)).level == "tf1"
