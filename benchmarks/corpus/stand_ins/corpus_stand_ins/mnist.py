"""A synthetic, seeded stand-in for `tensorflow.examples.tutorials.mnist.input_data` (TF 1.x), and the
downloads of TF1's loader and of its copy that tf-migrate writes into migrated programs (TFM601).

`read_data_sets(...)` is the original's algorithm: it reads the four gzipped IDX files from `train_dir`,
downloading the missing ones (served here: `serve_downloads` answers MNIST's URLs with synthetic files
of 6,000 training and 1,000 test images, so the default 5,000 validation images leave 1,000 to train on),
holds out the first `validation_size` training images, and builds `Datasets(train, validation, test)`
of `DataSet`s with the original's shapes, dtypes, value ranges (float32 images in [0, 1], flat 784
values unless `reshape=False`; one-hot float64 or uint8 labels) and `next_batch`. Like the original,
building a DataSet re-seeds NumPy's global random state with `seed`, else with the graph-level seed;
a re-seed from the system (no seed at all) is made deterministic by `fixed_entropy`, the same on both
sides of a comparison. Each digit class is a fixed random pattern plus noise, so classifiers learn something.

`TFM_CORPUS_MAX_BATCHES=N` ends the program cleanly (SystemExit(0)) when `next_batch` is asked for
minibatch N+1, across all of the program's data sets, as a finite data set would run out: this
bounds programs whose step count no flag controls, identically for the legacy and the migrated run
(whose `MnistDataSet` class, written by TFM601, gets the same budget through `budget_migrated_loader`).
"""
from __future__ import annotations

import builtins
import collections
import functools
import gzip
import os
import shutil
import struct
import sys
import tempfile
import urllib.request

import numpy

SEED = 20190701
TUTORIAL_TRAIN, TUTORIAL_TEST = 6000, 1000  # what the served downloads hold
IMAGE_SIDE, NUM_CLASSES = 28, 10
FILE_NAMES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
              "t10k-labels-idx1-ubyte.gz")
ENTROPY_SEED = 20191231  # what numpy.random.seed(None) seeds with while fixed_entropy is on
MIGRATED_LOADER_CLASS = "MnistDataSet"  # TFM601's copy of DataSet in migrated programs
MAX_BATCHES_VARIABLE = "TFM_CORPUS_MAX_BATCHES"

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


class BatchBudget:
    """Counts minibatches served by every DataSet of the process; ends it past the budget."""

    served = 0

    @classmethod
    def take(cls) -> None:
        limit = os.environ.get(MAX_BATCHES_VARIABLE)
        if limit is not None and cls.served >= int(limit):
            print(f"[corpus stand-in] {cls.served} minibatches served ({MAX_BATCHES_VARIABLE}={limit}): "
                  "the data set ends the program here", file=sys.stderr)
            sys.stdout.flush()
            raise SystemExit(0)
        cls.served += 1


def synthetic_digits(count: int, rng: numpy.random.RandomState) -> tuple[numpy.ndarray, numpy.ndarray]:
    """`count` uint8 images (count, 28, 28, 1) and their uint8 labels."""
    patterns = numpy.random.RandomState(SEED).rand(NUM_CLASSES, IMAGE_SIDE, IMAGE_SIDE) > 0.7
    labels = rng.randint(0, NUM_CLASSES, size=count).astype(numpy.uint8)
    noise = rng.rand(count, IMAGE_SIDE, IMAGE_SIDE) * 0.3
    brightness = 0.7 + 0.3 * rng.rand(count, 1, 1)
    images = numpy.clip(patterns[labels] * brightness + noise, 0.0, 1.0)
    return (images * 255).astype(numpy.uint8)[..., None], labels


@functools.lru_cache(maxsize=1)
def idx_files() -> dict[str, bytes]:
    """Full-size MNIST in its original gzipped IDX files (60,000 train and 10,000 test images, with the
    real headers), for programs that read the files themselves and expect the full counts."""
    return _idx_files(60000, 10000)


@functools.lru_cache(maxsize=1)
def tutorial_files() -> dict[str, bytes]:
    """The files the served downloads hold (see the module docstring for the sizes)."""
    return _idx_files(TUTORIAL_TRAIN, TUTORIAL_TEST)


def _idx_files(train: int, test: int) -> dict[str, bytes]:
    rng = numpy.random.RandomState(SEED)
    files = {}
    for prefix, count in (("train", train), ("t10k", test)):
        images, labels = synthetic_digits(count, rng)
        files[f"{prefix}-images-idx3-ubyte.gz"] = gzip.compress(
            struct.pack(">IIII", 2051, count, IMAGE_SIDE, IMAGE_SIDE) + images.tobytes(), compresslevel=1)
        files[f"{prefix}-labels-idx1-ubyte.gz"] = gzip.compress(struct.pack(">II", 2049, count) + labels.tobytes(),
                                                                compresslevel=1)
    return files


def serve_downloads() -> None:
    """Answer `urllib.request.urlretrieve` of MNIST's files (any source URL) with `tutorial_files()`."""
    original = urllib.request.urlretrieve

    def urlretrieve(url, filename=None, *args, **kwargs):
        name = str(url).rsplit("/", 1)[-1]
        if name not in FILE_NAMES:
            return original(url, filename, *args, **kwargs)
        if filename is None:
            filename = os.path.join(tempfile.mkdtemp(prefix="tfm-mnist-"), name)
        with open(filename, "wb") as handle:
            handle.write(tutorial_files()[name])
        return filename, None

    urllib.request.urlretrieve = urlretrieve


def fixed_entropy() -> None:
    """`numpy.random.seed()` / `seed(None)` seeds with ENTROPY_SEED instead of the system's entropy."""
    original = numpy.random.seed

    def seed(seed=None):
        original(ENTROPY_SEED if seed is None else seed)

    numpy.random.seed = seed


def budget_migrated_loader() -> None:
    """Give the `next_batch` of TFM601's `MnistDataSet` class, when a program defines it, the batch budget."""
    original = builtins.__build_class__

    def build_class(function, name, *bases, **keywords):
        cls = original(function, name, *bases, **keywords)
        if name == MIGRATED_LOADER_CLASS and callable(getattr(cls, "next_batch", None)):
            cls.next_batch = _budgeted(cls.next_batch)
        return cls

    builtins.__build_class__ = build_class


def _budgeted(next_batch):
    @functools.wraps(next_batch)
    def wrapper(*args, **kwargs):
        BatchBudget.take()
        return next_batch(*args, **kwargs)
    return wrapper


def dense_to_one_hot(labels: numpy.ndarray, num_classes: int = NUM_CLASSES) -> numpy.ndarray:
    one_hot = numpy.zeros((labels.shape[0], num_classes))
    one_hot[numpy.arange(labels.shape[0]), labels] = 1
    return one_hot


class DataSet:
    """The original's DataSet: same constructor, NumPy re-seeding, properties and `next_batch` algorithm."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=numpy.float32, reshape=True,
                 seed=None):
        del fake_data, one_hot  # accepted for compatibility, as the original does for its callers
        numpy.random.seed(_numpy_seed(seed))
        self._num_examples = images.shape[0]
        if reshape:
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        if numpy.dtype(getattr(dtype, "as_numpy_dtype", dtype)) == numpy.float32:
            images = images.astype(numpy.float32) * (1.0 / 255.0)
        self._images, self._labels = images, labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples, reshuffled (numpy.random) at each epoch's start."""
        BatchBudget.take()
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch += batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]
        self._epochs_completed += 1
        images_rest, labels_rest = self._images[start:], self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (numpy.concatenate((images_rest, self._images[:end]), axis=0),
                numpy.concatenate((labels_rest, self._labels[:end]), axis=0))

    def _shuffle(self) -> None:
        order = numpy.arange(self._num_examples)
        numpy.random.shuffle(order)
        self._images, self._labels = self._images[order], self._labels[order]


def _numpy_seed(seed):
    """What the original passed to numpy.random.seed: `seed2 if seed else seed1` of TF1's get_seed."""
    graph_seed = _graph_seed()
    if seed is None:
        return graph_seed
    return 2**31 - 1 if seed == 0 and graph_seed == 0 else seed


def _graph_seed():
    tensorflow = sys.modules.get("tensorflow")
    return None if tensorflow is None else tensorflow.compat.v1.get_default_graph().seed


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=numpy.float32, reshape=True,
                   validation_size=5000, seed=None, source_url="https://storage.googleapis.com/cvdf-datasets/mnist/"):
    """The original's read_data_sets over the files in `train_dir` (downloaded when missing)."""
    if fake_data:
        raise NotImplementedError("the corpus stand-in serves no fake data")
    images = {name: _read_idx(_maybe_download(name, train_dir, source_url)) for name in FILE_NAMES}
    train_images, test_images = images[FILE_NAMES[0]], images[FILE_NAMES[2]]
    train_labels, test_labels = images[FILE_NAMES[1]], images[FILE_NAMES[3]]
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels), dense_to_one_hot(test_labels)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
                    validation=DataSet(train_images[:validation_size], train_labels[:validation_size], **options),
                    test=DataSet(test_images, test_labels, **options))


def _maybe_download(name: str, train_dir: str, source_url: str) -> str:
    os.makedirs(train_dir, exist_ok=True)
    path = os.path.join(train_dir, name)
    if not os.path.exists(path):
        downloaded, _ = urllib.request.urlretrieve(source_url + name)
        shutil.copyfile(downloaded, path)
    return path


def _read_idx(path: str) -> numpy.ndarray:
    """Images (count, rows, columns, 1) or labels (count,) of a gzipped IDX file, as uint8."""
    with gzip.open(path, "rb") as stream:
        magic, count = struct.unpack(">II", stream.read(8))
        if magic == 2049:
            return numpy.frombuffer(stream.read(count), dtype=numpy.uint8)
        rows, columns = struct.unpack(">II", stream.read(8))
        return numpy.frombuffer(stream.read(count * rows * columns), dtype=numpy.uint8).reshape(count, rows, columns, 1)
