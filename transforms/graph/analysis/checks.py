"""Checks that make the rewrite safe, each a Refusal when it fails (the session checks are in
transforms/graph/sessions/sessions.py):

- every name the graph binds is bound only by graph code (plain Python never rebinds it);
- Python values the graph statements read are not rebound after them (TF1 read them when the graph
  was built; a tf.function reads them when it is first traced);
- helper functions called from graph code only compute (no variables, layers or session runs);
- each step function is defined before the first statement that runs it;
- a feed dict built ahead of its runs is only used by them, and the values it holds are not rebound
  between the dict and the runs (its values are passed to the step functions directly).
"""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.analysis.model import GraphBlock, Kind
from transforms.graph.writing.plan import StepFunction
from transforms.graph.sessions.runs import RunSite
from transforms.common.syntax import Refusal, code, load_names, walk


def check_bindings(block: GraphBlock, context_headers: list[cst.CSTNode], resolver) -> None:
    allowed = {id(node) for item in block.items if not item.keeps_original for node in walk(item.node)}
    allowed |= {id(node) for header in context_headers for node in walk(header)}
    for name, kind in block.kinds.items():
        if kind is Kind.PYTHON or _is_unread_throwaway(name, resolver):
            continue
        assignments = resolver.block_assignments(name)
        graph_lines = [resolver.line(a.node) for a in assignments if id(a.node) in allowed]
        for assignment in assignments:
            if id(assignment.node) in allowed or _is_dead_store_before(assignment, graph_lines, resolver):
                continue
            if kind is Kind.TENSOR and _is_rebinding_after(name, assignment, block, resolver):
                continue
            raise Refusal(assignment.node, f"'{name}' ({kind.value}) is also rebound by plain Python code")


def _is_dead_store_before(assignment, graph_lines: list[int], resolver) -> bool:
    """A plain Python value bound before the graph binds the name and read nowhere above that
    binding (`c = 0` left above `c = tf.placeholder(...)`): the graph binding replaces it unseen."""
    if not graph_lines or resolver.line(assignment.node) >= min(graph_lines):
        return False
    return all(resolver.line(access.node) > min(graph_lines) for access in assignment.references)


def _is_rebinding_after(name: str, assignment, block: GraphBlock, resolver) -> bool:
    """Plain Python giving a graph tensor's name a value of its own (`loss, state, _ = sess.run(...)`)
    below every statement of graph code that binds or reads it: the graph kept what it read at
    building time, and the step functions hold their own copies of the graph statements, so the
    name is the program's Python value from there on. A read of the name in plain code is refused
    where it is (as graph values outside a session run)."""
    users = [item.node for item in block.items
             if not item.keeps_original and (name in item.defines or name in item.reads)]
    return bool(users) and resolver.line(assignment.node) > max(map(resolver.last_line, users))


def _is_unread_throwaway(name: str, resolver) -> bool:
    """`_` bound by graph code (`_, logits = P(z)`) and never read: plain Python may rebind it."""
    return name == "_" and not any(assignment.references for assignment in resolver.block_assignments(name))


def check_captures(block: GraphBlock, resolver) -> None:
    for item in block.items:
        if item.kind not in (Kind.TENSOR, Kind.TRAIN_OP):
            continue
        start = resolver.line(item.node)
        for name in item.python_reads:
            for assignment in resolver.block_assignments(name):
                if resolver.line(assignment.node) > start:
                    raise Refusal(assignment.node, f"'{name}' is read by graph code above and rebound here; "
                                                   "a tf.function would see the new value")


def check_run_captures(sites, resolver) -> None:
    """A fetch expression (`sess.run(y * scale)`) is computed in a step function, which captures the
    Python values it reads when first traced: refused when one may change between runs (bound more
    than once, or in a loop around the run)."""
    for site in sites:
        for name in sorted(site.python_reads):
            assignments = resolver.block_assignments(name)
            if len(assignments) > 1 or any(_in_enclosing_loop(a.node, site.call, resolver) for a in assignments):
                raise Refusal(site.call, f"the fetch reads '{name}', which changes between runs; a tf.function "
                                         "would keep the value it had when first traced")


def _in_enclosing_loop(node: cst.CSTNode, call: cst.Call, resolver) -> bool:
    """Whether `node` (where a name is bound) is, or is inside, a loop that also holds `call`."""
    loops = {id(loop) for loop in _ancestors(call, resolver) if isinstance(loop, (cst.For, cst.While))}
    return id(node) in loops or any(id(ancestor) in loops for ancestor in _ancestors(node, resolver))


def _ancestors(node: cst.CSTNode, resolver):
    current = resolver.parent(node)
    while current is not None:
        yield current
        current = resolver.parent(current)


def check_helpers(block: GraphBlock, helper_uses: dict[int, set[str]], analyzer, resolver,
                  layer_helpers: set[str], module_helpers=frozenset()) -> dict[int, set[str]]:
    """The state each graph statement reads through the helpers it calls (refusing impure helpers).
    `module_helpers` became tf.Module classes: every call of theirs is converted, none is followed."""
    state_reads: dict[int, set[str]] = {}
    for index, helpers in helper_uses.items():
        seen, pending = set(), list(helpers)
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            reads, calls = _helper_reads(block.helpers[name], analyzer, resolver, block.aliases, name in layer_helpers)
            state_reads.setdefault(index, set()).update(reads)
            pending += [call for call in calls if call in block.helpers and call not in module_helpers]
    return state_reads


def _helper_reads(helper: cst.FunctionDef, analyzer, resolver, aliases: dict,
                  builds_layers: bool) -> tuple[set[str], set[str]]:
    reads, calls = set(), set()
    converted = (Category.LAYER, Category.RNN_CELL, Category.RNN_RUN,  # built once by the conversion
                 Category.SCOPE)  # only named what is now built outside (unwrapped: transforms/graph/layers/model_functions.py)
    allowed = (None, Category.OP, Category.PYTHON, Category.INITIALIZER) + (converted if builds_layers else ())
    for node in walk(helper.body):
        if isinstance(node, cst.Call):
            name, category, _ = analyzer.category(node.func)
            if category not in allowed:
                raise Refusal(node, f"helper '{helper.name.value}' calls {name}: graph state built inside a "
                                    "function is not converted yet")
            if isinstance(node.func, cst.Name):
                calls.add(node.func.value)
            if analyzer.is_run_call(node):
                raise Refusal(node, f"helper '{helper.name.value}' runs the session")
        elif isinstance(node, cst.Name) and resolver.is_block_reference(node):
            kind = analyzer.kinds.get(node.value, Kind.PYTHON)
            if kind.is_graph:
                raise Refusal(node, f"helper '{helper.name.value}' reads '{node.value}' ({kind.value}) directly")
            if kind.is_state and node.value in aliases:
                raise Refusal(node, f"helper '{helper.name.value}' reads '{node.value}', "
                                    "a name bound to several variables")
            if kind.is_state:
                reads.add(node.value)
    return reads, calls


def check_placement(functions: list[StepFunction], resolver) -> None:
    for function in functions:
        for site in function.sites:
            if site.item_index < function.insert_at and not resolver.inside_function(site.call):
                raise Refusal(site.call, "graph construction continues after this session run; "
                                         f"'{function.name}' could not be defined before it")


def check_sites_in_block(sites: list[RunSite], block: GraphBlock) -> None:
    for site in sites:
        for name in site.reads:
            if block.kind(name).is_graph and block.kind(name) is not Kind.PLACEHOLDER and name not in block.definitions:
                raise Refusal(site.call, f"'{name}' is not defined by the graph code")


def check_feed_dicts(feed_dicts: list[cst.Assign], sites: list[RunSite], resolver) -> None:
    used = {id(site.named_feed) for site in sites if site.named_feed is not None}
    for assign in feed_dicts:
        target = assign.targets[0].target
        for assignment in resolver.assignments_of(target):
            if assignment.node is not target:
                raise Refusal(assignment.node, f"feed dict '{target.value}' is rebound")
            for access in assignment.references:
                if id(access.node) not in used:
                    raise Refusal(access.node, f"feed dict '{target.value}' is used other than as a feed_dict")
        line = resolver.line(assign)
        for element in assign.value.elements:
            for name in load_names(element.value):
                for assignment in resolver.assignments_of(name):
                    if resolver.line(assignment.node) > line:
                        raise Refusal(assignment.node, f"'{name.value}' changes after feed dict "
                                                       f"'{target.value}' captured it")


def check_batch_norm(functions: list[StepFunction], layer_uses: dict) -> None:
    """A Keras BatchNormalization called with training=True updates its moving averages on every call;
    TF1 updated them only when a run depended on the UPDATE_OPS collection (the train op did)."""
    for function in functions:
        for index in function.items:
            for use in layer_uses.get(index, []):
                if use.keras != "BatchNormalization":
                    continue
                training = use.check_arguments["training"]
                value = function.constants.get(training.value, "?") if isinstance(training, cst.Name) \
                    and training.value not in ("True", "False") else code(training)
                updates = function.train_op is not None and function.train_op.runs_update_ops
                if value != "False" and not updates:
                    raise Refusal(use.call, "batch normalization in training mode in a run that does not update "
                                            "its moving averages through UPDATE_OPS")
