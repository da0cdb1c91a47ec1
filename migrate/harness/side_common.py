"""What both harness sides share besides recording (recording.py): running the user's script as
`__main__`, seeding, versions and device facts, and writing the results the parent process reads.

This module runs inside the side subprocesses, and the legacy side may run on a user's own TF 1.15 /
Python 3.7 interpreter (`--legacy-python`). So it imports only the standard library and NumPy, and
keeps to Python 3.7 syntax and APIs. Data goes back to the parent as files: `result.json` (metadata)
and `records.npz` (recorded values).
"""
from __future__ import absolute_import, division, print_function

import builtins
import json
import os
import random
import resource
import sys
import time
import traceback
import types

import numpy as np

class ResultTap(object):
    """Passes the script's stdout through, noting how many run-site calls had happened when each
    `RESULT key value` line was printed (a result printed before randomness changed the weights can
    still be compared strictly)."""

    def __init__(self, stream, recorder):
        self.stream = stream
        self.recorder = recorder
        self.pending = ""
        self.printed_at = {}

    def write(self, text):
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            if line.startswith("RESULT"):
                words = line.split(None, 2)
                if len(words) > 1:
                    self.printed_at[words[1]] = self.recorder.counter
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


class TestOutcomes(object):
    """Records the outcome of every test a unittest / `tf.test` program runs, by test id.

    `unittest.TestResult`'s `add*` methods are wrapped at the class level, so every runner's result
    class (unittest's, absltest's behind `tf.test.main()`) reports through them. Outcomes: `pass`,
    `fail`, `error`, `skip`, `expected-failure`, `unexpected-success`; a failing subtest makes its test
    `fail` (or `error`). `details` holds the first line of each failure's exception."""

    __test__ = False  # not a pytest test class
    RANK = {"pass": 0, "skip": 0, "expected-failure": 0, "unexpected-success": 1, "fail": 2, "error": 3}

    def __init__(self):
        self.outcomes = {}
        self.details = {}

    def install(self):
        import unittest
        result_class = unittest.TestResult
        for method, outcome in (("addSuccess", "pass"), ("addFailure", "fail"), ("addError", "error"),
                                ("addSkip", "skip"), ("addExpectedFailure", "expected-failure"),
                                ("addUnexpectedSuccess", "unexpected-success")):
            setattr(result_class, method, self._wrapped(getattr(result_class, method), outcome))
        result_class.addSubTest = self._wrapped_subtest(result_class.addSubTest)
        return self

    def _wrapped(self, original, outcome):
        outcomes = self

        def add(result, test, *rest):
            error = rest[0] if outcome in ("fail", "error") and rest else None
            outcomes.note(test, outcome, error)
            return original(result, test, *rest)

        return add

    def _wrapped_subtest(self, original):
        outcomes = self

        def add_subtest(result, test, subtest, error):
            if error is not None:
                failed = issubclass(error[0], test.failureException)
                outcomes.note(test, "fail" if failed else "error", error)
            return original(result, test, subtest, error)

        return add_subtest

    def note(self, test, outcome, error=None):
        """Keep the worst outcome seen for a test (its subtests may have failed before it ended)."""
        key = test.id()
        if self.RANK[outcome] >= self.RANK.get(self.outcomes.get(key), -1):
            self.outcomes[key] = outcome
            if error is not None:
                self.details[key] = ("%s: %s" % (error[0].__name__, error[1])).splitlines()[0]

    def to_dict(self):
        """None when no test ran, else {"outcomes": {id: outcome}, "details": {id: message}}."""
        return {"outcomes": self.outcomes, "details": self.details} if self.outcomes else None


def seed_everything(seed):
    """Seed Python's and NumPy's global generators identically on both sides."""
    random.seed(seed)
    np.random.seed(seed)


def run_script(path, file_as=None, recorder=None, args=(), outcomes=None):
    """Run the script at `path` as `__main__`, as `python path` would.

    Returns (status, error, seconds, printed_at): printed_at maps RESULT keys to the recorder's call
    count when they were printed (empty without a recorder).

    `file_as` sets `__file__` (and the import path) to another location: a program migrated into a
    temporary folder still finds the data files beside the original. Code objects keep `path` as
    their file name, which is how the recorders recognise calls made by the script itself.
    `args`: its command-line arguments (`sys.argv[1:]`), the same on both sides.
    `outcomes` (TestOutcomes): a test program's `unittest.main()` ends in `sys.exit(1)` when a test
    fails; once tests have run, that exit is the tests' verdict, compared test by test, not a crash.
    """
    home = os.path.dirname(os.path.abspath(file_as or path))
    sys.argv = [file_as or path] + list(args)
    sys.path.insert(0, home)
    with open(path, "rb") as handle:
        code = compile(handle.read(), path, "exec", dont_inherit=True)
    # The script becomes sys.modules["__main__"] while it runs, as with `python script.py`:
    # `tf.app.run()` looks up `__main__.main`, and pickling finds the script's classes there.
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update({"__file__": file_as or path, "__builtins__": builtins,
                                 "__package__": None, "__spec__": None})
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = main_module
    tap = ResultTap(sys.stdout, recorder) if recorder is not None else None
    if tap is not None:
        sys.stdout = tap
    started = time.perf_counter()
    status, error = "ok", None
    try:
        exec(code, main_module.__dict__)
    except SystemExit as stop:
        tests_ran = outcomes is not None and outcomes.outcomes
        if stop.code not in (None, 0) and not tests_ran:
            status, error = "crashed", "the script called sys.exit(%r)" % (stop.code,)
    except BaseException:
        status, error = "crashed", traceback.format_exc()
    seconds = time.perf_counter() - started
    sys.modules["__main__"] = saved_main
    if tap is not None:
        sys.stdout = tap.stream
    sys.stdout.flush()
    return status, error, seconds, (tap.printed_at if tap is not None else {})


def peak_host_mb():
    """Peak resident memory of this process in MiB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def versions(tf_module, keras_module_name):
    """Interpreter and library versions of this side (`keras_module_name`: the Keras it runs with)."""
    found = {"python": sys.version.split()[0], "numpy": np.__version__,
             "tensorflow": getattr(tf_module, "__version__", None), "keras": None}
    try:
        keras = __import__(keras_module_name)
        found["keras"] = "%s %s" % (keras_module_name, getattr(keras, "__version__", "?"))
    except Exception:
        pass
    return found


def gpu_info(tf_module):
    """Name and peak memory (MiB) of the first GPU TensorFlow sees, or None without one."""
    try:
        config = tf_module.config
        lister = getattr(config, "list_physical_devices", None) or config.experimental.list_physical_devices
        gpus = lister("GPU")
    except Exception:
        return None
    if not gpus:
        return None
    info = {"device_name": gpus[0].name, "peak_mb": None}
    try:
        details = config.experimental.get_device_details(gpus[0])
        info["device_name"] = details.get("device_name", info["device_name"])
    except Exception:
        pass
    try:
        info["peak_mb"] = config.experimental.get_memory_info("GPU:0")["peak"] / 2.0 ** 20
    except Exception:
        pass
    return info


def load_config(path):
    with open(path) as handle:
        return json.load(handle)


def write_result(out_dir, result):
    """Write result.json atomically, so the parent never reads half a file."""
    temporary = os.path.join(out_dir, "result.json.part")
    with open(temporary, "w") as handle:
        json.dump(result, handle, indent=1, default=_jsonable)
    os.replace(temporary, os.path.join(out_dir, "result.json"))


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
