"""Every use of a wrapped program's sessions, sorted into what the bridge rewrites: run sites, savers
given the session, `sess.graph` given to a summary writer, `sess.close()` lines. Any other use refuses
the wrap."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ParentNodeProvider

from transforms.common.syntax import Refusal, bind_arguments, code, shortened, walk
from transforms.graph.analysis.conditional import branch_bodies
from transforms.graph.bridge.assignments import Assignment, run_assignment
from transforms.graph.bridge.feeds import NamedFeedReader, read_elsewhere
from transforms.graph.bridge.helpers import HelperReader, SessionHelper
from transforms.graph.bridge.region import Session
from transforms.graph.bridge.sites import (GLOBAL_STEP_READ, RUN_SIGNATURE, GraphValues, RunSite, read_eval_call,
                                          read_global_step_call, read_run_call)
from transforms.graph.bridge.writers import Writer

SAVER_METHODS = frozenset({"save", "restore"})


@dataclass
class SessionUses:
    sites: list[RunSite] = field(default_factory=list)
    closes: list[cst.BaseStatement] = field(default_factory=list)  # `sess.close()` lines
    saver_arguments: list[cst.Arg] = field(default_factory=list)  # the session given to save / restore
    graph_reads: list[cst.Attribute] = field(default_factory=list)  # `sess.graph` given to a summary writer
    helpers: list[SessionHelper] = field(default_factory=list)  # functions of the program given the session
    assignments: list[Assignment] = field(default_factory=list)  # `sess.run(tf.assign(...))` lines

    def run_graph_sites(self) -> list:
        """The sites whose fetches or fed values are known only at the run (a keyed feed dict's, a
        helper's), or that one branch of an `if` runs instead of another (alternative_runs): they
        call run_graph."""
        keyed = [site for site in self.sites if site.made_feeds is not None or site.alternatives
                 or site.named_feeds is not None and site.named_feeds.keyed]
        return keyed + [site for helper in self.helpers for site in helper.sites]


def alternative_runs(scope: cst.CSTNode, sites: list[RunSite]) -> dict[int, tuple[int, str]]:
    """The sites whose fetches another site runs in another branch of the same `if` (`if multi_label:
    sess.run(loss, {x: batch, y_multi: labels}) else: sess.run(loss, {x: batch, y: labels})`), by id:
    a key they share with those of the others that are the same call but for what it feeds (one run
    of the program, fed per case: TFM204 writes such runs).

    Each branch feeds what its case needs, and a graph built for one case may not use the other's
    placeholders: a function pruned at the start for the branch that never runs would fail where TF1,
    which checks a run's feeds when it runs, did not. Such sites are pruned on their first run."""
    found = {}
    for chain in (node for node in walk(scope) if isinstance(node, cst.If)):
        branches = [_sites_under(branch, sites) for branch in branch_bodies(chain)]
        for index, branch in enumerate(branches):
            others = {code(site.fetches) for other in branches[:index] + branches[index + 1:] for site in other}
            found.update((id(site), (id(chain), _call_but_feeds(site))) for site in branch
                         if code(site.fetches) in others and id(site) not in found)
    return found


def _call_but_feeds(site: RunSite) -> str:
    """The site's call as written, without its feed dict."""
    def is_feeds(arg: cst.Arg) -> bool:
        return (arg.keyword is not None and arg.keyword.value == "feed_dict") or isinstance(arg.value, cst.Dict) \
            or arg.value is site.feeds_read
    return code(site.call.with_changes(args=[arg for arg in site.call.args if not is_feeds(arg)]))


def _sites_under(body: cst.BaseSuite, sites: list[RunSite]) -> list[RunSite]:
    calls = {id(node) for node in walk(body) if isinstance(node, cst.Call)}
    return [site for site in sites if id(site.call) in calls]


class UseReader:
    def __init__(self, transform, module: cst.Module, scope: cst.CSTNode, sessions: list[Session], savers: set[str],
                 values: GraphValues, writers: list[Writer]) -> None:
        self.transform = transform
        self.scope = scope  # where the sessions' names are read: their function, else the module
        self.sessions = sessions
        self.savers = savers
        self.values = values
        self.writer_calls = {id(writer.call) for writer in writers}
        self.writer_names = {writer.name for writer in writers if writer.name}
        self.uses = SessionUses()
        self.seen_calls: set[int] = set()
        self.named_feeds = NamedFeedReader(scope, values.check, module)
        self.helper_reader = HelperReader(transform, module, scope, {session.name for session in sessions})

    def parent(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.transform.get_metadata(ParentNodeProvider, node)

    def read(self) -> SessionUses:
        names = {session.name for session in self.sessions}
        bindings = {id(node) for session in self.sessions for node in walk(self._binding(session))}
        reads = [node for node in walk(self.scope) if isinstance(node, cst.Name) and node.value in names
                 and id(node) not in bindings and not self._is_attribute_name(node)]
        read_by_helpers = self._read_helper_calls(reads)
        for node in reads:
            if id(node) not in read_by_helpers:
                self._read_use(node)
        self._read_default_session_evals()
        self._check_named_feeds()
        alternatives = alternative_runs(self.scope, self.uses.sites)
        for site in self.uses.sites:
            site.alternatives = alternatives.get(id(site))
        return self.uses

    def _check_named_feeds(self) -> None:
        """A feed dict bound to a name becomes a tuple: the name must be read by run sites only."""
        read = read_elsewhere(self.named_feeds, self.uses.sites)
        if read is not None:
            raise Refusal(read, f"the feed dict `{read.value}` is used by "
                                f"`{shortened(self._statement_code(read))}`, not only fed to a run")

    def _binding(self, session: Session) -> cst.CSTNode:
        block = session.block
        return block.items[0].asname if block is not None else session.statement.body[0].targets[0]

    def _is_attribute_name(self, node: cst.Name) -> bool:
        parent = self.parent(node)
        return (isinstance(parent, cst.Attribute) and parent.attr is node) or \
            (isinstance(parent, cst.Arg) and parent.keyword is node)

    def _read_use(self, node: cst.Name) -> None:
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = self.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                if parent.attr.value == "run":
                    if (assignment := self._run_assignment(call)) is not None:
                        self.uses.assignments.append(assignment)
                    else:
                        self._add_site(read_run_call(call, self.values, self.named_feeds))
                    return
                if parent.attr.value == "close" and (line := self._close_line(call)) is not None:
                    self.uses.closes.append(line)
                    return
            if parent.attr.value == "graph" and self._is_given_to_writer(parent):
                self.uses.graph_reads.append(parent)
                return
        if isinstance(parent, cst.Arg):
            call = self.parent(parent)
            if self._is_saver_call(call, parent):
                self.uses.saver_arguments.append(parent)
                return
            if self._is_eval_call(call) and parent.keyword is not None and parent.keyword.value == "session":
                self._add_site(read_eval_call(call, call.func.value, self.values, self.named_feeds))
                return
            if isinstance(call, cst.Call) and self.transform.tf_name(call.func) == GLOBAL_STEP_READ \
                    and (site := read_global_step_call(call, parent, self.values)) is not None:
                self._add_site(site)
                return
        raise Refusal(node, f"the session is used by `{shortened(self._statement_code(node))}`, "
                            "not only to run the graph")

    def _read_helper_calls(self, reads: list[cst.Name]) -> set[int]:
        """The session given to functions of the program: the ids of those reads, and of the reads of
        the helpers' own parameters of the session's name (theirs, not the session's)."""
        handled = set()
        for node in reads:
            argument = self.parent(node)
            call = self.parent(argument) if isinstance(argument, cst.Arg) and argument.value is node else None
            helper = self.helper_reader.helper_for(argument, call) if isinstance(call, cst.Call) else None
            if helper is None:
                continue
            handled.add(id(node))
            if all(known is not helper for known in self.uses.helpers):
                self.uses.helpers.append(helper)
                parameter = helper.parameter.name.value
                handled |= {id(name) for name in walk(helper.function) if isinstance(name, cst.Name)
                            and name.value == parameter}
        return handled

    def _is_given_to_writer(self, attribute: cst.Attribute) -> bool:
        """`tf.summary.FileWriter(logdir, sess.graph)` or `writer.add_graph(sess.graph)`."""
        argument = self.parent(attribute)
        call = self.parent(argument) if isinstance(argument, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return False
        func = call.func
        return id(call) in self.writer_calls or (
            isinstance(func, cst.Attribute) and func.attr.value == "add_graph"
            and isinstance(func.value, cst.Name) and func.value.value in self.writer_names)

    def _run_assignment(self, call: cst.Call) -> Assignment | None:
        """`sess.run(tf.assign(variable, value))` on a line of its own, run eagerly (assignments.py)."""
        bound = bind_arguments(call, RUN_SIGNATURE, "Session.run")
        expression = self.parent(call)
        if set(bound) != {"fetches"} or not isinstance(expression, cst.Expr):
            return None
        assignment = run_assignment(self.transform, self.parent(expression), bound["fetches"], self.values.names)
        if assignment is not None:
            self.values.check(assignment.variable, "assigned variable")
        return assignment

    def _add_site(self, site: RunSite) -> None:
        self.seen_calls.add(id(site.call))
        self.uses.sites.append(site)

    def _close_line(self, call: cst.Call) -> cst.BaseStatement | None:
        expression = self.parent(call)
        line = self.parent(expression) if isinstance(expression, cst.Expr) else None
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and not call.args:
            return line
        return None

    def _is_saver_call(self, call: cst.CSTNode, argument: cst.Arg) -> bool:
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return False
        receiver = call.func.value
        positional_first = argument.keyword is None and call.args and call.args[0] is argument
        by_keyword = argument.keyword is not None and argument.keyword.value == "sess"
        return call.func.attr.value in SAVER_METHODS and isinstance(receiver, cst.Name) \
            and receiver.value in self.savers and (positional_first or by_keyword)

    @staticmethod
    def _is_eval_call(call: cst.CSTNode) -> bool:
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
            and call.func.attr.value in ("eval", "run")

    def _read_default_session_evals(self) -> None:
        """`tensor.eval()` / `op.run()` where a session is the default one."""
        interactive = any(session.interactive for session in self.sessions)
        blocks = [session.block for session in self.sessions if session.block is not None]
        scopes = [self.scope] if interactive else blocks
        for scope in scopes:
            for node in walk(scope):
                if self._is_eval_call(node) and id(node) not in self.seen_calls \
                        and not any(arg.keyword and arg.keyword.value == "session" for arg in node.args):
                    self._read_default_eval(node)

    def _read_default_eval(self, call: cst.Call) -> None:
        receiver = call.func.value
        try:
            self.values.check(receiver, "evaluated value")
        except Refusal:
            if call.func.attr.value == "eval" and any(self.transform.tf_names(n) for n in walk(receiver)):
                raise
            return  # not a graph value: some other object's run() / eval()
        self._add_site(read_eval_call(call, receiver, self.values, self.named_feeds))

    def _statement_code(self, node: cst.CSTNode) -> str:
        while not isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Module)):
            node = self.parent(node)
        if isinstance(node, cst.BaseCompoundStatement):
            return code(node).splitlines()[0]
        return code(node)
