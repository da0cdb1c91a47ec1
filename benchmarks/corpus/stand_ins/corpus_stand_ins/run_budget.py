"""Ends a program cleanly (SystemExit(0)) when it asks for step N+1: `TFM_CORPUS_MAX_RUNS=N`.

A step is a `Session.run` call (TF1 sessions, `tf.compat.v1` included; `.eval()` and `.run()` reach
it too) that runs more than variable initialisers (the migration drops those runs), or a top-level
call of a `tf.function` executed eagerly (calls made while a graph is built are not steps). The
legacy program and its migration are stopped at the same step when each `Session.run` of the one
became one function call of the other; a fused multi-step function (TFM301) counts as one call, and
a function running several step functions in turn (TFM311) as one per step function:
`TFM_CORPUS_MERGED_STEPS=name=2,...` names them (benchmarks/corpus/run_pass.py reads them from the
migration's site map). Under `tf-migrate verify` every call of the program reaches TensorFlow
through the harness's recording wrapper: a call from the harness is counted when the harness
function making it is one that forwards the program's own call (FORWARDERS), not when the harness
calls on its own behalf (capturing weights, re-running a site to probe randomness).

For programs whose step count neither a flag nor the data size bounds. Installed as a post-import
hook, so TensorFlow is patched only once the program imports it.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import os
import sys

MAX_RUNS_VARIABLE = "TFM_CORPUS_MAX_RUNS"
MERGED_STEPS_VARIABLE = "TFM_CORPUS_MERGED_STEPS"
SESSION_MODULE = "tensorflow.python.client.session"
FUNCTION_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
HARNESS_MARK = os.path.join("migrate", "harness") + os.sep
# migrate/harness: LegacyProbe.recorded_run (a run from the script or one of the program's modules,
# either side), MigratedProbe.call (a tf.function call on the migrated side), and the `__call__` of
# fused.py's wrappers of multi-step and merged-step functions (TFM301, TFM310, TFM311), which call the
# function themselves (a fused loop's first call as two, so it counts twice: the program still ends).
FORWARDERS = ("recorded_run", "call", "__call__")


class Budget:
    """Steps taken so far, and the limit."""

    def __init__(self, limit: int) -> None:
        self.limit, self.taken = limit, 0

    def take(self, caller, steps: int = 1) -> None:
        """Count `steps` steps made from `caller` (a code object); end the program past the limit."""
        if HARNESS_MARK in caller.co_filename and caller.co_name not in FORWARDERS:
            return
        if self.taken + steps > self.limit:
            print(f"[corpus stand-in] {self.taken} steps run ({MAX_RUNS_VARIABLE}={self.limit}): "
                  "ending the program here", file=sys.stderr)
            sys.stdout.flush()
            raise SystemExit(0)
        self.taken += steps


def counted(method, budget: Budget, is_step=lambda: True, steps=lambda args, kwargs: 1):
    """`method` counting `steps(args, kwargs)` steps per call (args: the receiver first)."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        if is_step():
            budget.take(sys._getframe(1).f_code, steps(args, kwargs))
        return method(*args, **kwargs)
    return wrapper


def run_steps(args, kwargs) -> int:
    """A Session.run (args: the session, then its own) is one step, unless it only initialises variables."""
    fetches = args[1] if len(args) > 1 else kwargs.get("fetches")
    return 0 if _only_initialisers(fetches) else 1


_INITIALISING = {"Assign", "AssignVariableOp"}


def _only_initialisers(fetches) -> bool:
    if isinstance(fetches, (list, tuple)):
        return bool(fetches) and all(_only_initialisers(fetch) for fetch in fetches)
    op_type = getattr(fetches, "type", None)
    if op_type in _INITIALISING:
        return True
    inputs = getattr(fetches, "control_inputs", None)
    return op_type == "NoOp" and bool(inputs) and all(_only_initialisers(op) for op in inputs)


def merged_steps_from_environment() -> dict[str, int]:
    """TFM_CORPUS_MERGED_STEPS: merged function name -> how many step functions it runs."""
    merged = {}
    for part in filter(None, os.environ.get(MERGED_STEPS_VARIABLE, "").split(",")):
        name, _, count = part.partition("=")
        merged[name] = int(count)
    return merged


def patch_session(module, budget: Budget) -> None:
    module.BaseSession.run = counted(module.BaseSession.run, budget, steps=run_steps)


def patch_function(module, budget: Budget) -> None:
    from tensorflow.python.eager import context
    from tensorflow.python.eager.polymorphic_function import concrete_function

    merged = merged_steps_from_environment()
    module.Function.__call__ = counted(module.Function.__call__, budget, context.executing_eagerly,
                                       lambda args, kwargs: merged.get(getattr(args[0], "__name__", ""), 1))
    # TFM203's run-site functions (pruned from a wrapped TF1 graph) are called as concrete functions.
    concrete = concrete_function.ConcreteFunction
    concrete.__call__ = counted(concrete.__call__, budget, context.executing_eagerly,
                                lambda args, kwargs: 0 if _initialises_only(args[0].graph) else 1)


# Stateful ops of a function that only (re)initialises variables, as a run of the initializer op does.
_INITIALISING_FUNCTION_OPS = {"AssignVariableOp", "ReadVariableOp", "StatefulPartitionedCall", "PartitionedCall",
                              "RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal"}


def _initialises_only(graph) -> bool:
    stateful = {op.type for op in _operations(graph) if op._is_stateful}
    return "AssignVariableOp" in stateful and stateful <= _INITIALISING_FUNCTION_OPS


def _operations(graph):
    """The ops of a function graph and of the functions it calls."""
    for op in graph.get_operations():
        yield op
        if op.type in ("PartitionedCall", "StatefulPartitionedCall"):
            called = graph._get_function(op.get_attr("f").name)
            if called is not None:
                yield from _operations(called.graph)


class PostImportPatcher(importlib.abc.MetaPathFinder):
    """Runs `patches[name](module)` right after module `name` is executed."""

    def __init__(self, patches) -> None:
        self.patches = dict(patches)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.patches:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                spec.loader = PatchingLoader(spec.loader, self.patches.pop(fullname))
                return spec
        return None


class PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader, patch) -> None:
        self.loader, self.patch = loader, patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.patch(module)


def install(limit: int) -> None:
    budget = Budget(limit)
    sys.meta_path.insert(0, PostImportPatcher({
        SESSION_MODULE: lambda module: patch_session(module, budget),
        FUNCTION_MODULE: lambda module: patch_function(module, budget)}))
