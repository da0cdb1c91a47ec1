"""TFM601's copy of TF1's MNIST tutorial loader (transforms/datasets/_mnist_emulation.py).

Checked against the corpus stand-in's implementation of TF1's algorithm (benchmarks/corpus/stand_ins,
written separately from the original's description): the same files give the same arrays and the same
batches, epoch after epoch. End to end, a TF1 tutorial program run on the legacy runtime and its
migration run on plain TF 2 (the copy in the file) print the same values: with the corpus stand-in
behind `input_data` and its served downloads, and with the legacy runtime's own `input_data`
(migrate/_legacy_tutorials.py) over files already in the folder.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from migrate.runner import migrate_path

ROOT = Path(__file__).resolve().parent.parent
STAND_INS = ROOT / "benchmarks" / "corpus" / "stand_ins"
sys.path.insert(0, str(STAND_INS))

from corpus_stand_ins import mnist as stand_in  # noqa: E402
from transforms.datasets import _mnist_emulation as emulation  # noqa: E402


@pytest.fixture
def mnist_folders(monkeypatch, tmp_path: Path) -> tuple[str, str]:
    """Two folders that will hold the same MNIST files, served by the stand-in's downloads; NumPy
    re-seeded from the system (no seed given) gets the same fixed seed on both sides."""
    monkeypatch.delenv(stand_in.MAX_BATCHES_VARIABLE, raising=False)
    monkeypatch.setattr(urllib.request, "urlretrieve", urllib.request.urlretrieve)
    monkeypatch.setattr(np.random, "seed", np.random.seed)
    stand_in.serve_downloads()
    stand_in.fixed_entropy()
    return str(tmp_path / "legacy"), str(tmp_path / "migrated")


OPTIONS = [dict(one_hot=True), dict(one_hot=False, reshape=False), dict(dtype="uint8", validation_size=5700),
           dict(one_hot=True, validation_size=0, seed=11)]


@pytest.mark.parametrize("options", OPTIONS, ids=["one_hot", "images_unflattened", "uint8_small_train", "seeded"])
def test_copy_reads_the_same_arrays_and_batches_as_tf1s_algorithm(mnist_folders, options):
    import tensorflow as tf
    legacy_folder, migrated_folder = mnist_folders
    migrated_options = dict(options, dtype=tf.uint8) if options.get("dtype") == "uint8" else options
    legacy_options = dict(options, dtype=np.uint8) if options.get("dtype") == "uint8" else options
    legacy = stand_in.read_data_sets(legacy_folder, **legacy_options)
    legacy_batches = [legacy.train.next_batch(128) for _ in range(12)]  # several epochs when 300 remain
    migrated = emulation.read_mnist_data_sets(migrated_folder, **migrated_options)
    migrated_batches = [migrated.train.next_batch(128) for _ in range(12)]
    for split in ("train", "validation", "test"):
        assert getattr(legacy, split).num_examples == getattr(migrated, split).num_examples
    for name in ("images", "labels"):
        for split in ("validation", "test"):
            expected, actual = getattr(getattr(legacy, split), name), getattr(getattr(migrated, split), name)
            assert actual.dtype == expected.dtype
            np.testing.assert_array_equal(actual, expected)
    for (images, labels), (expected_images, expected_labels) in zip(migrated_batches, legacy_batches):
        np.testing.assert_array_equal(images, expected_images)
        np.testing.assert_array_equal(labels, expected_labels)
    assert migrated.train.epochs_completed == legacy.train.epochs_completed


def test_copy_reseeds_numpy_as_tf1_did(mnist_folders):
    folder, _ = mnist_folders
    emulation.read_mnist_data_sets(folder, global_seed=4)
    assert np.random.rand() == np.random.RandomState(4).rand()  # the graph seed, when no seed is given
    emulation.read_mnist_data_sets(folder, seed=9, global_seed=4)
    assert np.random.rand() == np.random.RandomState(9).rand()
    emulation.read_mnist_data_sets(folder, seed=0, global_seed=0)
    assert np.random.rand() == np.random.RandomState(2**31 - 1).rand()  # TF1 never used the pair (0, 0)


def test_copy_rejects_what_it_does_not_model(mnist_folders):
    folder, _ = mnist_folders
    data = emulation.read_mnist_data_sets(folder)
    with pytest.raises(ValueError, match="fake_data"):
        data.train.next_batch(10, fake_data=True)
    with pytest.raises(ValueError, match="Validation size"):
        emulation.read_mnist_data_sets(folder, validation_size=7000)


TUTORIAL = '''import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

tf.set_random_seed(0)
mnist = input_data.read_data_sets("MNIST_data/", one_hot=True)
x = tf.placeholder(tf.float32, [None, 784])
y_ = tf.placeholder(tf.float32, [None, 10])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
y = tf.matmul(x, W) + b
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
train_step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1)), tf.float32))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(12):
        batch_xs, batch_ys = mnist.train.next_batch(100)
        _, value = sess.run([train_step, loss], feed_dict={x: batch_xs, y_: batch_ys})
        print("RESULT loss_%d %r" % (step, float(value)))
    print("RESULT accuracy %r" % float(sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})))
'''


def _results(command: list[str], folder: Path, served: bool) -> dict[str, float]:
    """The RESULT lines of a run; `served`: with the corpus stand-in (its input_data and downloads)."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(STAND_INS), str(ROOT)]), TF_CPP_MIN_LOG_LEVEL="2")
    if served:
        environment["TFM_CORPUS_STAND_INS"] = "mnist"
    completed = subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    lines = [line.split() for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    return {name: float(value) for _, name, value in lines}


@pytest.mark.parametrize("served", [True, False], ids=["corpus_stand_in", "legacy_runtime_loader"])
def test_tutorial_program_prints_the_same_values_migrated(tmp_path: Path, served: bool):
    for side in ("legacy", "migrated"):
        (tmp_path / side / "MNIST_data").mkdir(parents=True)
        if not served:  # the files are there: nothing is downloaded
            for name, data in stand_in.tutorial_files().items():
                (tmp_path / side / "MNIST_data" / name).write_bytes(data)
    program = tmp_path / "legacy" / "softmax.py"
    program.write_text(TUTORIAL)
    result = migrate_path(str(program))
    assert result.status == "changed" and result.level == "tf2", result.findings
    assert "examples.tutorials" not in result.new_source and "Session" not in result.new_source
    (tmp_path / "migrated" / "softmax.py").write_text(result.new_source)
    legacy = _results([sys.executable, "-m", "migrate.legacy_runtime", "softmax.py"], tmp_path / "legacy", served)
    migrated = _results([sys.executable, "softmax.py"], tmp_path / "migrated", served)
    assert legacy.keys() == migrated.keys() and len(legacy) == 13
    for name, value in legacy.items():
        assert migrated[name] == pytest.approx(value, abs=1e-5), name


@pytest.mark.parametrize("name", ["mnist_deep_tutorial", "mnist_mlp_epochs_tutorial", "mnist_autoencoder_sampling",
                                  "mnist_neural_network_raw", "mnist_gan_noise", "mnist_gan_samples_first",
                                  "mnist_wgan_gp_critic_loop", "mnist_rnn_reshaped_batches"])
def test_tutorial_example_migrates_to_tf2_and_verifies_equivalent(name: str, tmp_path: Path):
    """The legacy examples built like the tutorials (the loader on a synthetic MNIST, next_batch feeds,
    InteractiveSession .run/.eval or an epoch loop averaging the cost): the harness runs both sides
    with the same initial weights and compares every run site and RESULT line."""
    example = ROOT / "legacy_examples" / f"{name}.py"
    result = migrate_path(str(example))
    assert result.status == "changed" and result.level == "tf2", result.findings
    tree = ast.parse(result.new_source)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not any("examples.tutorials" in name for name in imported) and "InteractiveSession" not in used
    done = subprocess.run([sys.executable, "-m", "migrate", "verify", str(example)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith(f"{name}.py")]
    assert rows and rows[0][1] == "equivalent", done.stdout
