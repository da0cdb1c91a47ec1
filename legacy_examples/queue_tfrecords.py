"""A TF1 queue-runner input pipeline: TFRecord files read by threads, batched in the graph.

Writes seeded synthetic examples to a TFRecord file, then trains a linear classifier on them
through `string_input_producer` -> `TFRecordReader.read` -> `parse_single_example` ->
`tf.train.batch`, with a `Coordinator` and `start_queue_runners`, for a fixed number of
epochs: the loop stops at `tf.errors.OutOfRangeError`, and the coordinator is stopped in a
`finally:` block. One reader thread and one batching thread keep the file's order.
"""
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

EPOCHS = 2
BATCH = 16

rng = np.random.RandomState(11)
features_np = rng.randn(160, 5).astype(np.float32)
labels_np = (features_np[:, 0] + 0.5 * features_np[:, 1] > 0).astype(np.int64)

work_dir = tempfile.mkdtemp(prefix="queue_tfrecords_")
record_file = os.path.join(work_dir, "train.tfrecords")
with tf.python_io.TFRecordWriter(record_file) as writer:
    for row, row_label in zip(features_np, labels_np):
        example = tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist())),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(row_label)])),
        }))
        writer.write(example.SerializeToString())

filename_queue = tf.train.string_input_producer([record_file], num_epochs=EPOCHS, shuffle=False)
reader = tf.TFRecordReader()
_, serialized = reader.read(filename_queue)
parsed = tf.parse_single_example(serialized, features={
    "x": tf.FixedLenFeature([5], tf.float32),
    "label": tf.FixedLenFeature([], tf.int64),
})
x = parsed["x"] * 2.0
label = tf.cast(parsed["label"], tf.int32)
batch_x, batch_label = tf.train.batch([x, label], batch_size=BATCH)

weights = tf.Variable(np.zeros((5, 2), np.float32), name="weights")
bias = tf.Variable(np.zeros((2,), np.float32), name="bias")
logits = tf.matmul(batch_x, weights) + bias
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=batch_label, logits=logits))
train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

losses = []
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            _, loss_value = sess.run([train_op, loss])
            losses.append(float(loss_value))
    except tf.errors.OutOfRangeError:
        print("done: %d steps" % len(losses))
    finally:
        coord.request_stop()
        coord.join(threads)
shutil.rmtree(work_dir)

print("RESULT steps %r" % float(len(losses)))
print("RESULT losses %s" % json.dumps(losses[::4]))
print("RESULT last_loss %r" % losses[-1])
