"""A LeNet-style classifier written with tf.contrib.slim, trained with slim.learning.

arg_scope sets the initializer, regularizer and activation once for every conv and
fully connected layer; the weight decay then shows up in the total loss.
"""
import json

import numpy as np
import tensorflow as tf

slim = tf.contrib.slim

NUM_CLASSES = 4
STEPS = 20


def lenet(images, num_classes, weight_decay=0.0005, scope="LeNet"):
    with tf.variable_scope(scope, "LeNet", [images]):
        with slim.arg_scope([slim.conv2d, slim.fully_connected],
                            activation_fn=tf.nn.relu,
                            weights_initializer=tf.truncated_normal_initializer(stddev=0.1, seed=3),
                            weights_regularizer=slim.l2_regularizer(weight_decay)):
            net = slim.conv2d(images, 8, [3, 3], scope="conv1")
            net = slim.max_pool2d(net, [2, 2], 2, scope="pool1")
            net = slim.conv2d(net, 16, [3, 3], scope="conv2")
            net = slim.max_pool2d(net, [2, 2], 2, scope="pool2")
            net = slim.flatten(net)
            net = slim.fully_connected(net, 32, scope="fc3")
            return slim.fully_connected(net, num_classes, activation_fn=None, scope="fc4")


def fake_dataset(rng, n):
    """Each class brightens a different quadrant of a 16x16 image."""
    images = rng.normal(0.0, 0.3, size=(n, 16, 16, 1)).astype(np.float32)
    labels = rng.randint(0, NUM_CLASSES, size=n)
    for i, label in enumerate(labels):
        row, col = divmod(label, 2)
        images[i, row * 8:(row + 1) * 8, col * 8:(col + 1) * 8] += 0.5
    return images, labels


tf.set_random_seed(7)
rng = np.random.RandomState(7)
images_np, labels_np = fake_dataset(rng, 96)

images = tf.constant(images_np)
one_hot = slim.one_hot_encoding(tf.constant(labels_np), NUM_CLASSES)
logits = lenet(images, NUM_CLASSES)
tf.losses.softmax_cross_entropy(one_hot, logits)
total_loss = tf.losses.get_total_loss()  # cross entropy + weight decay
optimizer = tf.train.MomentumOptimizer(learning_rate=0.05, momentum=0.9)
train_op = slim.learning.create_train_op(total_loss, optimizer, clip_gradient_norm=4.0)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels_np), tf.float32))

print("model variables:", [v.op.name for v in slim.get_model_variables()])
print("RESULT num_model_variables %r" % float(len(slim.get_model_variables())))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = [float(sess.run(train_op)) for _ in range(STEPS)]
    print("RESULT total_loss_trace %s" % json.dumps(losses[::5]))
    print("RESULT final_total_loss %r" % float(sess.run(total_loss)))
    print("RESULT final_accuracy %r" % float(sess.run(accuracy)))
