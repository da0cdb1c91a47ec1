"""What a module holds that a fused loop must know about (TFM301): its step functions (tf.functions
with an input_signature and a clear output structure), the names bound to TensorFlow state or
functions (which a fused loop body must not read), and which calls in a loop body are plain Python.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache

import libcst as cst

from transforms.datasets.emulate_tutorial_mnist import LOADERS
from transforms.speed.fusion.batch_sources import batch_sources
from transforms.speed.fusion.names import LOOP_SUFFIX
from transforms.common.graph_symbols import _in, table
from transforms.speed.fusion.scan import (Outputs, callee_name, calls_in, merged_steps, names_bound, names_read,
                                         parameter_names, step_outputs)
from transforms.common.syntax import code_identifiers, is_docstring, module_code, only_small_statement, scan

SAFE_BUILTINS = frozenset({
    "print", "float", "int", "str", "bool", "len", "round", "abs", "min", "max", "repr", "format",
    "list", "tuple", "dict", "set", "sorted", "sum", "enumerate", "zip", "range", "slice", "isinstance",
})
SAFE_METHODS = frozenset({"numpy", "item", "tolist", "append", "extend", "format", "ravel", "mean",
                          "sum", "max", "min", "argmax", "astype", "reshape", "flatten", "join", "get"})
PURE_MODULES = ("numpy.", "json.", "math.")
#: Functions of `numpy.random` that are not distributions: they set, read or make random state, or
#: shuffle in place.
NUMPY_RANDOM_STATE = frozenset({"seed", "get_state", "set_state", "shuffle", "RandomState", "default_rng",
                                "Generator", "SeedSequence", "BitGenerator", "MT19937", "PCG64", "Philox", "SFC64"})
# Keras layers whose call only reads their weights: no statistics, no random state (with no dropout
# and not `stateful`), so an evaluation calling them reads the model as a plain function would.
READ_ONLY_LAYERS = frozenset(f"tf.keras.layers.{name}" for name in (
    "Dense", "GRU", "LSTM", "SimpleRNN", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Embedding",
    "Flatten", "Reshape", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "MaxPool2D", "AveragePooling1D",
    "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
    "GlobalMaxPooling2D", "Activation", "LayerNormalization", "Bidirectional"))
STATE_KEYWORDS = ("dropout", "recurrent_dropout", "stateful")


@dataclass(frozen=True)
class StepFunction:
    """A step function of the module: a tf.function whose calls a loop may fuse."""

    name: str
    params: tuple[str, ...]
    specs: tuple[cst.BaseExpression, ...]  # its input_signature, one TensorSpec per parameter
    outputs: Outputs


@dataclass
class ModuleFacts:
    steps: dict[str, StepFunction] = field(default_factory=dict)
    state: set[str] = field(default_factory=set)
    plain: dict[str, cst.FunctionDef] = field(default_factory=dict)
    opaque: frozenset[str] = frozenset()  # may hold TensorFlow objects: see `collect_facts`
    read_only_layers: frozenset[str] = frozenset()  # names bound once to a READ_ONLY_LAYERS layer
    numpy_objects: frozenset[str] = frozenset()  # names bound once to what a NumPy call made (a RandomState)
    datasets: frozenset[str] = frozenset()  # names bound once to TF1's tutorial MNIST loader's result
    batch_sources: frozenset[str] = frozenset()  # names bound once to objects of the program's data-set classes
    qualified: Callable[[cst.CSTNode], set[str]] = lambda node: set()
    tf_names: Callable[[cst.CSTNode], set[str]] = lambda node: set()

    def logs(self, call: cst.Call) -> bool:
        """Whether `call` only logs (`tf.logging.info`, absl's `logging.info`: the `loop_logging` table):
        plain Python on values already fetched, replayed with the loop's other per-step Python work."""
        names = self.tf_names(call.func) or self.qualified(call.func)  # canonical tf. names first
        return bool(names) and all(_in(name, loop_logging()) for name in names)

    def call_problem(self, call: cst.Call, depth: int = 0) -> str | None:
        """Why `call` in a fused loop body might touch TensorFlow state, or None for plain Python."""
        func = call.func
        if self.logs(call):
            return None
        if isinstance(func, cst.Name) and func.value in SAFE_BUILTINS and func.value not in self.plain:
            return None
        if isinstance(func, cst.Attribute) and (func.attr.value in SAFE_METHODS or any(
                name.startswith(PURE_MODULES) for name in self.qualified(func))):
            return None
        owner = func.value if isinstance(func, cst.Attribute) else None
        if isinstance(owner, cst.Name) and owner.value in self.numpy_objects:
            return None  # a method of a NumPy object (`rng.uniform`): NumPy values only
        if isinstance(func, cst.Name) and func.value in self.plain and depth < 3:
            return self._plain_problem(self.plain[func.value], depth)
        return f"loop body calls `{cst.Module([]).code_for_node(func)}`, which may read TensorFlow state"

    def random_call(self, statements, depth: int = 0) -> cst.Call | None:
        """The first call in `statements` that may draw random numbers: a `random` module's function or
        method by qualified name, or a plain function of the module making such a call."""
        for call in (c for statement in statements for c in calls_in(statement)):
            if any("random" in name for name in self.qualified(call.func)):
                return call
            plain = self.plain.get(call.func.value) if isinstance(call.func, cst.Name) else None
            if plain is not None and (depth >= 3 or self.random_call([plain.body], depth + 1) is not None):
                return call
        return None

    def fixed_shape_draw(self, call: cst.Call, depth: int = 0) -> bool:
        """Whether `call` draws NumPy random numbers into an array whose shape and dtype its arguments
        alone fix: a distribution of `numpy.random` (its values depend on the random state, its shape
        never does), or a plain function of the module returning such a call made on its parameters."""
        names = self.qualified(call.func)
        if names and all(name.startswith("numpy.random.") and name.count(".") == 2
                         and name.rsplit(".", 1)[1] not in NUMPY_RANDOM_STATE for name in names):
            return True
        plain = self.plain.get(call.func.value) if isinstance(call.func, cst.Name) else None
        returned = _returned_call(plain) if plain is not None and depth == 0 else None
        return returned is not None and self.fixed_shape_draw(returned, depth + 1) and \
            {name for arg in returned.args for name in names_read(arg.value)} <= parameter_names(plain)

    def _plain_problem(self, function: cst.FunctionDef, depth: int) -> str | None:
        touched = sorted(set(names_read(function.body)) & self.state)
        if touched:
            return f"loop body calls `{function.name.value}`, which reads `{touched[0]}`"
        calls: list[cst.Call] = []

        class Collector(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                calls.append(node)

            def visit_Global(self, node) -> None:
                calls.append(None)

        scan(function.body, Collector())
        if None in calls:
            return f"loop body calls `{function.name.value}`, which rebinds globals"
        return next((p for p in (self.call_problem(c, depth + 1) for c in calls) if p), None)


def _returned_call(function: cst.FunctionDef) -> cst.Call | None:
    """The call a function's body is made of, `return <call>` (after a docstring), else None."""
    body = [s for s in function.body.body if not is_docstring(s)]
    small = only_small_statement(body[0]) if len(body) == 1 else None
    return small.value if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) else None


FACTS_KEY = "tf_migrate.fusion_facts"

#: TFTransform.IDENTIFIERS of the transforms that act only on `tf.function` steps: every spelling
#: by which a decorator resolves to tf.function (`tf.function`, `from tensorflow import function
#: [as f]`, a module alias `f = tf.function`) names the identifier `function` somewhere.
TF_FUNCTION_IDENTIFIERS = frozenset({"function"})


def shared_facts(transform, module: cst.Module) -> ModuleFacts:
    """`collect_facts` for the module `transform` visits, scanned once for all the transforms that
    visit that same module in turn (the runner hands them one module until one of them changes the
    code; the facts are read, never changed). Metadata is asked of `transform`: another transform's
    is gone once its visit ends."""
    scratch = transform.context.scratch
    cached = scratch.get(FACTS_KEY)
    if cached is None or cached[0] is not module:
        cached = scratch[FACTS_KEY] = (module, collect_facts(module, transform.tf_names, transform.qualified_names))
    return replace(cached[1], tf_names=transform.tf_names, qualified=transform.qualified_names)


def collect_facts(module: cst.Module, tf_names, qualified) -> ModuleFacts:
    """Scan `module` once; `tf_names(node)` gives a node's TensorFlow names (metadata-backed)."""
    facts = ModuleFacts(qualified=qualified, tf_names=tf_names)
    assignments: list[cst.Assign] = []
    # A name ending in flags.FLAGS is spelled with FLAGS somewhere in the code; without it, no value
    # needs its qualified names (whose first lookup off the imports resolves every scope).
    flags_named = "FLAGS" in (code_identifiers(module_code(module)) or {"FLAGS"})

    class Scanner(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            decorators = [d.decorator for d in node.decorators]
            if any(_is_tf_function(d, tf_names) for d in decorators):
                facts.state.add(node.name.value)
                step = _step_function(node, decorators, tf_names)
                if step is not None and merged_steps(node) is None:  # TFM311's functions are not steps again
                    facts.steps[node.name.value] = step
            elif not decorators:
                facts.plain[node.name.value] = node

        def visit_Assign(self, node: cst.Assign) -> None:
            assignments.append(node)
            if _mentions_tf(node.value, tf_names) and not (
                    flags_named and _is_flag_values(node.value, tf_names, qualified)):
                facts.state |= names_bound(node.targets)  # not a comprehension's own names in the value

        def visit_Name(self, node: cst.Name) -> None:
            if tf_names(node):
                facts.state.add(node.value)

    scan(module, Scanner())
    for name in facts.steps:
        facts.plain.pop(name, None)
    # Multi-step functions this transform wrote are not steps to fuse again (that would not be stable).
    for name in [n for n in facts.steps if n.endswith(LOOP_SUFFIX) and n[: -len(LOOP_SUFFIX)] in facts.steps]:
        del facts.steps[name]
    # A name bound to what a call returns may hold a model or a variable (`model = build_model()`),
    # unless the call is plain Python by the same rules as a loop body's calls.
    once = _bound_once(assignments)
    parsers = {name for name, value in once.items()
               if isinstance(value, cst.Call) and "argparse.ArgumentParser" in qualified(value.func)}
    opaque = {"self", "cls"}
    for node in assignments:
        calls = calls_in(node.value)
        if not _parsed_arguments(node.value, parsers) and any(
                facts.call_problem(call) for call in calls if callee_name(call) not in facts.steps):
            opaque |= names_bound([node])
    facts.opaque = frozenset(opaque - facts.state)
    facts.read_only_layers = frozenset(name for name, value in once.items() if _read_only_layer(value, tf_names))
    facts.numpy_objects = frozenset(name for name, value in once.items() if isinstance(value, cst.Call) and any(
        q.startswith("numpy.") for q in qualified(value.func))) - facts.state  # `np.random.RandomState(0)`
    facts.datasets = frozenset(name for name, value in once.items()
                               if isinstance(value, cst.Call) and tf_names(value.func) & LOADERS)
    facts.batch_sources = batch_sources(module, assignments, qualified) - facts.state
    return facts


def _bound_once(assignments: list[cst.Assign]) -> dict[str, cst.BaseExpression]:
    """The names the module binds exactly once, by a plain `name = value`, with their values."""
    found: dict[str, cst.BaseExpression | None] = {}
    for node in assignments:
        single = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
        for name in names_bound([node]):
            found[name] = node.value if single and name not in found else None
    return {name: value for name, value in found.items() if value is not None}


def _read_only_layer(node: cst.BaseExpression, tf_names) -> bool:
    if not (isinstance(node, cst.Call) and tf_names(node.func) and tf_names(node.func) <= READ_ONLY_LAYERS):
        return False
    for arg in node.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if arg.star or keyword in STATE_KEYWORDS and not (
                isinstance(arg.value, (cst.Integer, cst.Float)) and float(arg.value.value) == 0
                or isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return False
    if "tf.keras.layers.Bidirectional" in tf_names(node.func):
        return bool(node.args) and _read_only_layer(node.args[0].value, tf_names)
    return True


@lru_cache(maxsize=1)
def loop_logging() -> tuple[str, ...]:
    return tuple(table("graph_api")["loop_logging"])




def _is_tf_function(decorator: cst.BaseExpression, tf_names) -> bool:
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    return "tf.function" in tf_names(target)


def _step_function(node: cst.FunctionDef, decorators, tf_names) -> StepFunction | None:
    """A tf.function with a literal input_signature list (or no parameters at all, as a step reading
    a dataset iterator has) and a clear output structure."""
    for decorator in decorators:
        if not _is_tf_function(decorator, tf_names):
            continue
        outputs = step_outputs(node)
        if outputs is None:
            return None
        signature = _input_signature(decorator)
        if signature is None:
            return StepFunction(node.name.value, (), (), outputs) if _without_parameters(node) else None
        if not isinstance(signature, cst.List):
            return None
        params = tuple(p.name.value for p in node.params.params)
        return StepFunction(node.name.value, params, tuple(e.value for e in signature.elements), outputs)
    return None


def _input_signature(decorator: cst.BaseExpression) -> cst.BaseExpression | None:
    if not isinstance(decorator, cst.Call):
        return None
    return next((a.value for a in decorator.args if a.keyword and a.keyword.value == "input_signature"), None)


def _without_parameters(function: cst.FunctionDef) -> bool:
    parameters = function.params
    return not (parameters.params or parameters.posonly_params or parameters.kwonly_params
                or isinstance(parameters.star_arg, cst.Param) or parameters.star_kwarg)


def _parsed_arguments(node: cst.BaseExpression, parsers: set[str]) -> bool:
    """`parser.parse_args()` / `parser.parse_known_args()` on an argparse parser: command-line values."""
    func = node.func if isinstance(node, cst.Call) else None
    return isinstance(func, cst.Attribute) and func.attr.value in ("parse_args", "parse_known_args") \
        and isinstance(func.value, cst.Name) and func.value.value in parsers


def _is_flag_values(node: cst.BaseExpression, tf_names, qualified) -> bool:
    """`FLAGS = tf.app.flags.FLAGS` (or absl's): parsed command-line values, not graph state."""
    names = tf_names(node) | qualified(node)
    return bool(names) and all(name.endswith("flags.FLAGS") for name in names)


def _mentions_tf(node: cst.CSTNode, tf_names) -> bool:
    found: list[bool] = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if not found and tf_names(name):
                found.append(True)

        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            if not found and tf_names(attribute):
                found.append(True)

    scan(node, Finder())
    return bool(found)
