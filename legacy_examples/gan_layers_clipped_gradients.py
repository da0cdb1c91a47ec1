"""A small DCGAN in the style of znxlwm's MNIST DCGAN and the GAN tutorials built on `tf.layers`.

The generator (`tf.layers.dense` without a bias, `batch_normalization` switched by an `is_train`
placeholder, `conv2d_transpose`) and the discriminator (`conv2d`, `flatten`, `dense`) are functions building
their layers under `tf.variable_scope`, the discriminator called a second time with `reuse=True`
on the generated images. Each network trains on the variables its scope names, picked from
`tf.trainable_variables()` by `var.name.startswith(...)`. The discriminator's gradients are
computed, clipped by norm and applied in three statements (`compute_gradients` /
`apply_gradients`, with the global step), the generator's by `minimize`; both under the UPDATE_OPS
control dependency. The 4x4 "images" are normalised by a `tf.nn.l2_normalize(...).eval()` before
training. Kernels start from seeded NumPy arrays (`tf.constant_initializer`, drawn once before the
networks are built), noise comes from a seeded `RandomState`.
"""
import numpy as np
import tensorflow as tf

BATCH_SIZE = 16
Z_DIM = 3
EPOCHS = 3
LEARNING_RATE = 0.01

rng = np.random.RandomState(11)


def lrelu(x, leak=0.2):
    return tf.maximum(x, leak * x)


# Real data: 4x4 images holding one bright row or column, with noise.
raw_images = rng.uniform(0.0, 0.1, size=(128, 4, 4, 1)).astype(np.float32)
for index in range(len(raw_images)):
    line = index % 4
    if index % 2:
        raw_images[index, line, :, 0] += 1.0
    else:
        raw_images[index, :, line, 0] += 1.0
num_batches = len(raw_images) // BATCH_SIZE

# Drawn once, here: drawn in the discriminator's layer calls, they would be drawn again at its
# reusing call.
G_DENSE_INIT = tf.constant_initializer(rng.normal(0.0, 0.3, size=(Z_DIM, 16)).astype(np.float32))
G_DECONV_INIT = tf.constant_initializer(rng.normal(0.0, 0.3, size=(3, 3, 1, 4)).astype(np.float32))
D_CONV_INIT = tf.constant_initializer(rng.normal(0.0, 0.3, size=(3, 3, 1, 4)).astype(np.float32))
D_DENSE_INIT = tf.constant_initializer(rng.normal(0.0, 0.3, size=(16, 1)).astype(np.float32))


def generator(z, is_train):
    with tf.variable_scope("generator"):
        net = tf.layers.dense(z, 2 * 2 * 4, use_bias=False, kernel_initializer=G_DENSE_INIT)
        net = tf.nn.relu(tf.layers.batch_normalization(net, training=is_train))
        net = tf.reshape(net, [-1, 2, 2, 4])
        net = tf.layers.conv2d_transpose(net, 1, [3, 3], strides=(2, 2), padding="same",
                                         kernel_initializer=G_DECONV_INIT)
        return tf.nn.tanh(net)


def discriminator(images, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        net = lrelu(tf.layers.conv2d(images, 4, [3, 3], strides=(2, 2), padding="same",
                                     kernel_initializer=D_CONV_INIT))
        logits = tf.layers.dense(tf.layers.flatten(net), 1, kernel_initializer=D_DENSE_INIT)
        return tf.nn.sigmoid(logits), logits


x = tf.placeholder(tf.float32, [None, 4, 4, 1])
z = tf.placeholder(tf.float32, [None, Z_DIM])
is_train = tf.placeholder(tf.bool)

fake_images = generator(z, is_train)
D_real, D_real_logits = discriminator(x)
D_fake, D_fake_logits = discriminator(fake_images, reuse=True)

D_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_real_logits, labels=tf.ones_like(D_real))
                        + tf.nn.sigmoid_cross_entropy_with_logits(logits=D_fake_logits, labels=tf.zeros_like(D_fake)))
G_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_fake_logits, labels=tf.ones_like(D_fake)))

T_vars = tf.trainable_variables()
D_vars = [var for var in T_vars if var.name.startswith("discriminator")]
G_vars = [var for var in T_vars if var.name.startswith("generator")]

global_step = tf.Variable(0, trainable=False, name="global_step")
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    D_optimizer = tf.train.AdamOptimizer(LEARNING_RATE, beta1=0.5)
    D_grads_and_vars = D_optimizer.compute_gradients(D_loss, var_list=D_vars)
    D_clipped = [(tf.clip_by_norm(grad, 1.0), var) for grad, var in D_grads_and_vars]
    D_optim = D_optimizer.apply_gradients(D_clipped, global_step=global_step)
    G_optim = tf.train.AdamOptimizer(LEARNING_RATE, beta1=0.5).minimize(G_loss, var_list=G_vars)

sample_z = rng.uniform(-1.0, 1.0, size=(4, Z_DIM)).astype(np.float32)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    train_images = tf.nn.l2_normalize(raw_images, axis=[1, 2]).eval()
    for epoch in range(EPOCHS):
        D_losses, G_losses = [], []
        for batch in range(num_batches):
            x_ = train_images[batch * BATCH_SIZE:(batch + 1) * BATCH_SIZE]
            z_ = rng.uniform(-1.0, 1.0, size=(BATCH_SIZE, Z_DIM)).astype(np.float32)
            loss_d_, _ = sess.run([D_loss, D_optim], {x: x_, z: z_, is_train: True})
            loss_g_, _ = sess.run([G_loss, G_optim], {z: z_, is_train: True})
            D_losses.append(loss_d_)
            G_losses.append(loss_g_)
        print("RESULT losses_%d %s" % (epoch, [float(np.mean(D_losses)), float(np.mean(G_losses))]))
    samples = sess.run(fake_images, {z: sample_z, is_train: False})
    print("RESULT samples %s" % [round(float(v), 6) for v in samples.ravel()[:16]])
    print("RESULT step %d" % sess.run(global_step))
