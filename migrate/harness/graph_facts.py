"""What a legacy `Session.run` call depends on, and whether its randomness actually matters.

Used by the legacy side (loaded as a sibling file, so: Python 3.7, standard library and NumPy only;
TensorFlow objects arrive as arguments). For each run site, on its first call, the fetched graph is
walked backwards (inputs and control inputs) to find stateful random ops, variable writes and input
consumption (queues, readers, iterators).

A site that reaches random ops is *probed*: its values are computed twice with the same feed, and a
call whose two computations agree is known to be deterministic (dropout fed keep_prob=1.0, say) and
can be compared strictly after all. A site that writes variables is probed before the real call,
through the tensors that feed its variable updates (gradients, learning rates) and its fetched
tensors, so that the probe never changes the state; a stateless site is simply run again after the
real call. Sites that consume input are never probed (a second run would eat data).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

# Stateful random ops: their values cannot be reproduced by a different runtime.
RANDOM_OP_TYPES = frozenset([
    "RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
    "ParameterizedTruncatedNormal", "RandomGamma", "RandomPoisson", "RandomPoissonV2",
    "RandomShuffle", "Multinomial", "RandomCrop",
    # Candidate samplers (nce_loss, sampled_softmax_loss) draw their negatives at random.
    "UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
    "FixedUnigramCandidateSampler", "AllCandidateSampler", "ThreadUnsafeUnigramCandidateSampler",
])
# Ops that write variables: a run site reaching one changes the model's state.
STATE_OP_PREFIXES = ("Assign", "Apply", "ResourceApply", "SparseApply", "ResourceSparseApply",
                     "Scatter", "ResourceScatter")
# Ops that consume input: running such a site twice would eat data.
INPUT_OP_PREFIXES = ("QueueDequeue", "IteratorGetNext", "ReaderRead")
# Tensors a probe cannot fetch or compare (variable references and handles).
UNFETCHABLE_DTYPE_SUFFIXES = ("_ref", "resource", "variant")


def analyse(graph, leaves):
    """(facts, probe tensors) for a site fetching `leaves` (the flattened fetch structure)."""
    roots = []
    for leaf in leaves:
        try:
            roots.append(graph.as_graph_element(leaf, allow_tensor=True, allow_operation=True))
        except Exception:
            continue
    random_types, writers, consumes = set(), [], False
    pending, seen = [getattr(root, "op", root) for root in roots], set()
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type in RANDOM_OP_TYPES:
            random_types.add(op.type)
        if op.type.startswith(STATE_OP_PREFIXES):
            writers.append(op)
        consumes = consumes or op.type.startswith(INPUT_OP_PREFIXES)
        pending.extend(tensor.op for tensor in op.inputs)
        pending.extend(op.control_inputs)
    facts = {"random_ops": sorted(random_types), "mutates_state": bool(writers), "consumes_input": consumes,
             "deterministic_calls": [], "random_effective": False}
    return facts, _probe_tensors(roots, writers)


def _probe_tensors(roots, writers):
    """Fetched tensors plus the values written into variables: enough to see randomness matter."""
    candidates = [root for root in roots if hasattr(root, "op")]
    for op in writers:
        candidates.extend(op.inputs)
    chosen, names = [], set()
    for tensor in candidates:
        if tensor.name in names or tensor.dtype.name.endswith(UNFETCHABLE_DTYPE_SUFFIXES):
            continue
        names.add(tensor.name)
        chosen.append(tensor)
    return chosen


def worth_probing(facts, call, limit):
    """Probe calls of random sites until randomness is seen to matter, for the compared calls only."""
    return (bool(facts.get("random_ops")) and not facts.get("consumes_input")
            and not facts.get("random_effective") and call < limit)


def note_probe(facts, call, first, second):
    """Record whether two computations of the same call agreed."""
    if first is not None and same_values(first, second):
        facts["deterministic_calls"].append(call)
    else:
        facts["random_effective"] = True


def same_values(first, second):
    """Whether two fetched structures (lists of leaves, in the same order) are exactly equal."""
    if len(first) != len(second) or not first:
        return False
    for one, other in zip(first, second):
        if one is None or other is None:
            if one is not other:
                return False
        elif not np.array_equal(np.asarray(one), np.asarray(other)):
            return False
    return True
