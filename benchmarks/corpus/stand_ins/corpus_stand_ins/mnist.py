"""A synthetic, seeded stand-in for `tensorflow.examples.tutorials.mnist.input_data` (TF 1.x).

`read_data_sets(...)` returns the same structure as the original (`Datasets(train, validation,
test)` of `DataSet`s with `images`, `labels`, `num_examples`, `epochs_completed`, `next_batch`), with
the same shapes, dtypes and value ranges (float32 images in [0, 1], flat 784 values unless
`reshape=False`; one-hot float64 or uint8 labels), the same shuffling through NumPy's global random
state, but 1/50 of the size: 1,200 training images (of which `validation_size / 50` are held out for
validation, 100 by default) and 200 test images. Each digit class is a fixed random pattern plus
noise, so classifiers can learn something. Nothing is downloaded and `train_dir` is not touched.

`TFM_CORPUS_MAX_BATCHES=N` ends the program cleanly (SystemExit(0)) when `next_batch` is asked for
minibatch N+1, across all of the program's data sets, as a finite data set would run out: this
bounds programs whose step count no flag controls, identically for the legacy and the migrated run.
"""
from __future__ import annotations

import collections
import functools
import gzip
import os
import struct
import sys

import numpy

SEED = 20190701
SCALE = 50
TRAIN_POOL, TEST_SIZE = 60000 // SCALE, 10000 // SCALE
IMAGE_SIDE, NUM_CLASSES = 28, 10
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
    rng = numpy.random.RandomState(SEED)
    files = {}
    for prefix, count in (("train", 60000), ("t10k", 10000)):
        images, labels = synthetic_digits(count, rng)
        files[f"{prefix}-images-idx3-ubyte.gz"] = gzip.compress(
            struct.pack(">IIII", 2051, count, IMAGE_SIDE, IMAGE_SIDE) + images.tobytes(), compresslevel=1)
        files[f"{prefix}-labels-idx1-ubyte.gz"] = gzip.compress(struct.pack(">II", 2049, count) + labels.tobytes(),
                                                                compresslevel=1)
    return files


def dense_to_one_hot(labels: numpy.ndarray, num_classes: int = NUM_CLASSES) -> numpy.ndarray:
    one_hot = numpy.zeros((labels.shape[0], num_classes))
    one_hot[numpy.arange(labels.shape[0]), labels] = 1
    return one_hot


class DataSet:
    """The original's DataSet: same constructor, properties and `next_batch` algorithm."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=numpy.float32, reshape=True,
                 seed=None):
        del fake_data, one_hot, seed  # accepted for compatibility, as the original does for its callers
        self._num_examples = images.shape[0]
        if reshape:
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        if numpy.dtype(dtype) == numpy.float32:
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


def read_data_sets(train_dir=None, fake_data=False, one_hot=False, dtype=numpy.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    """Synthetic MNIST with the original's signature; see the module docstring for the sizes."""
    del train_dir, fake_data, source_url
    rng = numpy.random.RandomState(SEED)
    train_images, train_labels = synthetic_digits(TRAIN_POOL, rng)
    test_images, test_labels = synthetic_digits(TEST_SIZE, rng)
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels), dense_to_one_hot(test_labels)
    held_out = validation_size // SCALE
    if not 0 <= held_out <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images) * SCALE}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(train=DataSet(train_images[held_out:], train_labels[held_out:], **options),
                    validation=DataSet(train_images[:held_out], train_labels[:held_out], **options),
                    test=DataSet(test_images, test_labels, **options))
