"""The shape of TensorFlow's own MNIST tutorial (`models/tutorials/image/mnist/convolutional.py`):
everything inside `main()`, run by `tf.app.run(main=main)`; weights as variables and a nested
`model(data, train=False)` function; a momentum optimizer whose learning rate decays with
`tf.train.exponential_decay(0.01, batch * BATCH_SIZE, train_size, 0.95, staircase=True)`, `batch`
being a float variable passed as `minimize(global_step=batch)`; the rate fetched with the loss now and
then; and a nested `eval_in_batches(data, sess)` that runs the session over fixed-size batches.

Smaller images and layers than the tutorial, seeded data and initial values, and no dropout, so the
migrated program must print the same numbers.
"""
import json

import numpy
import tensorflow as tf

IMAGE_SIZE = 12
NUM_CHANNELS = 1
NUM_LABELS = 10
SEED = 66478
BATCH_SIZE = 16
NUM_EPOCHS = 2
EVAL_BATCH_SIZE = 32
EVAL_FREQUENCY = 8

rng = numpy.random.RandomState(SEED)
train_data = rng.rand(160, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS).astype(numpy.float32)
train_labels = rng.randint(0, NUM_LABELS, 160).astype(numpy.int64)
validation_data = rng.rand(80, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS).astype(numpy.float32)
validation_labels = rng.randint(0, NUM_LABELS, 80).astype(numpy.int64)
train_size = train_labels.shape[0]


def seeded(shape, seed):
    return numpy.random.RandomState(seed).normal(0.0, 0.1, size=shape).astype(numpy.float32)


def error_rate(predictions, labels):
    return 100.0 - (100.0 * numpy.sum(numpy.argmax(predictions, 1) == labels) / predictions.shape[0])


def main(_=None):
    train_data_node = tf.placeholder(tf.float32, shape=(BATCH_SIZE, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS))
    train_labels_node = tf.placeholder(tf.int64, shape=(BATCH_SIZE,))
    eval_data = tf.placeholder(tf.float32, shape=(EVAL_BATCH_SIZE, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS))

    conv1_weights = tf.Variable(seeded([5, 5, NUM_CHANNELS, 8], 1))
    conv1_biases = tf.Variable(tf.zeros([8], dtype=tf.float32))
    fc1_weights = tf.Variable(seeded([IMAGE_SIZE // 2 * IMAGE_SIZE // 2 * 8, 32], 2))
    fc1_biases = tf.Variable(tf.constant(0.1, shape=[32], dtype=tf.float32))
    fc2_weights = tf.Variable(seeded([32, NUM_LABELS], 3))
    fc2_biases = tf.Variable(tf.constant(0.1, shape=[NUM_LABELS], dtype=tf.float32))

    def model(data, train=False):
        conv = tf.nn.conv2d(data, conv1_weights, strides=[1, 1, 1, 1], padding='SAME')
        relu = tf.nn.relu(tf.nn.bias_add(conv, conv1_biases))
        pool = tf.nn.max_pool(relu, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')
        pool_shape = pool.get_shape().as_list()
        reshape = tf.reshape(pool, [pool_shape[0], pool_shape[1] * pool_shape[2] * pool_shape[3]])
        hidden = tf.nn.relu(tf.matmul(reshape, fc1_weights) + fc1_biases)
        return tf.matmul(hidden, fc2_weights) + fc2_biases

    logits = model(train_data_node, True)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=train_labels_node, logits=logits))
    regularizers = (tf.nn.l2_loss(fc1_weights) + tf.nn.l2_loss(fc1_biases) +
                    tf.nn.l2_loss(fc2_weights) + tf.nn.l2_loss(fc2_biases))
    loss += 5e-4 * regularizers

    batch = tf.Variable(0, dtype=tf.float32)
    learning_rate = tf.train.exponential_decay(0.01, batch * BATCH_SIZE, train_size, 0.95, staircase=True)
    optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss, global_step=batch)

    train_prediction = tf.nn.softmax(logits)
    eval_prediction = tf.nn.softmax(model(eval_data))

    def eval_in_batches(data, sess):
        size = data.shape[0]
        predictions = numpy.ndarray(shape=(size, NUM_LABELS), dtype=numpy.float32)
        for begin in range(0, size, EVAL_BATCH_SIZE):
            end = begin + EVAL_BATCH_SIZE
            if end <= size:
                predictions[begin:end, :] = sess.run(eval_prediction, feed_dict={eval_data: data[begin:end, ...]})
            else:
                batch_predictions = sess.run(eval_prediction, feed_dict={eval_data: data[-EVAL_BATCH_SIZE:, ...]})
                predictions[begin:, :] = batch_predictions[begin - size:, :]
        return predictions

    losses, rates, errors = [], [], []
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        for step in range(int(NUM_EPOCHS * train_size) // BATCH_SIZE):
            offset = (step * BATCH_SIZE) % (train_size - BATCH_SIZE)
            batch_data = train_data[offset:(offset + BATCH_SIZE), ...]
            batch_labels = train_labels[offset:(offset + BATCH_SIZE)]
            feed_dict = {train_data_node: batch_data, train_labels_node: batch_labels}
            sess.run(optimizer, feed_dict=feed_dict)
            if step % EVAL_FREQUENCY == 0:
                l, lr, predictions = sess.run([loss, learning_rate, train_prediction], feed_dict=feed_dict)
                losses.append(round(float(l), 6))
                rates.append(round(float(lr), 8))
                errors.append(round(float(error_rate(eval_in_batches(validation_data, sess), validation_labels)), 4))
        print("RESULT losses %s" % json.dumps(losses))
        print("RESULT rates %s" % json.dumps(rates))
        print("RESULT validation_errors %s" % json.dumps(errors))
        print("RESULT final_predictions %s" % json.dumps(
            [round(float(v), 6) for v in eval_in_batches(validation_data, sess)[:2].ravel()]))


if __name__ == '__main__':
    tf.app.run(main=main)
