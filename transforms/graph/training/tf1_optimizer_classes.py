"""Keras optimizers that update exactly as TF1's tf.train optimizers did, written into a migrated file
by TFM201 where no stock Keras optimizer reproduces the TF1 update (transforms/data/optimizers.json,
`emulation` / `varying_rate_emulation`).

Each subclasses the Keras optimizer, so what the generated training step uses behaves as for the
stock ones: `apply_gradients`, `iterations` (which steps Keras learning-rate schedules),
`optimizer.learning_rate = <fed rate>`, tracking by tf.train.Checkpoint, wrapping in a
LossScaleOptimizer. Only the update differs: it is TF1's own kernel (`tf.raw_ops.ResourceApply*`,
the ops TF1's optimizers ran on resource variables), on slots created with TF1's initial values and
hyper-parameters cast to the variable's dtype as TF1 cast them. Sparse gradients (IndexedSlices) have
their duplicate indices summed first and go to the sparse kernel, as in TF1, so rows without a
gradient keep their slots untouched.
"""
from __future__ import annotations

from dataclasses import dataclass

BASE_CLASS = "TF1Optimizer"

_BASE_SOURCE = '''
class TF1Optimizer(tf.keras.optimizers.Optimizer):
    """A TF1 tf.train optimizer as a Keras optimizer: TF1's update kernels and slots (subclasses say
    which), on top of Keras' apply_gradients, iterations, learning-rate schedules and checkpoints."""

    slot_initializers = {}  # slot name -> Keras initializer, in TF1's creation order

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self.tf1_slots = {
            slot: [self.add_variable_from_reference(variable, slot, initializer=initializer) for variable in variables]
            for slot, initializer in self.slot_initializers.items()
        }

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        slots = {slot: self.tf1_slots[slot][index].handle for slot in self.slot_initializers}
        hyper = {name: tf.cast(value, variable.dtype) for name, value in self.hyper_parameters(learning_rate).items()}
        if isinstance(gradient, tf.IndexedSlices):
            indices, positions = tf.unique(gradient.indices)
            summed = tf.math.unsorted_segment_sum(gradient.values, positions, tf.shape(indices)[0])
            self.apply_sparse(variable.handle, slots, hyper, summed, indices)
        else:
            self.apply_dense(variable.handle, slots, hyper, gradient)
'''

_RMSPROP_SOURCE = '''
class TF1RMSProp(TF1Optimizer):
    """tf.compat.v1.train.RMSPropOptimizer: the mean square starts at one, TF1's defaults."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False):
        super().__init__(learning_rate=learning_rate, name="RMSProp")
        self.decay, self.momentum, self.epsilon, self.centered = decay, momentum, epsilon, centered
        self.slot_initializers = {"rms": "ones", **({"mg": "zeros"} if centered else {}), "momentum": "zeros"}

    def hyper_parameters(self, learning_rate):
        return {"lr": learning_rate, "rho": self.decay, "momentum": self.momentum, "epsilon": self.epsilon}

    def apply_dense(self, var, slots, hyper, grad):
        if self.centered:
            tf.raw_ops.ResourceApplyCenteredRMSProp(var=var, mg=slots["mg"], ms=slots["rms"], mom=slots["momentum"],
                                                    grad=grad, **hyper)
        else:
            tf.raw_ops.ResourceApplyRMSProp(var=var, ms=slots["rms"], mom=slots["momentum"], grad=grad, **hyper)

    def apply_sparse(self, var, slots, hyper, grad, indices):
        if self.centered:
            tf.raw_ops.ResourceSparseApplyCenteredRMSProp(var=var, mg=slots["mg"], ms=slots["rms"],
                                                          mom=slots["momentum"], grad=grad, indices=indices, **hyper)
        else:
            tf.raw_ops.ResourceSparseApplyRMSProp(var=var, ms=slots["rms"], mom=slots["momentum"], grad=grad,
                                                  indices=indices, **hyper)
'''

_MOMENTUM_SOURCE = '''
class TF1Momentum(TF1Optimizer):
    """tf.compat.v1.train.MomentumOptimizer: the accumulator sums raw gradients and the current rate
    scales it at each step (Keras SGD accumulates rate-scaled gradients instead)."""

    slot_initializers = {"momentum": "zeros"}

    def __init__(self, learning_rate, momentum, use_nesterov=False):
        super().__init__(learning_rate=learning_rate, name="Momentum")
        self.momentum, self.use_nesterov = momentum, use_nesterov

    def hyper_parameters(self, learning_rate):
        return {"lr": learning_rate, "momentum": self.momentum}

    def apply_dense(self, var, slots, hyper, grad):
        tf.raw_ops.ResourceApplyMomentum(var=var, accum=slots["momentum"], grad=grad, use_nesterov=self.use_nesterov,
                                         **hyper)

    def apply_sparse(self, var, slots, hyper, grad, indices):
        tf.raw_ops.ResourceSparseApplyMomentum(var=var, accum=slots["momentum"], grad=grad, indices=indices,
                                               use_nesterov=self.use_nesterov, **hyper)
'''


_ADAM_SOURCE = '''
class TF1Adam(TF1Optimizer):
    """tf.compat.v1.train.AdamOptimizer: its fused kernel, and its beta powers kept as variables
    multiplied once per step (Keras raises beta to the step count instead, which rounds otherwise)."""

    slot_initializers = {"m": "zeros", "v": "zeros"}

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08):
        super().__init__(learning_rate=learning_rate, name="Adam")
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self.beta1_power = self.add_variable((), tf.keras.initializers.Constant(self.beta1), name="beta1_power")
        self.beta2_power = self.add_variable((), tf.keras.initializers.Constant(self.beta2), name="beta2_power")

    def apply(self, grads, trainable_variables=None):
        super().apply(grads, trainable_variables)
        self.beta1_power.assign(self.beta1_power * self.beta1)
        self.beta2_power.assign(self.beta2_power * self.beta2)

    def hyper_parameters(self, learning_rate):
        return {"lr": learning_rate, "beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                "beta1_power": self.beta1_power, "beta2_power": self.beta2_power}

    def apply_dense(self, var, slots, hyper, grad):
        tf.raw_ops.ResourceApplyAdam(var=var, m=slots["m"], v=slots["v"], grad=grad, **hyper)

    def apply_sparse(self, var, slots, hyper, grad, indices):
        rate = hyper["lr"] * tf.sqrt(1 - hyper["beta2_power"]) / (1 - hyper["beta1_power"])
        m = self._decay_and_scatter_add(slots["m"], hyper["beta1"], indices, grad * (1 - hyper["beta1"]))
        v = self._decay_and_scatter_add(slots["v"], hyper["beta2"], indices, grad * grad * (1 - hyper["beta2"]))
        tf.raw_ops.AssignSubVariableOp(resource=var, value=rate * m / (tf.sqrt(v) + hyper["epsilon"]))

    @staticmethod
    def _decay_and_scatter_add(slot, decay, indices, updates):
        """TF1's sparse Adam: the whole slot decays, then the gradient rows are added; its new value."""
        decayed = tf.raw_ops.ReadVariableOp(resource=slot, dtype=updates.dtype) * decay
        tf.raw_ops.AssignVariableOp(resource=slot, value=decayed)
        tf.raw_ops.ResourceScatterAdd(resource=slot, indices=indices, updates=updates)
        return tf.raw_ops.ReadVariableOp(resource=slot, dtype=updates.dtype)
'''


@dataclass(frozen=True)
class OptimizerClass:
    """A class written into the migrated file, and what it reproduces (for the finding)."""

    name: str
    source: str
    what: str


CLASSES = {
    "TF1RMSProp": OptimizerClass("TF1RMSProp", _RMSPROP_SOURCE,
                                 "TF1's RMSProp kernels with its mean square starting at 1.0 and TF1's defaults "
                                 "(decay 0.9, epsilon 1e-10)"),
    "TF1Adam": OptimizerClass("TF1Adam", _ADAM_SOURCE,
                              "TF1's Adam kernel, with the beta powers multiplied each step as TF1 did (Keras's "
                              "Adam recomputes them as powers, which rounds differently, and runs about twice the "
                              "kernels)"),
    "TF1Momentum": OptimizerClass("TF1Momentum", _MOMENTUM_SOURCE,
                                  "TF1's Momentum kernel, which scales the accumulated gradients by the current "
                                  "learning rate"),
}


def class_sources(names: list[str]) -> list[str]:
    """The sources to write for the classes `names`: their base first, then each once."""
    return [_BASE_SOURCE] + [CLASSES[name].source for name in dict.fromkeys(names)]
