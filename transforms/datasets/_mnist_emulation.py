"""TF1's MNIST tutorial loader (`tensorflow.examples.tutorials.mnist.input_data`, the same code as
`tensorflow.contrib.learn.python.learn.datasets.mnist`), which TensorFlow 2 no longer ships, on
TF2 APIs. TFM601 writes everything below the imports into a migrated file; tests import this module.

It reads the same gzipped IDX files from `train_dir` (downloading them from `source_url` when missing,
through `tf.io.gfile`, so `gs://` folders work as they did) and gives the same arrays, splits, dtypes and
batches: images scaled to [0, 1] as float32 (or uint8 left as they are), flattened to 784 values unless
`reshape` is false, labels one-hot as float64 or uint8 class numbers, the first `validation_size`
training images held out, and `next_batch` reshuffling through NumPy's global random state at each
epoch. Like TF1, building each data set re-seeds NumPy's global random state: with `seed` when given,
else with the graph-level seed TF1 had when the data was read (`global_seed`: what
`tf.set_random_seed` set before the call; None re-seeds from the operating system, as TF1 did then).
Not kept: `fake_data` (raises when true), and TF1's download retries.
"""
import collections
import gzip
import os
import tempfile
import urllib.request

import numpy
import tensorflow as tf

MNIST_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
MnistDataSets = collections.namedtuple("MnistDataSets", ["train", "validation", "test"])


class MnistDataSet:
    """One split of TF1's tutorial MNIST: images, labels and TF1's `next_batch`."""

    def __init__(self, images, labels, dtype=tf.float32, reshape=True, seed=None, global_seed=None):
        if seed == 0 and global_seed == 0:
            seed = 2**31 - 1  # TF1's get_seed never returned the pair (0, 0)
        numpy.random.seed(global_seed if seed is None else seed)
        dtype = tf.as_dtype(dtype).base_dtype
        if dtype not in (tf.uint8, tf.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        assert images.shape[0] == labels.shape[0], f"images.shape: {images.shape} labels.shape: {labels.shape}"
        self._num_examples = images.shape[0]
        if reshape:
            assert images.shape[3] == 1
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        if dtype == tf.float32:
            images = numpy.multiply(images.astype(numpy.float32), 1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples; an epoch's last batch is completed from the next epoch."""
        if fake_data:
            raise ValueError("fake_data is not supported by this copy of TF1's MNIST loader")
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch += batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]
        self._epochs_completed += 1
        images_rest, labels_rest = self._images[start:self._num_examples], self._labels[start:self._num_examples]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (numpy.concatenate((images_rest, self._images[0:end]), axis=0),
                numpy.concatenate((labels_rest, self._labels[0:end]), axis=0))

    def _shuffle(self):
        order = numpy.arange(self._num_examples)
        numpy.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]


def read_mnist_data_sets(train_dir, one_hot=False, dtype=tf.float32, reshape=True, validation_size=5000,
                         seed=None, source_url=MNIST_SOURCE_URL, *, global_seed=None, fake_data=False):
    """TF1's `input_data.read_data_sets`: train / validation / test MnistDataSets from `train_dir`."""
    if fake_data:
        raise ValueError("fake_data is not supported by this copy of TF1's MNIST loader")
    source_url = source_url or MNIST_SOURCE_URL
    train_images = _mnist_images(_mnist_file("train-images-idx3-ubyte.gz", train_dir, source_url))
    train_labels = _mnist_labels(_mnist_file("train-labels-idx1-ubyte.gz", train_dir, source_url), one_hot)
    test_images = _mnist_images(_mnist_file("t10k-images-idx3-ubyte.gz", train_dir, source_url))
    test_labels = _mnist_labels(_mnist_file("t10k-labels-idx1-ubyte.gz", train_dir, source_url), one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed, global_seed=global_seed)
    return MnistDataSets(
        train=MnistDataSet(train_images[validation_size:], train_labels[validation_size:], **options),
        validation=MnistDataSet(train_images[:validation_size], train_labels[:validation_size], **options),
        test=MnistDataSet(test_images, test_labels, **options))


def _mnist_file(filename, train_dir, source_url):
    """The path of `filename` in `train_dir`, downloaded there first when it is missing."""
    if not tf.io.gfile.exists(train_dir):
        tf.io.gfile.makedirs(train_dir)
    path = os.path.join(train_dir, filename)
    if not tf.io.gfile.exists(path):
        with tempfile.TemporaryDirectory() as folder:
            downloaded, _ = urllib.request.urlretrieve(source_url + filename, os.path.join(folder, filename))
            tf.io.gfile.copy(downloaded, path)
        print("Successfully downloaded", filename, tf.io.gfile.stat(path).length, "bytes.")
    return path


def _mnist_header(stream, magic, count):
    values = numpy.frombuffer(stream.read(4 * count), dtype=numpy.dtype(">u4"))
    if values[0] != magic:
        raise ValueError(f"Invalid magic number {values[0]} in MNIST file {stream.name}")
    return [int(value) for value in values[1:]]


def _mnist_images(path):
    print("Extracting", path)
    with tf.io.gfile.GFile(path, "rb") as file, gzip.GzipFile(fileobj=file) as stream:
        count, rows, columns = _mnist_header(stream, 2051, 4)
        pixels = numpy.frombuffer(stream.read(rows * columns * count), dtype=numpy.uint8)
        return pixels.reshape(count, rows, columns, 1)


def _mnist_labels(path, one_hot, num_classes=10):
    print("Extracting", path)
    with tf.io.gfile.GFile(path, "rb") as file, gzip.GzipFile(fileobj=file) as stream:
        (count,) = _mnist_header(stream, 2049, 2)
        labels = numpy.frombuffer(stream.read(count), dtype=numpy.uint8)
    if not one_hot:
        return labels
    dense = numpy.zeros((count, num_classes))
    dense.flat[numpy.arange(count) * num_classes + labels.ravel()] = 1
    return dense
