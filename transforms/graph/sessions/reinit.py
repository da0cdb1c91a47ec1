"""Initialiser runs may only disappear where TF1 ran them once, before anything used the variables.

`sess.run(tf.global_variables_initializer())` inside a loop, in a function called later, or after
another run re-initialises the variables (and optimizer slots, with fresh random draws) in TF1; the
rewrite creates state once, so it would silently keep trained weights instead. Such programs are
refused, except for the run that begins a later session (transforms/graph/sessions/later_sessions.py).
Local-variable initialiser runs are metric resets (`transforms/graph/training/metrics.py`) and may come
anywhere.
"""
from __future__ import annotations

import libcst as cst

from transforms.graph.training.metrics import is_local_initializer, local_initializer_names
from transforms.common.syntax import Refusal

_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def check_initializer_runs(block, sites, resolver, reopening=()) -> None:
    """`reopening`: the initializer runs that begin a later session (transforms/graph/sessions/later_sessions.py)."""
    reopening_calls = {id(site.call) for site in reopening}
    local_names = local_initializer_names(block, resolver)
    straight_runs = [resolver.line(site.call) for site in sites
                     if not site.is_init and not resolver.inside_function(site.call)]
    for site in sites:
        if not site.is_init or all(is_local_initializer(leaf.node, local_names, resolver)
                                   for leaf in site.fetch.leaves()):
            continue
        problem = _repeat_problem(site.call, resolver)
        if problem is None and id(site.call) not in reopening_calls and straight_runs \
                and resolver.line(site.call) > min(straight_runs):
            problem = "comes after other session runs"
        if problem:
            raise Refusal(site.call, f"variables are initialised again mid-way (the initialiser run {problem}); "
                                     "re-initialisation is not modelled")


def _repeat_problem(call: cst.Call, resolver) -> str | None:
    if resolver.inside_function(call):
        return "is inside a function"
    current = resolver.parent(call)
    while current is not None and current is not resolver.owner:
        if isinstance(current, _LOOPS):
            return "is inside a loop"
        current = resolver.parent(current)
    return None
