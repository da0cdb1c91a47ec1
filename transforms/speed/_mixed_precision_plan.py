"""What TFM303 (use_mixed_precision) changes in a module, found before anything is rewritten.

Under a mixed global policy Keras layers compute in float16 (or bfloat16) and return that dtype.
Code that is not a Keras layer (a loss, softmax, `tf.argmax`, arithmetic with float32 tensors) must
keep seeing float32, so every layer whose output can reach such code gets `dtype="float32"`: it then
casts its input back up and computes in float32, the way Keras' mixed-precision guide keeps the
logits layer. A layer whose results only ever feed other layers stays in the mixed policy.
Weights made outside Keras (`tf.Variable`) would meet float16 activations: such modules are refused.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from transforms.common.values import source as code_of
from transforms.common.syntax import children, walk

KERAS_LAYERS = "tf.keras.layers"
SET_POLICY = "tf.keras.mixed_precision.set_global_policy"
KERAS_OPTIMIZERS = "tf.keras.optimizers"
RAW_VARIABLES = frozenset({"tf.Variable", "tf.compat.v1.Variable", "tf.compat.v1.get_variable"})
WHOLE_MODELS = frozenset({"tf.keras.Sequential", "tf.keras.Model", "tf.keras.models.Sequential",
                          "tf.keras.models.Model"})


@dataclass
class TapeScaling:
    """One `tape.gradient(loss, ...)` whose loss gets scaled inside the tape's `with` block."""

    tape_block: cst.With
    loss: str
    gradient_call: cst.Call
    optimizer: str  # the code of the optimizer applying the gradients
    scaled: str = ""


@dataclass
class MixedPrecisionPlan:
    layers: dict[str, cst.Call] = field(default_factory=dict)  # layer object (code) -> its constructor
    float32_layers: set[str] = field(default_factory=set)
    optimizers: dict[str, cst.Call] = field(default_factory=dict)  # optimizer (code) -> its constructor
    scalings: list[TapeScaling] = field(default_factory=list)
    problem: tuple[cst.CSTNode, str] | None = None
    already_set: bool = False


def plan_mixed_precision(module: cst.Module, tf_name: Callable[[cst.CSTNode], str | None]) -> MixedPrecisionPlan:
    plan = MixedPrecisionPlan()
    calls = [node for node in walk(module) if isinstance(node, cst.Call)]
    if any(tf_name(node.func) == SET_POLICY for node in calls):
        plan.already_set = True  # the program chose its precision itself (or a previous run did)
        return plan
    for node in calls:
        name = tf_name(node.func) or ""
        if name in RAW_VARIABLES:
            plan.problem = (node, f"weights made with {name} stay float32 outside Keras' dtype policy and "
                                  "would meet float16 activations")
        elif name in WHOLE_MODELS:
            plan.problem = (node, f"{name} models are not analysed: which of their outputs reach float32 "
                                  "code is not known")
        if plan.problem:
            return plan
    optimizer_classes = _keras_optimizer_classes(module, tf_name)
    for target, call in _constructions(module):
        namespace = (tf_name(call.func) or "").rpartition(".")[0]
        if namespace == KERAS_LAYERS:
            plan.layers[target] = call
        elif namespace == KERAS_OPTIMIZERS or code_of(call.func) in optimizer_classes:
            plan.optimizers[target] = call
    bindings = binding_ids(module)
    plan.float32_layers = _layers_read_outside_layers(module, plan.layers, bindings)
    for function in (node for node in walk(module) if isinstance(node, cst.FunctionDef)):
        problem = _plan_scalings(function, plan, tf_name, bindings)
        if problem:
            plan.problem = problem
            return plan
    return plan


def _keras_optimizer_classes(module: cst.Module, tf_name: Callable[[cst.CSTNode], str | None]) -> set[str]:
    """Module-level classes derived from `tf.keras.optimizers.Optimizer`, directly or through one
    another (the TF1-emulating optimizers TFM201 writes into a file)."""
    found: set[str] = set()
    for statement in module.body:
        if isinstance(statement, cst.ClassDef) and any(
                tf_name(base.value) == KERAS_OPTIMIZERS + ".Optimizer" or code_of(base.value) in found
                for base in statement.bases):
            found.add(statement.name.value)
    return found


def _constructions(module: cst.Module):
    """(target code, constructor call) of every `x = C(...)` / `self.x = C(...)`."""
    for node in walk(module):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.Call):
            target = node.targets[0].target
            if isinstance(target, (cst.Name, cst.Attribute)):
                yield code_of(target), node.value


def _layers_read_outside_layers(module: cst.Module, layers: dict[str, cst.Call], bindings: set[int]) -> set[str]:
    """Layers with a call whose result may reach code other than another layer's input."""
    layer_calls = [node for node in walk(module) if isinstance(node, cst.Call) and code_of(node.func) in layers]
    layer_inputs = {id(call.args[0].value) for call in layer_calls if call.args and call.args[0].keyword is None}
    outputs = _ReachingOutputs(layers, layer_inputs, bindings)
    outputs.visit_block(list(module.body), [])
    return outputs.outside | {code_of(call.func) for call in layer_calls
                              if id(call) not in layer_inputs and id(call) not in outputs.bound}


class _ReachingOutputs:
    """Follows each `name = layer(...)` forward through the statements its value can reach (until an
    unconditional rebinding of the name) and marks the layer when any of them reads the name other
    than as a layer's input. Loops are taken whole: a value can come round to their earlier lines."""

    def __init__(self, layers, layer_inputs: set[int], bindings: set[int]) -> None:
        self.layers, self.layer_inputs, self.bindings = layers, layer_inputs, bindings
        self.outside: set[str] = set()
        self.bound: set[int] = set()  # layer calls bound to a name (followed here)

    def visit_block(self, statements: list, enclosing: list) -> None:
        for index, statement in enumerate(statements):
            levels = [(statements, index), *enclosing]
            output = _layer_output_binding(statement, self.layers)
            if output is not None:
                name, call = output
                self.bound.add(id(call))
                if self._escapes(name, levels):
                    self.outside.add(code_of(call.func))
            for block in _inner_blocks(statement):
                inner = [] if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) else levels
                self.visit_block(block, inner)

    def _escapes(self, name: str, levels: list) -> bool:
        for depth, (statements, index) in enumerate(levels):
            if depth and isinstance(statements[index], (cst.For, cst.While)) and self._reads(statements[index], name):
                return True
            for statement in statements[index + 1:]:
                if self._reads(statement, name):
                    return True
                if _rebinds(statement, name):
                    return False
        return False

    def _reads(self, node: cst.CSTNode, name: str) -> bool:
        return any(_is_read(n, name, self.bindings) and id(n) not in self.layer_inputs for n in walk(node))


def _layer_output_binding(statement, layers) -> tuple[str, cst.Call] | None:
    """(name, layer call) of a statement `name = layer(...)`."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        assign = statement.body[0]
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                and isinstance(assign.value, cst.Call) and code_of(assign.value.func) in layers:
            return assign.targets[0].target.value, assign.value
    return None


def _rebinds(statement, name: str) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                              for t in small.targets) for small in statement.body)


def _inner_blocks(statement) -> list[list]:
    """The statement lists directly inside a compound statement."""
    blocks = []
    for child in children(statement):
        if isinstance(child, cst.IndentedBlock):
            blocks.append(list(child.body))
        elif isinstance(child, (cst.Else, cst.If, cst.ExceptHandler, cst.Finally)):
            blocks.extend(_inner_blocks(child) if not isinstance(child, cst.If) else [[child]])
    return blocks


def _is_read(node: cst.CSTNode, name: str, bindings: set[int]) -> bool:
    return isinstance(node, cst.Name) and node.value == name and id(node) not in bindings


def binding_ids(module: cst.Module) -> set[int]:
    """ids of the Name nodes that are not reads: assignment targets, parameters, attribute and
    keyword names, definitions."""
    bindings = set()
    for node in walk(module):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                bindings.update(id(n) for n in walk(target.target) if isinstance(n, cst.Name))
        elif isinstance(node, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            bindings.add(id(node.name))
        elif isinstance(node, cst.Attribute):
            bindings.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            bindings.add(id(node.keyword))
    return bindings


def _plan_scalings(function: cst.FunctionDef, plan: MixedPrecisionPlan, tf_name,
                   bindings: set[int]) -> tuple[cst.CSTNode, str] | None:
    """Each `tape.gradient(loss, variables)` of the function, its loss scaled inside the tape, and
    its gradients applied unchanged by a Keras optimizer (which unscales them before the update)."""
    tapes = {code_of(item.asname.name): node for node in walk(function) if isinstance(node, cst.With)
             for item in node.items if item.asname is not None and isinstance(item.item, cst.Call)
             and tf_name(item.item.func) == "tf.GradientTape"}
    planned = {id(scaling.gradient_call) for scaling in plan.scalings}  # a nested function's, seen from outside
    for node in walk(function):
        if isinstance(node, cst.Assign) and id(node.value) in planned:
            continue
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)
                and isinstance(node.value.func, cst.Attribute) and node.value.func.attr.value == "gradient"
                and code_of(node.value.func.value) in tapes):
            continue
        call, tape_block = node.value, tapes[code_of(node.value.func.value)]
        loss = call.args[0].value if call.args else None
        if not isinstance(loss, cst.Name) or not _assigned_in(tape_block, loss.value):
            return node, "the loss given to tape.gradient is not a name computed inside the tape"
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return node, "the gradients are not bound to one name"
        optimizer = _applying_optimizer(function, node.targets[0].target.value, plan, bindings)
        if optimizer not in plan.optimizers:
            return node, optimizer
        plan.scalings.append(TapeScaling(tape_block, loss.value, call, optimizer))
    return None


def _assigned_in(block: cst.With, name: str) -> bool:
    return any(isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                    for t in node.targets) for node in walk(block))


def _applying_optimizer(function: cst.FunctionDef, gradients: str, plan: MixedPrecisionPlan,
                        bindings: set[int]) -> str:
    """The optimizer that applies the gradients, or why none can: scaled gradients may only go
    straight to `optimizer.apply_gradients(zip(gradients, ...))`, clipping or any other use would
    see them scaled."""
    reads = [node for node in walk(function) if _is_read(node, gradients, bindings)]
    applies = [node for node in walk(function) if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
               and node.func.attr.value == "apply_gradients" and node.args
               and isinstance(zipped := node.args[0].value, cst.Call) and code_of(zipped.func) == "zip"
               and zipped.args and code_of(zipped.args[0].value) == gradients]
    if len(reads) != 1 or len(applies) != 1:
        return f"the gradients `{gradients}` are used other than by one apply_gradients (e.g. clipped): " \
               "they would be seen scaled"
    optimizer = code_of(applies[0].func.value)
    if optimizer not in plan.optimizers:
        return f"`{optimizer}` is not a Keras optimizer made in this file: it cannot be wrapped for loss scaling"
    return optimizer
