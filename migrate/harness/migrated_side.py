"""Migrated side of `tf-migrate verify`: runs the TF2 program from the legacy initial weights and
records what its run-site functions return.

    python migrated_side.py CONFIG.json

Plain TensorFlow 2 with its default Keras 3. Two wrappers are installed before the script runs:
  * `tf.function` returns, for functions defined in the script, a thin proxy that records each
    top-level (eager) call under the function's name (`fn:train_step`): timing, the first N calls'
    arguments and returned values, the last call's values. Tensors are kept as they are and converted
    only at the end, so recording adds no device synchronisation to the timed loop.
  * a variable creator scope gives each new variable the legacy initial value chosen by
    `alignment.Matcher` (name, then name suffix, then creation order + shape). Variables of a TF1-style
    graph that the migration kept get theirs at the first `Session.run`, as on the legacy side.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]


def _load_sibling(name):
    """Import a file of this folder by path, without putting the folder on sys.path."""
    if "_tf_migrate_" + name in sys.modules:
        return sys.modules["_tf_migrate_" + name]
    spec = importlib.util.spec_from_file_location("_tf_migrate_" + name, os.path.join(_HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


common = _load_sibling("side_common")
recording = _load_sibling("recording")
alignment = _load_sibling("alignment")
rnn_weights = _load_sibling("rnn_weights")
fused = _load_sibling("fused")
legacy = _load_sibling("legacy_side")
random_streams = _load_sibling("random_streams")
summaries = _load_sibling("summaries")
np = recording.np


class WeightLoader:
    """Loads the legacy initial weights into the migrated program's variables as they are created."""

    def __init__(self, tf, manifest, weights_path):
        self.tf = tf
        self.matcher = alignment.Matcher.from_manifest(manifest) if manifest else None
        self.weights = dict(np.load(weights_path)) if weights_path else {}
        self.errors = []
        self.loaded = []  # (legacy key, variable) of the trainable variables loaded one for one

    def creator(self, next_creator, **kwargs):
        variable = next_creator(**kwargs)
        if self.matcher is not None:
            try:
                self.align(variable)
            except Exception as error:  # alignment must never break the program under test
                self.errors.append(f"{getattr(variable, 'name', '?')}: {error}")
        return variable

    def align(self, variable):
        eager = self.tf.executing_eagerly()
        graph = self.tf.compat.v1.get_default_graph()
        if not eager and getattr(graph, "outer_graph", None) is None:
            return  # a TF1-style graph: its variables are loaded at the first Session.run
        decision = self.decide(variable)
        if decision is None or decision.legacy is None:
            return
        value = self.value_for(decision, variable)
        if decision.convert is None and decision.legacy.trainable:
            self.loaded.append((decision.legacy.key, variable))
        if eager:
            variable.assign(value)
        else:  # created while a tf.function is traced: assign outside the function graph
            with self.tf.init_scope():
                variable.assign(value)
            _initialize_wrapped_with(variable, value)

    def decide(self, variable):
        shape = variable.shape
        if shape.rank is None or not shape.is_fully_defined():
            self.matcher.unaligned.append({"migrated": variable.name, "shape": None,
                                           "trainable": bool(variable.trainable),
                                           "reason": "shape not fully defined: keeps its own initial value"})
            return None
        name, shape, trainable = variable.name, tuple(shape.as_list()), bool(variable.trainable)
        converted = rnn_weights.rnn_source(alignment.strip_output_index(name), [v.name for v in self.matcher.legacy])
        if converted is not None:
            return self.matcher.match_converted(alignment.strip_output_index(name), shape, trainable, *converted,
                                                "name (TF1 RNN cell layout)")
        return self.matcher.match(name, shape, trainable)

    def value_for(self, decision, variable):
        if decision.convert is not None:
            value = decision.convert([self.weights[source.key] for source in decision.sources])
            if tuple(value.shape) != tuple(variable.shape.as_list()):
                raise ValueError(f"converted legacy weights have shape {list(value.shape)}")
        else:
            value = self.weights[decision.legacy.key]
        return value.astype(variable.dtype.as_numpy_dtype)

    def align_session(self, session, variables):
        """Load matched values into a TF1-style graph's variables (already initialised)."""
        for variable in variables:
            decision = self.decide(variable) if self.matcher is not None else None
            if decision is not None and decision.legacy is not None:
                variable.load(self.value_for(decision, variable), session)

    def save_final_weights(self, out_dir):
        """The loaded trainable variables' values now, by legacy key, to final_weights.npz."""
        arrays = {}
        for key, variable in self.loaded:
            try:
                arrays[key] = variable.numpy()
            except Exception:  # a variable that can no longer be read is left out
                continue
        if arrays:
            np.savez(os.path.join(out_dir, "final_weights.npz"), **arrays)

    def summary(self):
        found = self.matcher.summary() if self.matcher is not None else {}
        found["errors"] = self.errors
        return found


# TFM203's helper building a wrapped TF1 graph (transforms/graph/bridge/runtime.py): right after it
# creates a variable, it makes the op that assigns the variable's initial value when the program runs
# its initializer.
WRAPPED_GRAPH_BUILDER = "wrap_tf1_graph."


def _initialize_wrapped_with(variable, value):
    """Make the initializer op of a variable of a wrapped TF1 graph assign the legacy initial value, as
    the legacy side's first initializer run is followed by the legacy weights (a later initializer
    run assigns them again, where TF1 would draw a random initializer anew)."""
    assign = variable.assign

    def assign_aligned(new_value, *args, **kwargs):
        caller = getattr(sys._getframe(1).f_code, "co_qualname", "")
        if caller.startswith(WRAPPED_GRAPH_BUILDER):
            new_value = value
        return assign(new_value, *args, **kwargs)

    variable.assign = assign_aligned


class SessionProbe(legacy.LegacyProbe):
    """Session.run recording for migrated programs that still use sessions; loads weights instead of
    saving them."""

    def __init__(self, session_class, script, recorder, loader, program_dir=None):
        super().__init__(session_class, script, recorder, out_dir=None, program_dir=program_dir)
        self.loader = loader

    def take_weights(self, session, variables, values):
        self.loader.align_session(session, variables)
        self.variables = []


class RecordedFunction:
    """A `tf.function` that records its top-level calls; everything else is the wrapped function's."""

    def __init__(self, compiled, key, probe):
        self._compiled = compiled
        self._key = key
        self._probe = probe

    def __call__(self, *args, **kwargs):
        if not self._probe.tf.executing_eagerly():  # called while another function is traced
            return self._compiled(*args, **kwargs)
        return self._probe.call(self._key, self._compiled, args, kwargs)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return RecordedFunction(self._compiled.__get__(instance, owner), self._key, self._probe)

    def get_concrete_function(self, *args, **kwargs):
        """Its concrete function records its calls under the same key (TFM203's run-site functions are
        called that way)."""
        return RecordedFunction(self._compiled.get_concrete_function(*args, **kwargs), self._key, self._probe)

    def __getattr__(self, name):
        return getattr(self._compiled, name)


class FunctionProbe:
    """Replaces `tf.function` so that functions the script defines record their calls."""

    def __init__(self, tf, script, recorder, fused_steps=None, warmup_fraction=0.1):
        self.tf = tf
        self.script = script
        self.recorder = recorder
        self.original = tf.function
        self.fused_steps = fused_steps or {}  # multi-step function name -> step function name
        self.warmup_fraction = warmup_fraction  # timing.WARMUP_FRACTION, given by the parent

    def install(self):
        probe, original = self, self.original

        def function(func=None, *args, **kwargs):
            if func is None:
                return lambda inner: function(inner, *args, **kwargs)
            compiled = original(func, *args, **kwargs)
            code = getattr(func, "__code__", None)
            if code is None or code.co_filename != probe.script:
                return compiled
            step = probe.fused_steps.get(func.__name__)
            if isinstance(step, dict) and "epochs_of" in step:
                steps = probe.fused_steps.get(step["epochs_of"])
                if steps is None or isinstance(steps, dict):
                    return compiled  # not a multi-step function the harness records: its calls stay unrecorded
                keys = ["fn:" + s for s in steps] if isinstance(steps, list) else "fn:" + steps
                calls = [None if call == step["epochs_of"] else "fn:" + call for call in step["calls"]]
                return fused.FusedEpochs(compiled, keys, probe, calls)
            if isinstance(step, dict) and "merges" in step:
                return fused.MergedSteps(compiled, ["fn:" + s for s in step["merges"]], probe)
            if isinstance(step, dict) and "evaluation" in step:
                keys = ["fn:" + s for s in step["step_function"]]
                return fused.FusedFunction(compiled, keys, probe, evaluation="fn:" + step["evaluation"],
                                           rows=step.get("rows", ()))
            if isinstance(step, dict):  # a loop fed batches drawn ahead: their arguments hold a row per step
                steps = step["step_function"]
                keys = ["fn:" + s for s in steps] if isinstance(steps, list) else "fn:" + steps
                return fused.FusedFunction(compiled, keys, probe, rows=step["rows"])
            if step is not None:
                keys = ["fn:" + s for s in step] if isinstance(step, list) else "fn:" + step
                return fused.FusedFunction(compiled, keys, probe)
            return RecordedFunction(compiled, "fn:" + func.__name__, probe)

        function.__doc__ = original.__doc__
        self.tf.function = function
        v2 = getattr(getattr(self.tf, "compat", None), "v2", None)
        if v2 is not None and getattr(v2, "function", None) is original:
            v2.function = function  # `import tensorflow.compat.v2 as tf` reaches it there

    def call(self, key, compiled, args, kwargs):
        began = time.perf_counter()
        inputs = None
        if self.recorder.site(key).calls < self.recorder.limit:
            inputs = [copy_input(leaf) for _, leaf in recording.flatten((list(args), kwargs))]
        pre = time.perf_counter() - began
        start = time.perf_counter()
        outputs = compiled(*args, **kwargs)
        end = time.perf_counter()
        self.recorder.record(key, start, end, self.summaries_read(outputs), inputs, pre=pre)
        return outputs

    def summaries_read(self, outputs):
        """Serialized Summary protos a function returns (v1 summary ops kept in a wrapped TF1 graph,
        TFM203) read as the legacy side reads the ones its session fetched: {tag: value}."""
        strings = self.tf.string
        if not any(getattr(leaf, "dtype", None) == strings for _, leaf in recording.flatten(outputs)):
            return outputs
        readable, _ = summaries.readable_summaries(_string_values(outputs, strings), self.tf.compat.v1.Summary)
        return readable


def _string_values(structure, strings):
    """`structure` with its string tensors as bytes."""
    if isinstance(structure, dict):
        return {key: _string_values(value, strings) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        return [_string_values(value, strings) for value in structure]
    if getattr(structure, "dtype", None) == strings and getattr(structure, "shape", None) == ():
        return structure.numpy()
    return structure


def copy_input(leaf):
    """Arguments are compared with the legacy feeds later; copy NumPy buffers the script may reuse."""
    return np.array(leaf) if isinstance(leaf, np.ndarray) else leaf


def make_converters(tf):
    """(snapshot, convert) for recorded leaves: variables and arrays (which the program may write
    into) are copied at once, tensors converted at the end."""

    def snapshot(leaf):
        return leaf.numpy() if isinstance(leaf, tf.Variable) else recording.copy_of_array(leaf)

    def convert(leaf):
        # bytes: a string scalar, which summaries_read gave as bytes to read it as a summary proto
        if isinstance(leaf, (np.ndarray, np.generic, int, float, bool, complex, bytes, str)):
            return leaf
        if hasattr(leaf, "numpy") and isinstance(leaf, (tf.Tensor, tf.Variable)):
            return leaf.numpy()
        raise TypeError(f"cannot compare a {type(leaf).__name__}")

    return snapshot, convert


def run_with_alignment(tf, loader, config, recorder, outcomes=None):
    """Run the script inside the variable creator scope that aligns the weights."""
    scope = tf.variable_creator_scope(loader.creator)
    scope.__enter__()
    try:
        return common.run_script(config["script"], config.get("file_as"), recorder, config.get("args", ()), outcomes)
    finally:
        try:
            scope.__exit__(None, None, None)
        except Exception:  # the script may have left the graph stack elsewhere; nothing to undo then
            pass


def seed_tensorflow(tf, seed: int) -> None:
    """Set TensorFlow's global seed, as the legacy side seeds nothing in TensorFlow but its unseeded
    random ops still run: a TF2 program that sets no seed would otherwise fail under op determinism
    (`TF_DETERMINISTIC_OPS=1`, `enable_op_determinism()`: "Random ops require a seed"). The values
    do not matter: initial weights come from the legacy side, and the ops the program creates take
    their seeds from their creation site on both sides (random_streams.py). A program that sets its
    own seed replaces this one."""
    tf.random.set_seed(seed)


def keras_policy() -> str | None:
    """The global Keras dtype policy the program left (None when it never loaded Keras)."""
    keras = sys.modules.get("keras")
    try:
        return keras.mixed_precision.global_policy().name if keras is not None else None
    except AttributeError:
        return None


def main(argv):
    config = common.load_config(argv[1])
    out_dir = config["out_dir"]
    result = {"side": "migrated", "status": "harness-error", "error": None, "runtime": "tensorflow 2"}
    try:
        import tensorflow as tf
        if config.get("device") == "gpu" and not common.gpu_info(tf):
            result["status"], result["error"] = "no-device", "--device gpu, but TensorFlow sees no GPU here"
            common.write_result(out_dir, result)
            return 0
        snapshot, convert = make_converters(tf)
        recorder = recording.Recorder(config["steps"], convert, snapshot)
        loader = WeightLoader(tf, config.get("variables"), config.get("weights"))
        FunctionProbe(tf, config["script"], recorder, config.get("fused"),
                      config.get("warmup_fraction", 0.1)).install()
        sessions = SessionProbe(tf.compat.v1.Session, config["script"], recorder, loader,
                                config.get("file_as") or config["script"])
        sessions.summary_class = tf.compat.v1.Summary  # fetched summaries read as on the legacy side
        sessions.install()
        if config.get("aligned_randomness"):
            program_dir = os.path.dirname(config.get("file_as") or config["script"])
            locator = random_streams.SiteLocator(config["script"], program_dir, legacy._library_roots(),
                                                 config["legacy_script"])
            random_streams.RandomStreams(locator).install(tf.compat.v1)
            sessions.probing = False
        common.seed_everything(config["seed"])
        seed_tensorflow(tf, config["seed"])
        outcomes = common.TestOutcomes().install()
        status, error, seconds, _ = run_with_alignment(tf, loader, config, recorder, outcomes)
        loader.save_final_weights(out_dir)
        result.update({
            "tests": outcomes.to_dict(),
            "status": status, "error": error, "wall_s": seconds, "sites": recorder.write(out_dir),
            "alignment": loader.summary(), "instrumentation_s": recorder.overhead,
            "peak_host_mb": common.peak_host_mb(), "gpu": common.gpu_info(tf),
            "versions": common.versions(tf, "keras"), "precision_policy": keras_policy(),
        })
    except BaseException:
        result["error"] = traceback.format_exc()
    common.write_result(out_dir, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
