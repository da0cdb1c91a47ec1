"""`tf.train.global_step(sess, global_step)`: TF1's way to read a step counter as a Python int, which
the cnn-text-classification family calls after each train step. It is `int(sess.run(global_step))`
(TensorFlow's own definition), so it is written so before TFM201 reads the program: the run is then
a run site like any other."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import NodeOrigins, bind_arguments, calls_under

GLOBAL_STEP_READ = "tf.train.global_step"
_SIGNATURE = ["sess", "global_step_tensor"]


def global_step_reads(resolver, session: str | None, origins: NodeOrigins) -> dict:
    """Replacements (by id of original nodes) of every `tf.train.global_step(<session>, <step>)` given
    the program's one session by its name; each run they write stands for the call in `origins` (the
    run site the harness pairs)."""
    if session is None:
        return {}
    replacements = {}
    for call in calls_under(resolver.module):
        if resolver.tf_name(call.func) != GLOBAL_STEP_READ:
            continue
        bound = bind_arguments(call, _SIGNATURE, GLOBAL_STEP_READ)
        given = bound.get("sess")
        if isinstance(given, cst.Name) and given.value == session and "global_step_tensor" in bound:
            replacements[id(call)] = lambda updated, call=call: _read(updated, call, origins)
    return replacements


def _read(updated: cst.Call, original: cst.Call, origins: NodeOrigins) -> cst.Call:
    bound = bind_arguments(updated, _SIGNATURE, GLOBAL_STEP_READ)
    run = cst.Call(cst.Attribute(bound["sess"], cst.Name("run")), [cst.Arg(bound["global_step_tensor"])])
    origins.add(run, original)
    return cst.Call(cst.Name("int"), [cst.Arg(run)])
