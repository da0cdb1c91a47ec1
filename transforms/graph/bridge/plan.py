"""Reading a TF1 program for the bridge: its region, sessions, run sites, savers and summary writers, and
the checks that the code after the graph only runs it."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import Refusal, calls_under, walk
from transforms.graph.bridge.bindings import bound_names
from transforms.graph.bridge.configs import session_config_lines
from transforms.graph.bridge.iterators import iterator_kind
from transforms.graph.bridge.region import GRAPH_RESETS, Layout, calls_only, is_cell_boundary, read_layout
from transforms.graph.bridge.savers import Saver, read_savers
from transforms.graph.bridge.sites import GraphValues, RunSite
from transforms.graph.bridge.uses import SessionUses, UseReader
from transforms.graph.bridge.tracing import run_metadata_lines, trace_lines
from transforms.graph.bridge.writers import Writer, read_writers

# What code after the graph may call: plain ops on its own values run eagerly there (TF1 built them
# into the graph, to run them later; on graph values they would be refused as such).
RUNS_EAGERLY = frozenset({Category.OP, Category.PYTHON, Category.SEED, Category.SAVER, Category.SESSION,
                          Category.INIT_OP, Category.SUMMARY_WRITER})  # savers and writers: rewritten


STATEFUL_INPUTS = frozenset({Category.ITERATOR, Category.QUEUE_PRODUCER, Category.QUEUE_READER, Category.QUEUE_BATCH,
                             Category.QUEUE_RUNNERS, Category.QUEUE_COORDINATOR})
STATEFUL_INPUT_NAMES = ("tf.FIFOQueue", "tf.RandomShuffleQueue", "tf.PaddingFIFOQueue", "tf.PriorityQueue",
                        "tf.queue.", "tf.data.make_initializable_iterator", "tf.data.Iterator", "tf.TextLineReader",
                        "tf.TFRecordReader", "tf.WholeFileReader", "tf.FixedLengthRecordReader")
ITERATOR_METHODS = frozenset({"make_one_shot_iterator"})


@dataclass
class Plan:
    layout: Layout
    region: list[cst.BaseStatement]
    region_names: set[str]
    uses: SessionUses
    savers: list[Saver]
    initializer_calls: list[cst.Call]
    listing_calls: list[cst.Call]  # `tf.trainable_variables()` and the like, fetched by runs
    config_lines: list[cst.BaseStatement]  # building a ConfigProto only the sessions read
    writers: list[Writer]
    run_metadata_lines: list[cst.SimpleStatementLine]  # `writer.add_run_metadata(...)`: they go (tracing.py)
    trace_lines: list[cst.SimpleStatementLine]  # `run_options = tf.RunOptions(...)` read only by them and runs


def read_plan(transform, module: cst.Module) -> Plan:
    layout = read_layout(transform, module)
    body = layout.body
    layout.region_end = layout.end if layout.hoisted else _region_end(transform, body, layout)
    region = [statement for statement in body[layout.start:layout.region_end] if statement not in layout.dropped]
    region += layout.hoisted
    after = [_without_hoisted(statement, layout) for statement in body[layout.region_end:]
             if statement not in layout.hoisted]
    _check_region(transform, region)
    _check_stateful_inputs(transform, module)
    region_names = bound_names(region)
    values = GraphValues(transform, region_names, bound_names(after))
    scope = layout.host if layout.in_function else module  # where the session's name is read
    savers = read_savers(transform, scope, region)
    writers = read_writers(transform, scope, region)
    saver_names = {saver.name for saver in savers}
    uses = UseReader(transform, module, scope, layout.sessions, saver_names, values, writers).read()
    if not uses.helpers and not [site for site in uses.sites if not _only_initializes(site, values)]:
        raise Refusal(layout.sessions[0].call, "the session runs nothing but initializers")
    _check_after(transform, after, uses, values)
    config_lines = session_config_lines(transform, layout)
    metadata_lines = run_metadata_lines(scope, {writer.name for writer in writers if writer.name})
    traced_runs = [site.call for site in uses.sites if site.traced]
    return Plan(layout, region, region_names, uses, savers, values.initializer_calls, values.listing_calls,
                config_lines, writers, metadata_lines, trace_lines(transform, scope, traced_runs, metadata_lines))


def _without_hoisted(statement: cst.BaseStatement, layout: Layout) -> cst.BaseStatement:
    """A statement after the region as it reads without the graph code that joined the region."""
    first = layout.sessions[0].block
    if statement is not first or not layout.hoisted:
        return statement
    kept = [s for s in first.body.body if s not in layout.hoisted]
    return first.with_changes(body=first.body.with_changes(body=kept))


def _region_end(transform, body: list[cst.BaseStatement], layout: Layout) -> int:
    """Where the region stops: before the statements ahead of the session that neither use TensorFlow nor
    read what the graph code before them binds (loading data, say), which stay as they are."""
    end = layout.end
    for candidate in range(layout.end - 1, layout.start, -1):
        tail = [statement for statement in body[candidate:layout.end] if not _plain_function(statement)]
        graph_names = bound_names(body[layout.start:candidate])
        reads = {node.value for statement in tail for node in walk(statement) if isinstance(node, cst.Name)}
        if any(transform.tf_names(node) for node in walk(body[candidate])):
            break
        if not reads & graph_names:
            end = candidate
    return end


def _plain_function(statement: cst.BaseStatement) -> bool:
    """A function definition reading nothing when it runs (no decorators, no defaults): what its body
    reads is read when it is called."""
    return isinstance(statement, cst.FunctionDef) and not statement.decorators \
        and all(param.default is None for param in statement.params.params)


def _only_initializes(site: RunSite, values: GraphValues) -> bool:
    return any(site.fetches is call for call in values.initializer_calls)


def _check_stateful_inputs(transform, module: cst.Module) -> None:
    """Iterators and queues keep state between session runs; a function pruned from the wrapped graph
    would make them afresh on every call and read the first batch each time. Initializable and
    reinitializable iterators are shared by name instead (iterators.py)."""
    for call in calls_under(module):
        if iterator_kind(transform, call) is not None:
            continue
        name = transform.tf_name(call.func)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ITERATOR_METHODS:
            name = name or f"Dataset.{call.func.attr.value}"
        elif not (name and (categorize(name)[0] in STATEFUL_INPUTS or name.startswith(STATEFUL_INPUT_NAMES))):
            continue
        raise Refusal(call, f"{name}() keeps state between runs, which a function pruned from a wrapped "
                            "graph would make afresh on every call")


def _check_region(transform, region: list[cst.BaseStatement]) -> None:
    for statement in region:
        if is_cell_boundary(transform, statement):
            raise Refusal(statement, "the graph is built across notebook cells, which the one function holding "
                                     "it cannot keep")
        if calls_only(transform, statement, GRAPH_RESETS):
            raise Refusal(statement, "the graph is reset while it is built")
        for node in walk(statement):
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                raise Refusal(node, "the graph-building code declares global names")


def _check_after(transform, statements: list[cst.BaseStatement], uses: SessionUses, values: GraphValues) -> None:
    """Code after the graph must not build more of it: no graph-building calls, no op on a graph value
    outside a run site (or an assignment run eagerly)."""
    in_sites = {id(node) for site in uses.sites for node in walk(site.call)}
    in_sites |= {id(node) for assignment in uses.assignments for node in walk(assignment.line)}
    for statement in statements:
        for call in calls_under(statement):
            if id(call) in in_sites:
                continue
            name = transform.tf_name(call.func)
            category = categorize(name)[0] if name else None
            if category is not None and category not in RUNS_EAGERLY:
                raise Refusal(call, f"{name}() ({category.value}) is called after the graph is built")
            if category is Category.OP and _reads_graph_value(call, values):
                raise Refusal(call, f"{name}() builds an op on graph values after the graph is built")


def _reads_graph_value(call: cst.Call, values: GraphValues) -> bool:
    return any(isinstance(node, cst.Name) and node.value in values.names for node in walk(call))
