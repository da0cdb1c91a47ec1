"""TF1 sources of the tf.contrib functions TFM503 writes into a migrated file, and the arguments each
one models.

Each is tf.contrib's own algorithm (tf-slim keeps the same code) restricted to the arguments listed,
written with core TF1 API names so that the later transforms rename it like the rest of the file
(`tf.get_variable` -> `tf.compat.v1.get_variable`). They build graph-mode code: TFM503 only writes
them into files that are still graph-building code.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Emulation:
    """A contrib function and the module-level function standing in for it."""

    contrib_name: str
    helper_name: str
    #: The contrib function's parameters in order (positional arguments are bound by it).
    signature: tuple[str, ...]
    #: The parameters the helper models; a call passing any other one is left alone.
    modelled: frozenset[str]
    #: parameter -> the only argument values the helper models for it (source code as written).
    accepted_values: dict[str, frozenset[str]]
    #: Parameters a call must pass (their contrib default takes a path the helper does not model).
    required: frozenset[str]
    #: What the helper reproduces, for the finding.
    what: str
    source: str


BATCH_NORM_SOURCE = '''
def tf1_batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
                   updates_collections=None, is_training=True, reuse=None, trainable=True, scope=None):
    """tf.contrib.layers.batch_norm as TF 1.x computed it with updates_collections=None: the fused
    kernel on 2-D and 4-D NHWC inputs, moving averages updated in place while training."""
    with tf.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse):
        inputs = original_inputs = tf.convert_to_tensor(inputs)
        original_shape = inputs.get_shape()
        if original_shape.ndims not in (2, 4):
            raise ValueError(
                "tf1_batch_norm models 2-D and 4-D inputs; tf.contrib used another algorithm for "
                "rank %s" % original_shape.ndims)
        if original_shape.ndims == 2:
            inputs = tf.reshape(inputs, [-1, 1, 1, original_shape.as_list()[-1]])
        params_shape = inputs.get_shape()[-1:]
        collections = [tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES]

        def variable(name, initializer, trainable):
            return tf.get_variable(
                name, shape=params_shape, dtype=tf.float32, initializer=initializer,
                trainable=trainable, collections=collections)

        if center:
            beta = variable("beta", tf.zeros_initializer(), trainable)
        else:
            beta = tf.constant(0.0, dtype=tf.float32, shape=params_shape)
        if scale:
            gamma = variable("gamma", tf.ones_initializer(), trainable)
        else:
            gamma = tf.constant(1.0, dtype=tf.float32, shape=params_shape)
        moving_mean = variable("moving_mean", tf.zeros_initializer(), False)
        moving_variance = variable("moving_variance", tf.ones_initializer(), False)

        def train():
            return tf.nn.fused_batch_norm(inputs, gamma, beta, epsilon=epsilon)

        def infer():
            return tf.nn.fused_batch_norm(
                inputs, gamma, beta, mean=moving_mean, variance=moving_variance, epsilon=epsilon,
                is_training=False)

        training = is_training if isinstance(is_training, bool) else tf.get_static_value(is_training)
        outputs, mean, variance = tf1_static_or_graph_cond(is_training, training, train, infer)
        if training is None or training:
            def update():
                update_mean = tf.assign_sub(moving_mean, (moving_mean - mean) * (1.0 - decay))
                update_variance = tf.assign_sub(
                    moving_variance, (moving_variance - variance) * (1.0 - decay))
                with tf.control_dependencies([update_mean, update_variance]):
                    return tf.identity(outputs)

            outputs = tf1_static_or_graph_cond(is_training, training, update, lambda: outputs)
        outputs.set_shape(inputs.get_shape())
        if original_shape.ndims == 2:
            outputs = tf.reshape(outputs, tf1_reshape_target(original_inputs))
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return outputs


def tf1_static_or_graph_cond(predicate, value, if_true, if_false):
    """A Python branch where the predicate's value is known when the graph is built, else tf.cond."""
    if value is None:
        return tf.cond(predicate, if_true, if_false)
    return if_true() if value else if_false()


def tf1_reshape_target(tensor):
    """`tensor`'s shape as a reshape target: its static sizes with -1 for at most one unknown size,
    else its dynamic shape."""
    dims = [-1 if dim is None else dim for dim in tensor.get_shape().as_list()]
    return dims if dims.count(-1) <= 1 else tf.shape(tensor)
'''

SLIM_BATCH_NORM_SOURCE = '''
def tf1_slim_model_variable_getter(getter, name, shape=None, dtype=None, initializer=None, regularizer=None,
                                   trainable=True, collections=None, caching_device=None, partitioner=None,
                                   use_resource=None, synchronization=tf.VariableSynchronization.AUTO,
                                   aggregation=tf.VariableAggregation.NONE, **_):
    """tf-slim's layer variable getter: the layer's variables become model variables."""
    return tf_slim.model_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        collections=collections, trainable=trainable, caching_device=caching_device,
        partitioner=partitioner, custom_getter=getter, use_resource=use_resource,
        synchronization=synchronization, aggregation=aggregation)


def tf1_slim_batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
                        param_initializers=None, param_regularizers=None,
                        updates_collections=tf.GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
                        variables_collections=None, outputs_collections=None, trainable=True,
                        batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False,
                        scope=None, renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """tf-slim's batch_norm (tf.contrib.layers.batch_norm) as TF 1.x ran it with its moving averages
    in UPDATE_OPS: the core BatchNormalization layer, which tf-slim 1.1 can no longer import on
    TensorFlow 2.21. The paths tf-slim took without that layer raise."""
    fused = True if fused is None else fused  # tf-slim's default
    inputs = tf.convert_to_tensor(inputs)
    rank = inputs.get_shape().ndims
    fused_kernel_path = (fused and rank == 2 and batch_weights is None and not renorm
                         and adjustment is None)
    # tf-slim chose its path by identity with the collection name, not equality.
    if (batch_weights is not None or updates_collections is not tf.GraphKeys.UPDATE_OPS
            or zero_debias_moving_mean or fused_kernel_path):
        raise NotImplementedError(
            "tf1_slim_batch_norm models tf-slim's core-layer path only: moving averages in "
            "UPDATE_OPS, no batch_weights, no zero_debias_moving_mean, and not 2-D inputs with "
            "fused left at its default or True (tf-slim took its own fused kernel there)")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with tf.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse,
                           custom_getter=tf1_slim_model_variable_getter) as sc:
        inputs = tf.convert_to_tensor(inputs)
        initializers = param_initializers or {}
        regularizers = param_regularizers or {}
        layer = tf.layers.BatchNormalization(
            axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon, center=center,
            scale=scale, beta_initializer=initializers.get("beta", tf.zeros_initializer()),
            gamma_initializer=initializers.get("gamma", tf.ones_initializer()),
            moving_mean_initializer=initializers.get("moving_mean", tf.zeros_initializer()),
            moving_variance_initializer=initializers.get("moving_variance", tf.ones_initializer()),
            beta_regularizer=regularizers.get("beta"), gamma_regularizer=regularizers.get("gamma"),
            trainable=trainable, renorm=renorm, renorm_clipping=renorm_clipping,
            renorm_momentum=renorm_decay, adjustment=adjustment, name=sc.name, _scope=sc,
            _reuse=reuse, fused=fused)
        outputs = layer.apply(inputs, training=is_training)
        for variable, name in ((layer.moving_mean, "moving_mean"), (layer.moving_variance, "moving_variance"),
                               (layer.beta, "beta"), (layer.gamma, "gamma")):
            collections = tf_slim.utils.get_variable_collections(variables_collections, name) or []
            for collection in collections if variable is not None else ():
                if variable not in tf.get_collection(collection):
                    tf.add_to_collection(collection, variable)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return tf_slim.utils.collect_named_outputs(outputs_collections, sc.name, outputs)


# `slim.arg_scope([slim.batch_norm], ...)` keys its defaults by tf-slim's function: they apply here too.
tf1_slim_batch_norm._key_op = tf_slim.batch_norm._key_op
tf1_slim_batch_norm = tf_slim.add_arg_scope(tf1_slim_batch_norm)
'''

OPTIMIZE_LOSS_SOURCE = '''
def tf1_optimize_loss(loss, global_step, learning_rate, optimizer, clip_gradients=None,
                      variables=None, name=None):
    """tf.contrib.layers.optimize_loss as TF 1.x ran it for an optimizer class and the default
    summaries: pending UPDATE_OPS run first, a float learning rate becomes a variable, gradients
    are clipped by global norm (a float) or by a function; returns the loss after the update."""
    with tf.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if global_step is None:
            global_step = tf.train.get_global_step()
        update_ops = set(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
        if update_ops:
            with tf.control_dependencies(list(update_ops)):
                loss = tf.identity(loss)
        if isinstance(learning_rate, float):
            learning_rate = tf.get_variable(
                "learning_rate", [], trainable=False, initializer=tf.constant_initializer(learning_rate))
        optimizer = optimizer(learning_rate=learning_rate)
        if variables is None:
            variables = tf.trainable_variables()
        gradients = optimizer.compute_gradients(loss, variables)
        tf.summary.scalar("global_norm/gradient_norm", tf.global_norm(list(zip(*gradients))[0]))
        if isinstance(clip_gradients, float):
            clipped, _ = tf.clip_by_global_norm(list(zip(*gradients))[0], clip_gradients)
            gradients = list(zip(clipped, list(zip(*gradients))[1]))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError("Unknown type %s for clip_gradients" % type(clip_gradients))
        tf.summary.scalar("loss", loss)
        if clip_gradients is not None:
            tf.summary.scalar("global_norm/clipped_gradient_norm",
                              tf.global_norm(list(zip(*gradients))[0]))
        train = optimizer.apply_gradients(gradients, global_step=global_step, name="train")
        with tf.control_dependencies([train]):
            return tf.identity(loss)
'''

# tf.contrib.layers.optimize_loss's optimizer names -> the TF1 class it constructs with the learning rate.
OPTIMIZER_CLASSES = {
    "Adagrad": "train.AdagradOptimizer",
    "Adam": "train.AdamOptimizer",
    "Ftrl": "train.FtrlOptimizer",
    "RMSProp": "train.RMSPropOptimizer",
    "SGD": "train.GradientDescentOptimizer",
}

BATCH_NORM = Emulation(
    contrib_name="tf.contrib.layers.batch_norm",
    helper_name="tf1_batch_norm",
    signature=("inputs", "decay", "center", "scale", "epsilon", "activation_fn", "param_initializers",
               "param_regularizers", "updates_collections", "is_training", "reuse",
               "variables_collections", "outputs_collections", "trainable", "batch_weights", "fused",
               "data_format", "zero_debias_moving_mean", "scope", "renorm", "renorm_clipping",
               "renorm_decay", "adjustment"),
    modelled=frozenset({"inputs", "decay", "center", "scale", "epsilon", "activation_fn",
                        "updates_collections", "is_training", "reuse", "trainable", "scope", "fused",
                        "data_format"}),
    accepted_values={"updates_collections": frozenset({"None"}),
                     "fused": frozenset({"None", "True"}),
                     "data_format": frozenset({"'NHWC'", '"NHWC"'})},
    required=frozenset({"updates_collections"}),
    what="the fused kernel on NHWC inputs, moving averages updated in place",
    source=BATCH_NORM_SOURCE,
)

OPTIMIZE_LOSS = Emulation(
    contrib_name="tf.contrib.layers.optimize_loss",
    helper_name="tf1_optimize_loss",
    signature=("loss", "global_step", "learning_rate", "optimizer", "gradient_noise_scale",
               "gradient_multipliers", "clip_gradients", "learning_rate_decay_fn", "update_ops",
               "variables", "name", "summaries", "colocate_gradients_with_ops",
               "increment_global_step"),
    modelled=frozenset({"loss", "global_step", "learning_rate", "optimizer", "clip_gradients",
                        "variables", "name"}),
    accepted_values={"optimizer": frozenset(f'"{name}"' for name in OPTIMIZER_CLASSES)
                     | frozenset(f"'{name}'" for name in OPTIMIZER_CLASSES)},
    required=frozenset({"optimizer"}),
    what="the pending update ops, the learning-rate variable, gradient clipping and the default summaries",
    source=OPTIMIZE_LOSS_SOURCE,
)

EMULATIONS = {emulation.contrib_name: emulation for emulation in (BATCH_NORM, OPTIMIZE_LOSS)}
