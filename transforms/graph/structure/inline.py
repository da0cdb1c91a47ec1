"""Programs whose graph is built by builder functions (transforms/graph/structure/builders.py), whose
session is passed to helper functions (transforms/graph/sessions/session_helpers.py), whose summaries
are attached by helpers (summary_helpers.py) or whose feed dicts are made by functions
(feed_functions.py) are first rewritten into the shape TFM201 reads (one block building the graph, run
sites reading the session by its own name and feeding dicts written where they run), then converted
as usual. A session helper moves into the function calling it, before the first statement that calls
it, inside the graph-context blocks around that statement.

The rewritten module keeps the original nodes wherever it did not change them and remembers, for the
nodes it rebuilt, which original node each stands for: findings and the harness's run-site lines
always point into the file as the user wrote it."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from transforms.graph.structure.builders import find_builders, inline_builder, is_graph_context
from transforms.graph.structure.feed_functions import feed_function_replacements, find_feed_functions
from transforms.graph.structure.global_step_reads import global_step_reads
from transforms.graph._pipeline import GraphProgram
from transforms.graph.analysis.resolver import GraphResolver
from transforms.graph.sessions.session_helpers import (SessionHelper, bound_argument, read_passed_names, session_helpers,
                                                      session_name)
from transforms.graph.sessions.sessions import find_sessions
from transforms.graph.structure.summary_helpers import (find_summary_helpers, summary_helper_replacements,
                                                         taken_names)
from transforms.common.lazy_metadata import LazyMetadataWrapper
from transforms.common.syntax import NodeOrigins, NodeReplacer, Refusal, load_names, walk


class _TrackingReplacer(NodeReplacer):
    """A NodeReplacer that records which original node each rebuilt node stands for."""

    def __init__(self, replacements: dict) -> None:
        super().__init__(replacements)
        self.origins = NodeOrigins()
        self.results: dict[int, cst.CSTNode] = {}

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, cst.CSTNode):
            self.results[id(original_node)] = result
            if result is not original_node:
                self.origins.add(result, original_node)
        return result


class InlinedProgram:
    def __init__(self, transform, module: cst.Module, origins: NodeOrigins, fallback: cst.CSTNode):
        self.transform = transform
        self.module = module
        self.origins = origins
        self.fallback = fallback

    def original(self, node: cst.CSTNode | None) -> cst.CSTNode | None:
        """The node of the file as written that `node` stands for (a line near it if it is new)."""
        if node is None:
            return None
        node = self.origins.origin(node, node)
        known = self.transform.get_metadata(PositionProvider, node, None) is not None
        return node if known else self.fallback

    def convert(self) -> tuple[cst.Module, list[tuple[cst.Call, str]]]:
        return converted(self.transform, self.module, self.original, lambda inner: GraphProgram(inner, self.module))


def converted(transform, module: cst.Module, original, program) -> tuple[cst.Module, list[tuple[cst.Call, str]]]:
    """The conversion `program(inner)` makes of the rewritten `module`, `inner` being a transform of
    `transform`'s kind that resolves `module`'s metadata. What it reports or refuses, and its run sites,
    are placed at `original(node)`: the node of the file as written."""
    inner = type(transform)(transform.context)
    inner._module, inner._aliases = module, None
    inner.report = lambda node, message, **options: transform.report(original(node), message, **options)
    with inner.resolve(LazyMetadataWrapper(module, unsafe_skip_copy=True)):
        try:
            result, sites = program(inner).convert()
        except Refusal as refusal:
            raise Refusal(original(refusal.node), refusal.message) from refusal
    return result, [(original(call), name) for call, name in sites]


def inlined_program(transform, module: cst.Module) -> InlinedProgram | None:
    """The program rewritten around its graph builder and session helpers; None when it has neither."""
    resolver = GraphResolver(transform, module)
    find_sessions(resolver)
    session = session_name(resolver)
    helpers = session_helpers(resolver, session) if session else {}
    builders = find_builders(resolver)
    summary_helpers = find_summary_helpers(resolver)
    feed_functions = find_feed_functions(resolver)
    step_origins = NodeOrigins()
    step_reads = global_step_reads(resolver, session, step_origins)
    if not builders and not helpers and not summary_helpers and not feed_functions and not step_reads:
        return None
    replacements = dict(step_reads)
    for builder in builders:
        replacements.update(inline_builder(resolver, builder, helpers, [b for b in builders if b is not builder]))
    renamed = {target: own for builder in builders if builder.result is None for target, own in builder.outputs.items()}
    for helper in helpers.values():
        read_passed_names(resolver, helper, renamed)
    taken = taken_names(module)
    replacements.update(summary_helper_replacements(summary_helpers, taken))
    written_out = feed_function_replacements(resolver, feed_functions, taken, [b.function for b in builders])
    if not written_out.keys() & replacements.keys():  # a line another rewrite takes is not written out twice
        replacements.update(written_out)
    for helper in helpers.values():
        _check_move(resolver, helper, session)
        replacements.update(_helper_replacements(helper))
    replacer = _TrackingReplacer(replacements)
    rewritten = module.visit(replacer)
    for helper in helpers.values():
        if helper.moves:
            rewritten = _move(resolver, rewritten, helper, replacer)
    fallback = builders[0].line if builders else next(iter(helpers.values())).function if helpers \
        else summary_helpers[0].function if summary_helpers else feed_functions[0].function if feed_functions \
        else resolver.module
    return InlinedProgram(transform, rewritten, replacer.origins.merged(step_origins), fallback)


def _check_move(resolver, helper: SessionHelper, session: str) -> None:
    """A helper moving into its caller must not read names the caller binds to something else."""
    if not helper.moves:
        return
    function = helper.function
    own = {a.name for a in resolver.scope(function.body.body[0]).assignments}
    free = {n.value for n in load_names(function.body)} - own - {session}
    caller_scope = resolver.scope(helper.caller.body.body[0])
    shadowed = sorted(name for name in free if name in caller_scope.assignments)
    if shadowed:
        raise Refusal(function, f"'{function.name.value}' runs the session and reads {', '.join(shadowed)}, which "
                                f"'{helper.caller.name.value}' binds to something else")


def _helper_replacements(helper: SessionHelper) -> dict:
    removed = helper.removed
    replacements = {identity: (lambda _, node=node: node) for identity, node in helper.renames.items()}
    replacements[id(helper.function)] = lambda updated: updated.with_changes(params=updated.params.with_changes(
        params=_without(updated.params.params, [p.name.value in removed for p in updated.params.params])))
    for call in helper.calls:
        dropped = {id(bound_argument(call, helper.params, p)) for p in removed}
        flags = [id(arg) in dropped for arg in call.args]
        replacements[id(call)] = lambda updated, flags=flags: updated.with_changes(
            args=_without(updated.args, flags))
    return replacements


def _without(nodes, flags: list[bool]) -> list:
    kept = [node for node, drop in zip(nodes, flags) if not drop]
    if kept and len(kept) < len(nodes):
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return kept


def _move(resolver, module: cst.Module, helper: SessionHelper, replacer: _TrackingReplacer) -> cst.Module:
    """Take the rewritten helper out of the module body and define it in its caller, before the
    caller's first statement that calls it (inside the graph-context blocks around that statement,
    where the names of the graph it reads are bound)."""
    rewritten = moved = replacer.results[id(helper.function)]
    caller = replacer.results[id(helper.caller)]
    comments = [line for line in moved.leading_lines if line.comment is not None]
    moved = moved.with_changes(leading_lines=[cst.EmptyLine(indent=False), *comments])
    body = _inserted(resolver, helper, list(helper.caller.body.body), list(caller.body.body), moved, replacer)
    new_caller = caller.with_changes(body=caller.body.with_changes(body=body))
    replacer.origins.add(new_caller, helper.caller)
    replacer.results[id(helper.caller)] = new_caller  # where the next helper that moves goes
    statements = [new_caller if s is caller else s for s in module.body if s is not rewritten]
    return module.with_changes(body=statements)


def _inserted(resolver, helper: SessionHelper, originals: list[cst.BaseStatement], body: list[cst.BaseStatement],
              moved: cst.FunctionDef, replacer: _TrackingReplacer) -> list[cst.BaseStatement]:
    """`body` (the rewritten `originals`) with `moved` before the first statement calling the helper."""
    first = next(s for s in originals if any(n is call for call in helper.calls for n in walk(s)))
    target = replacer.results.get(id(first))
    if target is None or not any(statement is target for statement in body):
        raise Refusal(first, f"'{helper.function.name.value}' cannot be moved before its first call")
    if isinstance(first, cst.With) and isinstance(first.body, cst.IndentedBlock) \
            and all(is_graph_context(resolver, item.item) for item in first.items):
        inner = _inserted(resolver, helper, list(first.body.body), list(target.body.body), moved, replacer)
        block = target.with_changes(body=target.body.with_changes(body=inner))
        replacer.results[id(first)] = block
        return [block if statement is target else statement for statement in body]
    if not any(line.comment is None for line in target.leading_lines):
        spaced = target.with_changes(leading_lines=[cst.EmptyLine(indent=False), *target.leading_lines])
        replacer.results[id(first)] = spaced  # where a helper first called there too goes
    else:
        spaced = target
    placed = []
    for statement in body:
        if statement is target:
            placed += [moved, spaced]
        else:
            placed.append(statement)
    return placed
