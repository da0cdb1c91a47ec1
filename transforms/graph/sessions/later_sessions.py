"""Sessions opened one after another over the same graph: train in one, then test, or restore a
checkpoint and predict, in a fresh one.

Every new TF1 session starts with all variables uninitialised; TF2's variables are Python objects that
live on. A later session converts where it first gives the variables their values again in a way TF2
repeats exactly:

- a run of the global variables initializer before the session's other runs: every variable gets
  back the value it was created with, copied once right after the program created its variables.
  TF1 re-ran the initializer ops in the new session, which draws those same values again when the
  graph has a random seed (a new session restarts each op's random stream); without a seed TF1 drew
  new random initial values (said in a finding).
- `saver.restore(sess, path)` before the session's runs: the checkpoint restore it becomes
  (transforms/graph/outputs/checkpoints.py).

Refused, with the reason: a later session that runs something reading state before either (TF1
would read uninitialised variables), or after only a restore reads a variable or trains an optimizer
the checkpoint does not hold; a session opened inside another's block; an earlier session used after
a later one is opened (each holds its own values); session runs inside functions (which session runs
them is not known); a re-initialisation when the program has Keras layer or tf.Module variables (not
copied) or trains afterwards (the optimizer's slots and step count would not start over); tf.data
iterators or input queues (they start over in every session).
"""
from __future__ import annotations

from bisect import bisect_right

import libcst as cst

from transforms.graph.analysis.model import Kind
from transforms.graph.training.metrics import is_local_initializer, local_initializer_names
from transforms.common.syntax import Refusal, code, statement, walk

_RESTARTING_STATE = (Kind.ITERATOR, Kind.QUEUE)
_NEVER = float("inf")
REINITIALISED = ("variables initialised again in a new session -> each assigned the value it was created with "
                 "(what TF1 computes when the graph has a random seed; without one TF1 drew new random "
                 "initial values here)")


def session_starts(sessions, resolver) -> list[int]:
    """The first line of each session, in source order; refuses sessions that overlap."""
    ordered = sorted(sessions, key=lambda pair: resolver.line(pair[0]))
    if len(ordered) < 2:
        return [resolver.line(call) for call, _ in ordered]
    holders = {id(holder) for _, holder in ordered if isinstance(holder, cst.With)}
    for call, _ in ordered:
        if not _in_graph_block(call, resolver):
            raise Refusal(call, "sessions are opened in several functions, each over a graph of its own "
                                "(one graph per file is converted)")
        if resolver.inside_function(call):
            raise Refusal(call, "a session opened inside a function, beside other sessions")
        if _inside_any(call, holders, resolver):
            raise Refusal(call, "a session opened inside another session's `with` block")
    starts = [resolver.line(call) for call, _ in ordered]
    _check_current_session_used(resolver, starts, [_bound_name(call, resolver) for call, _ in ordered])
    return starts


def session_index(node: cst.CSTNode, starts: list[int], resolver) -> int:
    """Which session (0 the first) is open where `node` is; -1 before any."""
    return bisect_right(starts, resolver.line(node)) - 1


def reopening_initialisations(block, sites, starts: list[int], resolver) -> list:
    """Global-initializer runs that begin a later session: no other run of that session before them."""
    if len(starts) < 2:
        return []
    first_runs = _first_lines([site.call for site in sites if not site.is_init], starts, resolver)
    local_names = local_initializer_names(block, resolver)
    reopening = []
    for site in sites:
        session = session_index(site.call, starts, resolver)
        if not site.is_init or session < 1 or resolver.line(site.call) > first_runs.get(session, _NEVER):
            continue
        locals_reset = [is_local_initializer(leaf.node, local_names, resolver) for leaf in site.fetch.leaves()]
        if any(locals_reset) and not all(locals_reset):
            raise Refusal(site.call, "a later session initialises global and local variables in one run")
        if not any(locals_reset):
            reopening.append(site)
    return reopening


def check_later_sessions(functions, reopening, checkpoints, starts: list[int], block, resolver) -> None:
    """Each later session gives the variables values (initializer or restore) before reading them."""
    if len(starts) < 2:
        return
    restarting = sorted({kind.value for kind in block.kinds.values() if kind in _RESTARTING_STATE})
    if restarting:
        raise Refusal(None, f"several sessions with a {' / '.join(restarting)}, which starts over in every session")
    states = _SessionStates(reopening, checkpoints, starts, block, resolver)
    for function in functions:
        for site in function.sites:
            states.check(site, function)


class _SessionStates:
    """Where each later session first initialises its variables and first restores them."""

    def __init__(self, reopening, checkpoints, starts: list[int], block, resolver) -> None:
        self.starts, self.block, self.resolver = starts, block, resolver
        self.initialised = _first_lines([site.call for site in reopening], starts, resolver)
        self.restored = _first_lines([call.call for call in checkpoints.calls if call.method == "restore"], starts,
                                     resolver)
        self.saved = set(checkpoints.saver.objects) if checkpoints.saver else set()

    def check(self, site, function) -> None:
        if self.resolver.inside_function(site.call):
            raise Refusal(site.call, "a session run inside a function, in a program that opens several sessions")
        session, line = session_index(site.call, self.starts, self.resolver), self.resolver.line(site.call)
        if session < 1 or not (function.state or function.train_op):
            return
        initialised, restored = self.initialised.get(session, _NEVER), self.restored.get(session, _NEVER)
        if min(initialised, restored) > line:
            raise Refusal(site.call, f"session {session + 1} runs this before initialising or restoring the "
                                     "variables (TF1 would read them uninitialised)")
        if initialised < line and not initialised < restored < line:
            if function.train_op:
                raise Refusal(site.call, "training in a session that initialised the variables again: the "
                                         "optimizer's slots and step count would not start over")
            return
        self._check_restored(site, function, session, initialised < line)

    def _check_restored(self, site, function, session: int, initialised_before: bool) -> None:
        """The checkpoint restored last holds what the run reads (and the optimizer, when it trains)."""
        unsaved = [] if initialised_before else [
            f"'{name}'" for name in function.state
            if name not in self.saved and self.block.kind(name) in (Kind.VARIABLE, Kind.VARIABLE_DICT)]
        if function.train_op and function.train_op.optimizer not in self.saved:
            unsaved.append(f"the slots of {function.train_op.optimizer}")
        if unsaved:
            raise Refusal(site.call, f"session {session + 1} reads {', '.join(unsaved)}, which the restored "
                                     "checkpoint does not hold (TF1 would have it uninitialised, or reset by the "
                                     "initializer)")


def reinitialisation_code(block, scanner, sites, names) -> tuple[int, cst.BaseStatement, cst.BaseStatement]:
    """(item index, statement, loop): the statement copies every variable's initial value right after
    the last variable is created (before that item index); the loop assigns the copies back."""
    if block.layer_objects or scanner.module_helpers:
        raise Refusal(None, "initialising Keras layer or tf.Module variables again in a later session is not "
                            "modelled")
    variables = [(item.index, name, item.kind) for item in block.items
                 if item.kind in (Kind.VARIABLE, Kind.VARIABLE_DICT) for name in item.defines]
    after = max((index for index, _, _ in variables), default=-1) + 1
    earlier_runs = [site for site in sites if not site.is_init and site.item_index < after]
    if earlier_runs:
        raise Refusal(earlier_runs[0].call, "variables are created after this run, so their initial values are "
                                            "not known when a later session initialises them again")
    listed = ", ".join(name if kind is Kind.VARIABLE else f"*{name}.values()" for _, name, kind in variables)
    copies, variable, value = names.fresh("initial_values"), names.fresh("variable"), names.fresh("initial_value")
    copying = statement(f"{copies} = [({variable}, tf.identity({variable})) for {variable} in [{listed}]]")
    loop = statement(f"for {variable}, {value} in {copies}:\n    {variable}.assign({value})")
    return after, copying, loop


def reinitialisation_replacements(reopening, loop: cst.BaseStatement, resolver) -> dict:
    """Each reopening initializer run -> the loop assigning every variable its initial value."""
    replacements = {}
    for site in reopening:
        expression = resolver.parent(site.call)
        line = resolver.parent(expression)
        if not (isinstance(expression, cst.Expr) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            raise Refusal(site.call, "the result of initialising variables in a later session is used")
        replacements[id(line)] = lambda updated: cst.FlattenSentinel(
            [loop.with_changes(leading_lines=updated.leading_lines)])
    return replacements


def _first_lines(nodes, starts: list[int], resolver) -> dict[int, int]:
    """Session index -> the first line among `nodes` in that session."""
    first: dict[int, int] = {}
    for node in nodes:
        session, line = session_index(node, starts, resolver), resolver.line(node)
        first[session] = min(first.get(session, line), line)
    return first


def _in_graph_block(node: cst.CSTNode, resolver) -> bool:
    current = resolver.parent(node)
    while current is not None and current is not resolver.owner:
        current = resolver.parent(current)
    return current is not None


def _inside_any(node: cst.CSTNode, holders: set[int], resolver) -> bool:
    current = resolver.parent(node)
    while current is not None:
        if id(current) in holders and isinstance(current, cst.With) and not _is_header_of(node, current):
            return True
        current = resolver.parent(current)
    return False


def _is_header_of(node: cst.CSTNode, with_statement: cst.With) -> bool:
    return any(node is item.item for item in with_statement.items)


def _bound_name(call: cst.Call, resolver) -> str | None:
    holder = resolver.parent(call)
    target = holder.asname.name if isinstance(holder, cst.WithItem) and holder.asname else (
        holder.targets[0].target if isinstance(holder, cst.Assign) else None)
    return target.value if isinstance(target, cst.Name) else None


def _check_current_session_used(resolver, starts: list[int], names: list[str | None]) -> None:
    """Every use of a session name is of the session opened last before it."""
    for node in walk(resolver.module):
        if not (isinstance(node, cst.Name) and id(node) in resolver.session_targets):
            continue
        for assignment in resolver.assignments_of(node):
            for access in assignment.references:
                session = session_index(access.node, starts, resolver)
                if resolver.inside_function(access.node):
                    raise Refusal(access.node, "a session used inside a function, in a program that opens "
                                               "several sessions")
                if session >= 0 and names[session] != access.node.value:
                    raise Refusal(access.node, f"the session '{code(access.node)}' is used after a later session "
                                               "was opened (each session holds its own variable values)")
