"""Cost of a tf.data pipeline's element-wise `map` per element vs per batch (TFM306), side by side.

The pipeline of `legacy_examples/data_epochs_layers.py` (300 rows of 6 features, seeded shuffle,
batches of 25), read inside a `tf.function` as its fused training loop reads it: the map before
`batch` (as written) or after it (as TFM306 writes it), and without a map as the floor. Prints
milliseconds per batch, medians over --repeats, the variants interleaved in each repeat.

    python benchmarks/dataset_map.py [--batches 600] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import tensorflow as tf


def normalise(x, y):
    return (x - 5.0) / 10.0, tf.cast(y, tf.int32)


def pipelines(features, labels, repeat):
    rows = tf.data.Dataset.from_tensor_slices((features, labels))
    return {
        "map per element (as written)": rows.map(normalise).shuffle(300, seed=21).batch(25).repeat(repeat),
        "map per batch (TFM306)": rows.shuffle(300, seed=21).batch(25).map(normalise).repeat(repeat),
        "no map (floor)": rows.shuffle(300, seed=21).batch(25).repeat(repeat),
    }


def reader(dataset):
    iterator = iter(dataset)

    @tf.function
    def read(count):
        total = tf.constant(0.0)
        for _ in tf.range(count):
            x, _ = iterator.get_next()
            total += tf.reduce_sum(x)
        return total

    return read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.RandomState(5)
    labels = rng.randint(0, 3, size=300)
    features = ((rng.randn(3, 6)[labels] + rng.randn(300, 6)) * 10.0 + 5.0).astype(np.float32)
    per_repeat = args.batches + 10  # the first 10 batches of each reader warm it up (tracing)
    readers = {name: reader(d) for name, d in pipelines(features, labels, args.repeats * per_repeat // 12 + 2).items()}
    times: dict[str, list[float]] = {name: [] for name in readers}
    for name, read in readers.items():
        read(tf.constant(10))
    for _ in range(args.repeats):
        for name, read in readers.items():
            start = time.perf_counter()
            read(tf.constant(args.batches))
            times[name].append((time.perf_counter() - start) / args.batches * 1e3)
    base = statistics.median(times["map per element (as written)"])
    print(f"{'pipeline':<30} {'ms/batch':>9} {'vs as written':>14}")
    for name, values in times.items():
        value = statistics.median(values)
        print(f"{name:<30} {value:>9.3f} {base / value:>13.1f}x")


if __name__ == "__main__":
    main()
