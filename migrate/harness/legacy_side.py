"""Legacy side of `tf-migrate verify`: runs an unmodified TF1 program and records what it computes.

    python legacy_side.py CONFIG.json

`Session.run` is wrapped so that every call made directly by the script is recorded under the
script line it came from (`line:N`): timing, the first N calls' fetched values and fed inputs, the
last call's values. Right after the variables are initialised, before the first step that could
change them, all global variables are saved to `weights.npz` so that the migrated side starts from
the same weights.

This file may run on a user's own TF 1.15 / Python 3.7 interpreter (`--legacy-python`): it imports
only the standard library, NumPy, TensorFlow and its sibling files (`side_common.py`, `recording.py`,
`graph_facts.py`, `random_streams.py`), never the rest of tf-migrate or click, and keeps to Python 3.7 syntax.
"""
from __future__ import absolute_import, division, print_function

import importlib.util
import os
import sys
import time
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
# Python put this folder first on sys.path; its modules (compare.py, timing.py, ...) must not
# shadow what the user's script imports.
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
graph_facts = _load_sibling("graph_facts")
summaries = _load_sibling("summaries")
random_streams = _load_sibling("random_streams")
np = recording.np

MAX_CAPTURE_TRIES = 5
# `loss.eval()`, `train_op.run()`, Keras `fit()`: the script reaches Session.run through a few
# frames of these libraries; such calls are attributed to the script line that made them.
LIBRARY_MODULES = ("tensorflow", "tf_keras", "keras", "tf_slim", "tensorflow_estimator", "migrate")
MAX_LIBRARY_FRAMES = 16


def install_runtime(root):
    """Prepare TensorFlow for TF1 code; returns the name of the runtime used.

    With tf-migrate's own interpreter, `migrate.legacy_runtime.install()` (compat.v1, tf-keras,
    tf.contrib); on any other interpreter (a real TF 1.x), plain `disable_v2_behavior()`.
    """
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    if root:
        sys.path.insert(0, root)
        try:
            from migrate.legacy_runtime import install
            install()
            return "tf-migrate legacy_runtime"
        finally:
            sys.path.remove(root)
    import tensorflow.compat.v1 as tf1
    tf1.disable_v2_behavior()
    return "tf.compat.v1 (disable_v2_behavior)"


def _library_roots():
    """Folders of the loaded TensorFlow-family packages, each ending in a separator."""
    roots = []
    for name in LIBRARY_MODULES:
        module = sys.modules.get(name)
        location = getattr(module, "__file__", None)
        if location:
            roots.append(os.path.dirname(os.path.abspath(location)) + os.sep)
    return tuple(roots) or (os.sep + "nonexistent" + os.sep,)


def fetch_names(fetches):
    """Readable names of the fetched leaves (`loss:0`, `train_op`), in flattened order."""
    return [str(getattr(leaf, "name", leaf)) for _, leaf in recording.flatten(fetches)]


class LegacyProbe(object):
    """Wraps `Session.run` to record the program's own calls (the script's, and those of the modules
    beside it) and capture the initial weights."""

    def __init__(self, session_class, script, recorder, out_dir, program_dir=None):
        self.script = script
        self.program_dir = os.path.dirname(os.path.abspath(program_dir or script)) + os.sep
        self.recorder = recorder
        self.out_dir = out_dir
        self.owner = next(cls for cls in session_class.__mro__ if "run" in vars(cls))
        self.original = self.owner.run
        self.summary_class = None  # tf.Summary: fetched summaries are recorded as {tag: value}
        self.variables = None
        self.capture_note = "no variables were initialised before a later Session.run call: nothing to align"
        self.capture_tries = 0
        self.capture_sequence = None  # how many script calls had run when the weights were taken
        # The trained weights, read once more when the session that held the captured ones closes
        # (or when the program ends): final_weights.py compares them with the migrated program's.
        self.captured = None  # (session, variables) the initial weights were read from
        self.final_sequence = None
        self.sessions_run = set()  # ids of the sessions the program's recorded calls ran in
        # Re-running random sites to see whether their randomness matters draws extra numbers; with
        # random streams aligned by creation site (random_streams.py) both sides must draw alike.
        self.probing = True

    def install(self):
        probe = self

        def run(session, *args, **kwargs):
            key = probe.site_key(sys._getframe(1))
            if key is None:
                return probe.original(session, *args, **kwargs)
            return probe.recorded_run(session, key, args, kwargs)

        self.owner.run = run
        closer = next(cls for cls in self.owner.__mro__ if "close" in vars(cls))
        original_close = closer.close

        def close(session):
            probe.take_final_weights(session)
            return original_close(session)

        closer.close = close

    def site_key(self, frame):
        """The program line behind a Session.run call, through TensorFlow's own frames, as a site key:
        `line:N` in the script, `line:N@path` in a module of the program (its path relative to the
        script's folder); None for a call from elsewhere."""
        libraries = None
        for _ in range(MAX_LIBRARY_FRAMES):
            if frame is None:
                return None
            filename = frame.f_code.co_filename
            if filename == self.script:
                return "line:%d" % frame.f_lineno
            libraries = libraries or _library_roots()
            if not filename.startswith(libraries):
                return self._module_site_key(filename, frame.f_lineno)
            frame = frame.f_back
        return None

    def _module_site_key(self, filename, line):
        path = os.path.abspath(filename)
        if not path.startswith(self.program_dir) or not path.endswith(".py"):
            return None
        return "line:%d@%s" % (line, os.path.relpath(path, self.program_dir).replace(os.sep, "/"))

    def recorded_run(self, session, key, args, kwargs):
        began = time.perf_counter()
        fetches = args[0] if args else kwargs.get("fetches")
        feed_dict = args[1] if len(args) > 1 else kwargs.get("feed_dict")
        if self.variables is None and self.capture_tries < MAX_CAPTURE_TRIES:
            self.capture_weights(session)
        self.sessions_run.add(id(session))
        site = self.recorder.site(key)
        names = None
        if site.calls == 0:
            leaves = [leaf for _, leaf in recording.flatten(fetches)]
            site.facts, site.probe_tensors = graph_facts.analyse(session.graph, leaves)
            names = fetch_names(fetches)
        call = site.calls
        inputs = None
        if call < self.recorder.limit and feed_dict:
            inputs = [np.array(value) for value in feed_dict.values()]
        probing = self.probing and graph_facts.worth_probing(site.facts, call, self.recorder.limit)
        if probing and site.facts["mutates_state"]:
            self.probe_before(session, site, call, feed_dict)
        pre = time.perf_counter() - began
        start = time.perf_counter()
        outputs = self.original(session, *args, **kwargs)
        end = time.perf_counter()
        if probing and not site.facts["mutates_state"]:
            self.probe_after(session, site, call, outputs, args, kwargs)
        recorded, decoded = summaries.readable_summaries(outputs, self.summary_class)
        if names is not None:
            for fact in ("leaf_reads", "racing_reads"):
                if fact in site.facts:
                    site.facts[fact] = graph_facts.spread_over_recorded(
                        site.facts[fact], [path for path, _ in recording.flatten(fetches)],
                        [path for path, _ in recording.flatten(recorded)], recording.ROOT_PATH)
        if decoded and names is not None:  # as the migrated step returns them: {tag: value}
            names = [path for path, _ in recording.flatten(recorded)]
        self.recorder.record(key, start, end, recorded, inputs, names, pre, time.perf_counter() - end)
        return outputs

    def probe_before(self, session, site, call, feed_dict):
        """Compute the values a state-changing call writes, twice, without writing them."""
        if not site.probe_tensors:
            graph_facts.note_probe(site.facts, call, None, None)
            return
        first = self.original(session, site.probe_tensors, feed_dict)
        second = self.original(session, site.probe_tensors, feed_dict)
        graph_facts.note_probe(site.facts, call, first, second)

    def probe_after(self, session, site, call, outputs, args, kwargs):
        """Run a stateless call again and compare."""
        again = self.original(session, *args, **kwargs)
        flat = [leaf for _, leaf in recording.flatten(outputs)]
        graph_facts.note_probe(site.facts, call, flat, [leaf for _, leaf in recording.flatten(again)])

    def capture_weights(self, session):
        """Take every global variable's value if all are initialised; otherwise try again next call."""
        variables = session.graph.get_collection("variables")
        if not variables:
            return
        values = self.initialised_values(session, variables)
        if values is not None:
            self.take_weights(session, variables, values)
            self.capture_note = None

    def initialised_values(self, session, variables):
        """The variables' values, or None while some are still uninitialised."""
        self.capture_tries += 1
        try:
            return self.original(session, variables)
        except Exception as error:
            if type(error).__name__ != "FailedPreconditionError":
                self.capture_tries = MAX_CAPTURE_TRIES
            self.capture_note = "initial weights not captured: %s" % str(error).splitlines()[0]
            return None

    def take_weights(self, session, variables, values):
        """Save the initial weights to weights.npz and describe them in a manifest."""
        trainable = set(id(variable) for variable in session.graph.get_collection("trainable_variables"))
        arrays, manifest = {}, []
        for index, (variable, value) in enumerate(zip(variables, values)):
            key = "w%d" % index
            arrays[key] = np.asarray(value)
            manifest.append({"name": variable.name.split(":")[0], "key": key,
                             "shape": list(arrays[key].shape), "dtype": str(arrays[key].dtype),
                             "trainable": id(variable) in trainable})
        np.savez(os.path.join(self.out_dir, "weights.npz"), **arrays)
        self.variables = manifest
        self.capture_sequence = self.recorder.counter
        self.captured = (session, variables)

    def take_final_weights(self, session=None):
        """Save the captured variables' current values to final_weights.npz, once: when `session`
        is the one they were captured from and it is closing, or (no session given) when the
        program has ended with that session still open."""
        if self.captured is None or self.final_sequence is not None:
            return
        captured_session, variables = self.captured
        if (session is not None and session is not captured_session) or getattr(captured_session, "_closed", False):
            return
        try:
            values = self.original(captured_session, variables)
        except Exception:  # a session that can no longer run: no final weights
            return
        arrays = dict(("w%d" % index, np.asarray(value)) for index, value in enumerate(values))
        np.savez(os.path.join(self.out_dir, "final_weights.npz"), **arrays)
        self.final_sequence = self.recorder.counter

def _device_api(tf):
    """The module whose `config` lists devices: the v2 API where there is one (the legacy runtime
    makes `tensorflow` itself the v1 API)."""
    try:
        import tensorflow.compat.v2 as tf2
        return tf2
    except ImportError:
        return tf


def main(argv):
    config = common.load_config(argv[1])
    out_dir = config["out_dir"]
    result = {"side": "legacy", "status": "harness-error", "error": None}
    try:
        result["runtime"] = install_runtime(config.get("legacy_runtime_root"))
        import tensorflow as tf
        import tensorflow.compat.v1 as tf1
        tf_api = _device_api(tf)
        if config.get("device") == "gpu" and not common.gpu_info(tf_api):
            result["status"], result["error"] = "no-device", "--device gpu, but TensorFlow sees no GPU here"
            common.write_result(out_dir, result)
            return 0
        recorder = recording.Recorder(config["steps"], np.asarray, recording.copy_of_array)
        probe = LegacyProbe(tf1.Session, config["script"], recorder, out_dir)
        probe.summary_class = tf1.Summary
        probe.install()
        if config.get("aligned_randomness"):
            locator = random_streams.SiteLocator(config["script"], os.path.dirname(config["script"]), _library_roots())
            random_streams.RandomStreams(locator).install(tf1)
            probe.probing = False
        common.seed_everything(config["seed"])
        outcomes = common.TestOutcomes().install()
        status, error, seconds, printed_at = common.run_script(config["script"], None, recorder,
                                                                 config.get("args", ()), outcomes)
        probe.take_final_weights()
        result.update({
            "tests": outcomes.to_dict(),
            "status": status, "error": error, "wall_s": seconds, "sites": recorder.write(out_dir),
            "variables": probe.variables, "capture_note": probe.capture_note,
            "capture_sequence": probe.capture_sequence, "result_printed_at": printed_at,
            "final_sequence": probe.final_sequence, "sessions_run": len(probe.sessions_run),
            "instrumentation_s": recorder.overhead, "peak_host_mb": common.peak_host_mb(),
            "gpu": common.gpu_info(tf_api), "versions": common.versions(tf, "tf_keras"),
        })
    except BaseException:
        result["error"] = traceback.format_exc()
    common.write_result(out_dir, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
