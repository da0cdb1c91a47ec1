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

A site may also *race*: TF1 runs the ops of one `Session.run` in whichever order its executor picks.
Two writes of one variable with no path between them (an optimizer step fetched with a clipping
assignment of the same weights) leave a value that depends on scheduling: `racing_variables` names
them. A variable fetched beside its own update (`sess.run([train_op, global_step])`) returns the value
from before or after the update, but the update itself is ordered, so only what this run fetches is
affected: `fetched_racing` names them. `leaf_reads` (per fetched leaf, the variables its value is
computed from) and `write_reads` (per written variable, the variables its new value is computed from)
let the judge make exactly what depends on them advisory (ordering.py); so does `racing_reads` (per
fetched leaf, the variables the run writes that it reads through ops not ordered before the writes: a
summary of the weights fetched beside their train op).
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
# Ops that are variables (their name is the variable's) and ops that read one through a handle.
VARIABLE_OP_TYPES = frozenset(["VariableV2", "Variable", "VarHandleOp"])
# Tensors a probe cannot fetch or compare (variable references and handles).
UNFETCHABLE_DTYPE_SUFFIXES = ("_ref", "resource", "variant")


def analyse(graph, leaves):
    """(facts, probe tensors) for a site fetching `leaves` (the flattened fetch structure)."""
    elements = [_graph_element(graph, leaf) for leaf in leaves]
    roots = [element for element in elements if element is not None]
    random_types, writers, consumes = set(), [], False
    for op in _walk_back([getattr(root, "op", root) for root in roots]):
        if op.type in RANDOM_OP_TYPES:
            random_types.add(op.type)
        if op.type.startswith(STATE_OP_PREFIXES):
            writers.append(op)
        consumes = consumes or op.type.startswith(INPUT_OP_PREFIXES)
    facts = {"random_ops": sorted(random_types), "mutates_state": bool(writers), "consumes_input": consumes,
             "deterministic_calls": [], "random_effective": False}
    facts.update(_ordering_facts(elements, writers))
    probed, unprobed = _probe_tensors(roots, writers)
    # A random value the probe may not fetch (computed after a write: batch_norm's in-place moving
    # averages order every tensor after them) could differ unseen: agreeing probes would prove nothing.
    facts["random_effective"] = any(_reaches_random(tensor) for tensor in unprobed)
    return facts, probed


def _walk_back(starts, control=True, stop=None):
    """Each op the `starts` depend on (themselves included), once: through data inputs and, with
    `control`, control inputs; not past an op for which `stop(op)` is true."""
    pending, seen = list(starts), set()
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        yield op
        if stop is not None and stop(op):
            continue
        pending.extend(tensor.op for tensor in op.inputs)
        if control:
            pending.extend(op.control_inputs)


def spread_over_recorded(per_fetch, fetch_paths, recorded_paths, root_path):
    """Values given per fetched leaf, repeated for each leaf actually recorded from it (a fetched
    summary is recorded as one leaf per tag: its paths extend the fetch's path)."""
    spread = []
    for path in recorded_paths:
        owner = None
        for index, fetch in enumerate(fetch_paths):
            if fetch == root_path or path == fetch or path.startswith(fetch + "."):
                owner = index
                break
        spread.append(per_fetch[owner] if owner is not None and owner < len(per_fetch) else [])
    return spread


def _graph_element(graph, leaf):
    try:
        return graph.as_graph_element(leaf, allow_tensor=True, allow_operation=True)
    except Exception:
        return None


def _ordering_facts(elements, writers):
    """racing_variables, fetched_racing, leaf_reads and write_reads of a site (see the module docstring)."""
    by_variable = {}
    for op in writers:
        variable = _variable_of(op.inputs[0].op) if op.inputs else None
        if variable is not None:
            by_variable.setdefault(variable, []).append(op)
    ops = [getattr(element, "op", element) for element in elements]
    fetched = set(_variable_of(op) for op in ops if op is not None) - {None}
    racing = sorted(variable for variable, writes in by_variable.items() if _unordered(writes))
    fetched_racing = sorted(variable for variable in by_variable if variable in fetched)
    leaf_reads = [sorted(_values_read(op)) if op is not None else [] for op in ops]
    # What is ordered with the writes: the ops they depend on, and the writes themselves (a write's
    # output, `assign_add(...)`'s value read by a metric's update op, comes after it).
    ordered = {op.name for op in writers}
    for op in writers:
        ordered |= _ancestors(op)
    racing_reads = [sorted(_unordered_reads(op, set(by_variable), ordered)) if op is not None else [] for op in ops]
    write_reads = {}
    for variable, ops in by_variable.items():
        read = set()
        for op in ops:
            for tensor in op.inputs[1:]:
                read |= _values_read(tensor.op)
        write_reads[variable] = sorted(read)
    return {"racing_variables": racing, "fetched_racing": fetched_racing, "leaf_reads": leaf_reads,
            "racing_reads": racing_reads, "write_reads": write_reads}


def _unordered_reads(op, written, ordered):
    """The variables of `written` that `op`'s value reads through an op not ordered before the writes
    (a summary of the weights fetched with their train op: TF1 reads them before or after the
    update). A value computed by an op the writes depend on (the loss, through its gradients) was
    computed before them."""
    found, pending, seen = set(), [op], set()
    while pending:
        current = pending.pop()
        if current.name in seen or current.name in ordered:
            continue
        seen.add(current.name)
        for tensor in current.inputs:
            variable = _variable_of(tensor.op)
            if variable is not None:
                if variable in written:
                    found.add(variable)
            else:
                pending.append(tensor.op)
    return found


def _variable_of(op):
    """The variable `op` is (a variable op) or reads (ReadVariableOp, Identity of a ref variable)."""
    while op is not None:
        if op.type in VARIABLE_OP_TYPES:
            return op.name
        if op.type in ("ReadVariableOp", "Identity") and op.inputs:
            op = op.inputs[0].op
            continue
        return None
    return None


def _values_read(op):
    """The variables whose values `op`'s output is computed from (data inputs only: a control
    dependency orders, it does not feed a value)."""
    is_variable = lambda current: current.type in VARIABLE_OP_TYPES
    return set(current.name for current in _walk_back([op], control=False, stop=is_variable)
               if is_variable(current))


def _unordered(ops):
    """Whether two of the ops have no path between them."""
    ancestors = [_ancestors(op) for op in ops]
    return any(ops[j].name not in ancestors[i] and ops[i].name not in ancestors[j]
               for i in range(len(ops)) for j in range(i + 1, len(ops)))


def _ancestors(op):
    starts = [tensor.op for tensor in op.inputs] + list(op.control_inputs)
    return set(current.name for current in _walk_back(starts))


def _probe_tensors(roots, writers):
    """(probed, left out): fetched tensors plus the values written into variables, enough to see
    randomness matter. A tensor computed after a write (TF1 Adam's `beta1_power * beta1`, made under a
    control dependency on its updates) is left out: fetching it would run the write, and the probe
    would change the model."""
    candidates = [root for root in roots if hasattr(root, "op")]
    for op in writers:
        candidates.extend(op.inputs)
    chosen, left_out, names = [], [], set()
    for tensor in candidates:
        if tensor.name in names or tensor.dtype.name.endswith(UNFETCHABLE_DTYPE_SUFFIXES):
            continue
        names.add(tensor.name)
        after_write = any(op.type.startswith(STATE_OP_PREFIXES) for op in _walk_back([tensor.op]))
        (left_out if after_write else chosen).append(tensor)
    return chosen, left_out


def _reaches_random(tensor):
    """Whether `tensor` is computed from a random op other than through a write: what a write
    computes from is among the probed tensors (its inputs) or left out itself."""
    is_write = lambda op: op.type.startswith(STATE_OP_PREFIXES)
    return any(op.type in RANDOM_OP_TYPES for op in _walk_back([tensor.op], stop=is_write))


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
