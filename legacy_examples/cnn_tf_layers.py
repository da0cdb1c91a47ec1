"""Small convnet on synthetic 12x12 "images", written with tf.layers and tf.app.flags.

Images of class 1 hold a bright square, class 0 only noise. Hyperparameters come from
flags so the script can be launched as `cnn_tf_layers.py --train_steps=50`.
"""
import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer("train_steps", 20, "Number of Adam steps.")
flags.DEFINE_float("learning_rate", 0.01, "Adam learning rate.")
flags.DEFINE_integer("batch_size", 32, "Examples per step.")
FLAGS = flags.FLAGS

IMAGE_SIZE = 12


def synthetic_images(rng, n):
    images = rng.uniform(0.0, 0.5, size=(n, IMAGE_SIZE, IMAGE_SIZE, 1)).astype(np.float32)
    labels = rng.randint(0, 2, size=n)
    for i in np.nonzero(labels)[0]:
        row, col = rng.randint(0, IMAGE_SIZE - 4, size=2)
        images[i, row:row + 4, col:col + 4, 0] += 0.4
    return images, labels.astype(np.int32)


def inference(images):
    """conv -> pool -> conv -> pool -> dense -> logits."""
    net = tf.layers.conv2d(images, filters=8, kernel_size=3, padding="same",
                           activation=tf.nn.relu, name="conv1")
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2, name="pool1")
    net = tf.layers.conv2d(net, filters=16, kernel_size=3, padding="same",
                           activation=tf.nn.relu, name="conv2")
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2, name="pool2")
    net = tf.reshape(net, [-1, 3 * 3 * 16])
    net = tf.layers.dense(net, 32, activation=tf.nn.relu, name="fc1")
    return tf.layers.dense(net, 2, name="logits")


def main(_):
    tf.set_random_seed(42)
    rng = np.random.RandomState(42)
    images, labels = synthetic_images(rng, 128)

    x = tf.placeholder(tf.float32, [None, IMAGE_SIZE, IMAGE_SIZE, 1])
    y = tf.placeholder(tf.int32, [None])
    logits = inference(x)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y),
                                      tf.float32))
    train_op = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.train_steps):
            start = (step * FLAGS.batch_size) % len(images)
            batch = slice(start, start + FLAGS.batch_size)
            _, batch_loss = sess.run([train_op, loss], {x: images[batch], y: labels[batch]})
            if step == 0:
                print("RESULT loss_step_0 %r" % float(batch_loss))
        full = {x: images, y: labels}
        final_loss, final_accuracy = sess.run([loss, accuracy], full)
        print("trained %d steps: loss %.4f, accuracy %.3f"
              % (FLAGS.train_steps, final_loss, final_accuracy))
        print("RESULT final_loss %r" % float(final_loss))
        print("RESULT final_accuracy %r" % float(final_accuracy))


if __name__ == "__main__":
    tf.app.run()
