"""Writing a read bridge plan: the region becomes `build_graph()`, wrapped once; each run-site signature
a function pruned from it; savers are built after it; sessions disappear."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from itertools import groupby
from pathlib import Path

import libcst as cst

from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import after_blank_lines, insert_definitions, parsed_definitions, with_module_alias
from transforms.common.qualnames import numpy_alias
from transforms.common.syntax import code, load_names, replace_nodes, unwrapped_block
from transforms.graph.bridge.bindings import bound_names
from transforms.graph.bridge.iterators import shared_iterators
from transforms.graph.bridge.plan import Plan
from transforms.graph.bridge.savers import outside_listing
from transforms.graph.bridge.sites import LISTINGS, RunSite, function_name, site_result
from transforms.graph.layers.keras_layers import NameAllocator

HELPERS = ("wrap_tf1_graph", "graph_function", "run_graph", "TF1FileWriter")


@lru_cache(maxsize=1)
def runtime_definitions() -> dict[str, str]:
    """Each helper's definition in runtime.py, by name."""
    module = cst.parse_module(Path(__file__).with_name("runtime.py").read_text(encoding="utf-8"))
    return {statement.name.value: cst.Module(body=[statement]).code for statement in module.body
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef))}


class BridgeWriter:
    def __init__(self, transform, module: cst.Module, plan: Plan, tf: str, freed_names: Iterable[str] = (),
                 devices: Mapping[int, cst.With] | None = None) -> None:
        self.transform = transform
        self.devices = devices or {}  # statement id -> the `with tf.device(...):` block it was built in
        self.module = module
        self.plan = plan
        self.tf = tf
        self.names = NameAllocator({name.value for name in load_names(module, parameters=True)}
                                   | bound_names(module.body))
        for name in freed_names:  # read only by code the rewrite removes
            self.names.release(name)
        self.build_name = self.names.fresh("build_graph")
        self.graph_name = self.names.fresh("graph")
        self.replacements: dict[int, object] = {}
        self.functions: list[tuple[str, RunSite]] = []  # (name, first site) per signature
        self.site_names: list[tuple[cst.Call, str]] = []
        self.region_tail: list[cst.BaseStatement] = []
        self.listings: dict[str, str] = {}
        self.helper_replacements: dict[int, object] = {}  # in functions given the session, wherever they are

    def write(self) -> tuple[cst.Module, list[tuple[cst.Call, str]]]:
        self.helper_replacements.update(shared_iterators(self.transform, self.module, set(), self.tf))
        self.helper_replacements.update({id(line): lambda _: cst.RemovalSentinel.REMOVE
                                         for line in [*self.plan.run_metadata_lines, *self.plan.trace_lines]})
        self._initializers()
        self._listings()
        self._sites()
        self._helpers()
        self._session_uses()
        after_graph = [self._wrap_line(), *self._function_lines(), *self._saver_lines(), *self._writer_lines()]
        layout = self.plan.layout
        body = layout.body
        gone = [*layout.dropped, *self.plan.config_lines]
        pre, comments = _kept(body[:layout.start], gone, lambda statement: [statement])
        rest, _ = _kept(body[layout.region_end:], gone, self._after)
        build = self._build_function(pre)
        build[0] = _with_comments(build[0], comments)
        module = self._with_host_body([*pre, *build, *after_graph, *rest])
        if self.helper_replacements:
            module = replace_nodes(module, self.helper_replacements)
        needed = ["wrap_tf1_graph", "graph_function"] + (["run_graph"] if self.plan.uses.run_graph_sites() else []) \
            + (["TF1FileWriter"] if self.plan.writers else [])
        numpy = numpy_alias(self.module)  # graph_function converts fed values to NumPy arrays, as TF1 did
        if numpy is None:
            numpy = "numpy"
            self.transform.add_import("numpy")
        helpers = [after_blank_lines(with_module_alias(helper, "numpy", numpy))
                   for helper in parsed_definitions([runtime_definitions()[name] for name in needed], self.tf)]
        body = insert_definitions(list(module.body), position_after_imports(list(module.body)), helpers)
        return module.with_changes(body=body), self.site_names

    def _with_host_body(self, statements: list[cst.BaseStatement]) -> cst.Module:
        host, dropped = self.plan.layout.host, self.plan.layout.dropped
        if isinstance(host, cst.Module):
            return host.with_changes(body=statements)
        new_host = host.with_changes(body=host.body.with_changes(body=statements))
        return self.module.with_changes(body=[new_host if statement is host else statement
                                              for statement in self.module.body if statement not in dropped])

    # -- the region ----------------------------------------------------------------------------------

    def _build_function(self, pre: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """`def build_graph():` holding the region, its names declared global (nonlocal in a function,
        bound before it where they are not yet)."""
        moved = {id(writer.statement) for writer in self.plan.writers if writer.statement in self.plan.region}
        region = [statement for statement in self.plan.region
                  if statement not in self.plan.config_lines and id(statement) not in moved]
        statements = self._under_devices(region) + self.region_tail
        statements = [statement.visit(_UnindentedBlankLines()) for statement in statements]
        names = sorted(bound_names(statements))
        layout = self.plan.layout
        declarations = _declarations("nonlocal" if layout.in_function else "global", names)
        comments = statements[0].leading_lines
        statements[0] = statements[0].with_changes(leading_lines=[])
        docstring = cst.SimpleStatementLine([cst.Expr(cst.SimpleString(
            '"""The TF1 graph of this program, built once by wrap_tf1_graph below."""'))])
        function = cst.FunctionDef(cst.Name(self.build_name), cst.Parameters(),
                                   cst.IndentedBlock([docstring, *declarations, *statements]), leading_lines=comments)
        if not layout.in_function:
            return [after_blank_lines(function) if isinstance(layout.host, cst.Module) else function]
        known = bound_names(pre) | _parameters(layout.host)
        bindings = _bindings_to_none([name for name in names if name not in known])
        if not bindings:
            return [function]
        bindings[0] = bindings[0].with_changes(leading_lines=comments)
        return [*bindings, function.with_changes(leading_lines=[cst.EmptyLine(indent=False)])]

    def _under_devices(self, region: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """The region's statements, those built under a `with tf.device(...):` block put back in one."""
        statements: list[cst.BaseStatement] = []
        for device, group in groupby(region, key=lambda statement: self.devices.get(id(statement))):
            rewritten = [self._in_region(statement) for statement in group]
            if device is None:
                statements += rewritten
            else:
                statements.append(cst.With(device.items, cst.IndentedBlock(rewritten)))
        return statements

    def _in_region(self, statement: cst.BaseStatement) -> cst.BaseStatement:
        for saver in self.plan.savers:
            if saver.in_region and saver.statement is statement:
                return saver.listing(self.tf)
        return replace_nodes(statement, self.replacements)

    def _initializers(self) -> None:
        """`sess.run(tf.global_variables_initializer())`: the initializer is made at the end of the graph."""
        made: dict[str, str] = {}
        for call in self.plan.initializer_calls:
            key = code(call)
            if key not in made:
                made[key] = self.names.fresh("initialize_local_variables" if "local" in key else "initialize_variables")
                self.region_tail.append(cst.parse_statement(f"{made[key]} = {key}\n"))
            name = made[key]
            self.replacements[id(call)] = lambda _, name=name: cst.Name(name)

    def _listings(self) -> None:
        """`sess.run(tf.trainable_variables())`: the listing is made at the end of the graph."""
        for call in self.plan.listing_calls:
            name = self._graph_listing(LISTINGS[self.transform.tf_name(call.func)])
            self.replacements[id(call)] = lambda _, name=name: cst.Name(name)

    # -- after the graph -----------------------------------------------------------------------------

    def _wrap_line(self) -> cst.BaseStatement:
        """`graph = wrap_tf1_graph(build_graph)`, under the comments of the session's config lines the graph
        code held (the lines go with the sessions)."""
        line = cst.parse_statement(f"{self.graph_name} = wrap_tf1_graph({self.build_name})\n")
        blank_lines = 2 if isinstance(self.plan.layout.host, cst.Module) else 1
        comments = [line for statement in self.plan.config_lines if statement in self.plan.region
                    for line in statement.leading_lines if line.comment is not None]
        return line.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * blank_lines + comments)

    def _sites(self) -> None:
        by_signature: dict[tuple, str] = {}
        run_graph_sites = {id(site) for site in self.plan.uses.run_graph_sites()}
        self.alternative_names: dict[tuple[int, str], str] = {}
        for site in self.plan.uses.sites:
            if id(site) in run_graph_sites:
                self._keyed_site(site)
                continue
            signature = site.signature()
            if signature not in by_signature:
                by_signature[signature] = function_name(site, self.names)
                self.functions.append((by_signature[signature], site))
            name = by_signature[signature]
            self.site_names.append((site.call, name))
            if site.named_feeds is not None:
                arguments = [cst.Arg(cst.Name(site.named_feeds.written_name), star="*")]
            else:
                arguments = [cst.Arg(element.value) for element in site.feeds]
            self.replacements[id(site.call)] = lambda _, name=name, arguments=arguments, site=site: site_result(
                site, cst.Call(cst.Name(name), arguments))
        self._named_feeds(self.plan.uses.sites, self.replacements)
        for made in {id(site.made_feeds.returned): site.made_feeds for site in self.plan.uses.sites
                     if site.made_feeds is not None}.values():
            self.helper_replacements[id(made.returned)] = made.rewritten

    def _keyed_site(self, site: RunSite) -> None:
        """A run fed a keyed feed dict (feeds.py), or one of alternative runs (uses.alternative_runs):
        what it feeds is known only at the run, or it may never run, so it calls run_graph, where the
        function for each set of fed values is pruned on its first run."""
        name = self.alternative_names.get(site.alternatives) or function_name(site, self.names)
        if site.alternatives is not None:
            self.alternative_names[site.alternatives] = name
        self.site_names.append((site.call, name))
        graph = cst.Name(self.graph_name)
        self.replacements[id(site.call)] = lambda updated: _run_graph_call(
            graph, name, replace(site, fetches=replace_nodes(site.fetches, self.replacements)), updated)

    @staticmethod
    def _named_feeds(sites, replacements: dict[int, object]) -> None:
        """The bindings and stores of the feed dicts `sites` read, rewritten (see feeds.py)."""
        named_feeds = {id(site.named_feeds): site.named_feeds for site in sites if site.named_feeds}
        for named in named_feeds.values():
            for node in named.nodes():
                replacements[id(node)] = lambda _, named=named, node=node: named.rewritten(node)

    def _helpers(self) -> None:
        """A function given the session takes the wrapped graph instead; its runs call run_graph."""
        graph = cst.Name(self.graph_name)
        for helper in self.plan.uses.helpers:
            self.helper_replacements[id(helper.parameter)] = lambda updated: updated.with_changes(name=graph)
            for argument in helper.arguments:
                self.helper_replacements[id(argument)] = lambda updated: updated.with_changes(
                    value=graph, keyword=graph if updated.keyword is not None else None)
            self._named_feeds(helper.sites, self.helper_replacements)
            for assignment in helper.eager_assignments:
                self.helper_replacements[id(assignment.line)] = lambda _, assignment=assignment: assignment.eager_line()
                self.helper_replacements[id(assignment.run_line)] = lambda _: cst.RemovalSentinel.REMOVE
            for site in helper.sites:
                name = function_name(site, self.names)
                self.site_names.append((site.call, name))
                self.helper_replacements[id(site.call)] = lambda _, name=name, site=site: _run_graph_call(
                    graph, name, site)
        self.replacements.update(self.helper_replacements)

    def _function_lines(self) -> list[cst.BaseStatement]:
        lines = []
        for name, site in self.functions:
            fetches = code(replace_nodes(site.fetches, self.replacements))
            feeds = ", ".join(code(key) for key in site.fed_values())
            lines.append(cst.parse_statement(
                f'{name} = graph_function({self.graph_name}, [{feeds}], {fetches}, "{name}")\n'))
        return lines

    def _saver_lines(self) -> list[cst.BaseStatement]:
        lines = []
        for saver in self.plan.savers:
            if saver.in_region:
                construction = saver.construction(saver.variables_name())
                assignment = cst.Assign([cst.AssignTarget(cst.Name(saver.name))], construction)
                lines.append(cst.SimpleStatementLine([assignment]))
            else:
                name = self._graph_listing(outside_listing(self.transform, saver))
                call = saver.construction(name)
                self.replacements[id(saver.call)] = lambda _, call=call: call
        return lines

    def _writer_lines(self) -> list[cst.BaseStatement]:
        """Writers become TF1FileWriter; one made in the region is made after the graph."""
        lines = []
        for writer in self.plan.writers:
            self.replacements[id(writer.call.func)] = lambda _: cst.Name("TF1FileWriter")
            if writer.statement in self.plan.region:
                lines.append(replace_nodes(writer.statement, self.replacements))
        return lines

    def _graph_listing(self, listing: str) -> str:
        """A name for the graph's `global_variables()` / `trainable_variables()`, listed at its end."""
        if listing not in self.listings:
            self.listings[listing] = self.names.fresh(f"{listing}_of_graph")
            self.region_tail.append(cst.parse_statement(f"{self.listings[listing]} = {self.tf}.{listing}()\n"))
        return self.listings[listing]

    def _session_uses(self) -> None:
        uses = self.plan.uses
        for line in uses.closes:
            self.replacements[id(line)] = lambda _: cst.RemovalSentinel.REMOVE
        for argument in uses.saver_arguments:
            self.replacements[id(argument)] = lambda updated: updated.with_changes(value=cst.Name("None"))
        for assignment in uses.assignments:
            self.replacements[id(assignment.line)] = lambda _, assignment=assignment: assignment.eager_line()
        for read in uses.graph_reads:
            self.replacements[id(read)] = lambda _: cst.Attribute(cst.Name(self.graph_name), cst.Name("graph"))

    def _after(self, statement: cst.BaseStatement) -> list[cst.BaseStatement]:
        """A statement after the graph: a session block unwrapped, a session line dropped."""
        for session in self.plan.layout.sessions:
            if session.statement is statement:
                if session.block is None:
                    return []
                kept = [s for s in statement.body.body if s not in self.plan.layout.hoisted]
                rewritten = replace_nodes(statement.with_changes(body=statement.body.with_changes(body=kept)),
                                          self.replacements)
                return list(unwrapped_block(rewritten).nodes)
        if statement in self.plan.uses.closes or statement in self.plan.layout.hoisted:
            return []
        return [replace_nodes(statement, self.replacements)]


def _kept(statements: list[cst.BaseStatement], gone: list[cst.BaseStatement],
          rewrite) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
    """`rewrite(statement)` of each statement not in `gone`, the comments above a removed statement kept
    above the next one written; and the comments left over at the end."""
    kept, comments = [], []
    for statement in statements:
        if statement in gone:
            comments += [line for line in statement.leading_lines if line.comment is not None]
            continue
        written = rewrite(statement)
        if written:
            written[0] = _with_comments(written[0], comments)
            comments = []
        kept += written
    return kept, comments


def _with_comments(statement: cst.BaseStatement, comments: list[cst.EmptyLine]) -> cst.BaseStatement:
    return statement.with_changes(leading_lines=[*comments, *statement.leading_lines]) if comments else statement


class _UnindentedBlankLines(cst.CSTTransformer):
    """Blank lines of code moved into a function stay empty (no indentation whitespace)."""

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine:
        return updated_node.with_changes(indent=False) if updated_node.comment is None else updated_node


def _declarations(keyword: str, names: list[str]) -> list[cst.SimpleStatementLine]:
    """`global a, b, ...` lines (or nonlocal) of at most about 100 characters each."""
    node = cst.Global if keyword == "global" else cst.Nonlocal
    return [cst.SimpleStatementLine([node([cst.NameItem(cst.Name(name)) for name in chunk])])
            for chunk in _chunks(names, 100 - len(keyword) - 5)]


def _bindings_to_none(names: list[str]) -> list[cst.SimpleStatementLine]:
    """`a = b = None` lines: names build_graph() binds, so that it can declare them nonlocal."""
    return [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name)) for name in chunk],
                                                cst.Name("None"))])
            for chunk in _chunks(names, 90)]


def _chunks(names: list[str], width: int) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    for name in names:
        if chunks[-1] and sum(len(n) + 3 for n in chunks[-1]) + len(name) > width:
            chunks.append([])
        chunks[-1].append(name)
    return [chunk for chunk in chunks if chunk]


def _parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {param.name.value for param in every}


def _run_graph_call(graph: cst.Name, name: str, site, updated: cst.Call | None = None) -> cst.Call:
    """`run_graph(graph, "name", fetches, [keys], [values])`, or `run_graph(graph, "name", fetches, feed)`
    for a keyed feed dict or one a function makes (`updated`: the run as rewritten, whose feed dict
    that function's call is), for a run whose fetches or fed values are known only when it runs."""
    arguments = [cst.Arg(graph), cst.Arg(cst.SimpleString(f'"{name}"')), cst.Arg(site.fetches)]
    named = site.named_feeds
    if site.made_feeds is not None:
        arguments.append(cst.Arg(_feed_dict_argument(updated)))
    elif named is not None and named.keyed:
        arguments.append(cst.Arg(cst.Name(named.name)))
    elif named is not None:
        arguments += [cst.Arg(cst.List([cst.Element(key) for key in named.keys])), cst.Arg(cst.Name(named.written_name))]
    elif site.feeds:
        arguments += [cst.Arg(cst.List([cst.Element(element.key) for element in site.feeds])),
                      cst.Arg(cst.List([cst.Element(element.value) for element in site.feeds]))]
    return cst.Call(cst.Name("run_graph"), arguments)


def _feed_dict_argument(run: cst.Call) -> cst.BaseExpression:
    """The feed dict a `sess.run(fetches, feed_dict)` call passes."""
    return next(arg.value for index, arg in enumerate(run.args)
                if (arg.keyword is None and index == 1) or (arg.keyword and arg.keyword.value == "feed_dict"))
