"""TFM204: a feed dict completed after its literal -> the whole dict written in its run (a run per branch).

    feed = {x: batch}                      if multi_label:
    if multi_label:                            loss = sess.run(op, feed_dict={x: batch, y_multi: labels})
        feed[y_multi] = labels          ->     else:
    else:                                      loss = sess.run(op, feed_dict={x: batch, y: labels})
        feed[y] = labels
    loss = sess.run(op, feed_dict=feed)

    feed = {x: batch}
    feed[y] = labels                    ->     loss = sess.run(op, feed_dict={x: batch, y: labels})
    loss = sess.run(op, feed_dict=feed)

A dict that gains keys after it is bound feeds what is known only at the run: TFM203 keeps it a dict
keyed by `.ref()`s and prunes a function per set of fed values there (run_graph), and TFM201 refuses
it. Written into its run, or into the run written in each branch of the `if` completing it, each
run feeds one dict literal: a run site like any other, with fixed arguments. The program computes the
same thing; it is still TF1 code, which TFM201 / TFM203 then convert.

Rewritten only where that is provably so:
- the binding (`name = {...}`), the stores completing it (`name[key] = value`, straight, then
  optionally in the branches of one `if`) and the run are consecutive statements;
- every branch of the `if` only stores keys; no store repeats a key the dict already has; a missing
  `else` runs the dict as it was before the `if`;
- the run is one simple statement reading the name once, as the feed dict of a `.run()` / `.eval()`;
- the name is used nowhere else in its scope (functions defined in it included);
- evaluating the condition before the dict's values, and a store's key before its value, changes
  nothing: one side of each pair makes no calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from transforms.base import TFTransform
from transforms.common.syntax import code, load_names, only_small_statement, replace_nodes, walk
from transforms.graph.analysis.conditional import branch_bodies, branch_tests

# Nodes whose evaluation may run code of the program: what may not move past other such code.
_RUNS_CODE = (cst.Call, cst.NamedExpr, cst.Await, cst.Yield, cst.ListComp, cst.SetComp, cst.DictComp,
              cst.GeneratorExp)


@dataclass
class CompletedFeeds:
    """A feed dict's binding, the statements completing it and the run reading it (module docstring)."""
    name: str
    binding: cst.SimpleStatementLine
    stores: list[cst.SimpleStatementLine]  # the straight `name[key] = value` lines
    branches: cst.If | None  # the `if` whose branches store more keys
    run: cst.SimpleStatementLine
    read: cst.Name  # the run's read of the dict

    def statements(self) -> list[cst.BaseStatement]:
        return [self.binding, *self.stores, *([self.branches] if self.branches else []), self.run]

    def place(self) -> cst.BaseStatement:
        """The statement whose place the rewritten code takes: the `if`, else the run."""
        return self.branches or self.run

    def names(self) -> set[int]:
        """The Name nodes of the dict in these statements."""
        return {id(node) for statement in self.statements() for node in load_names(statement)
                if node.value == self.name}

    def literal(self) -> cst.Dict:
        """The dict as bound and completed by the straight stores."""
        bound = only_small_statement(self.binding).value
        return _with_elements(bound, [_element(only_small_statement(store)) for store in self.stores])


class InlineCompletedFeeds(TFTransform):
    CODE = "TFM204"
    DESCRIPTION = "Feed dicts completed after their literal (`feed[y] = labels`, straight or in the branches of an " \
                  "if) -> the whole dict written in the run, one run per branch: each run feeds fixed values"
    SAFETY = "safe"
    PHASE = 17  # before TFM201 and TFM203 read the run sites
    TRIGGERS = (".run(", ".eval(")

    METADATA_DEPENDENCIES = (PositionProvider,)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        found = [found for block in _statement_blocks(original) for found in _completed_feeds(block)]
        usable = _sole_uses_of_their_names(found, original)
        if not usable:
            return updated
        replacements = {}
        for each in usable:
            written, runs = _inlined(each)
            for run in runs:
                self.moved_from(run, each.run)
            for statement in each.statements():
                replacements[id(statement)] = lambda _: cst.RemovalSentinel.REMOVE
            replacements[id(each.place())] = lambda _, written=written: written
            self.report(each.binding, self._message(each), fixed=True)
        return replace_nodes(original, replacements)

    def _message(self, found: CompletedFeeds) -> str:
        line = self.get_metadata(PositionProvider, found.run).start.line
        if found.branches is None:
            return f"the feed dict `{found.name}`, completed after its literal, written whole in its run at line {line}"
        return (f"the feed dict `{found.name}`, completed in the branches of an `if`: its run at line {line} written "
                "in each branch, fed the whole dict")


def _statement_blocks(module: cst.Module):
    """Every sequence of statements in the module: its body and each indented block's."""
    yield module.body
    for node in walk(module):
        if isinstance(node, cst.IndentedBlock):
            yield node.body


def _completed_feeds(statements) -> list[CompletedFeeds]:
    found = []
    for index, binding in enumerate(statements):
        name = _dict_binding(binding)
        if name is None:
            continue
        end = index + 1
        while end < len(statements) and _store(statements[end], name) is not None:
            end += 1
        stores = list(statements[index + 1:end])
        branches = statements[end] if end < len(statements) and isinstance(statements[end], cst.If) else None
        if branches is not None:
            end += 1
        run = statements[end] if end < len(statements) else None
        read = _fed_read(run, name) if run is not None else None
        if read is None or not (stores or branches):
            continue
        candidate = CompletedFeeds(name, binding, stores, branches, run, read)
        if _order_free(candidate):
            found.append(candidate)
    return found


def _dict_binding(statement: cst.BaseStatement) -> str | None:
    """`name` of `name = {key: value, ...}`, a dict literal without `**` spreads."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Dict)):
        return None
    if not all(isinstance(element, cst.DictElement) for element in small.value.elements):
        return None
    return small.targets[0].target.value


def _store(statement: cst.BaseStatement, name: str) -> cst.Assign | None:
    """`name[key] = value`, alone on its line, reading `name` nowhere else."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target = small.targets[0].target
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name
            and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)
            and target.slice[0].slice.star is None):
        return None
    if _reads(small.value, name) or _reads(_store_key(small), name):
        return None
    return small


def _store_key(store: cst.Assign) -> cst.BaseExpression:
    return store.targets[0].target.slice[0].slice.value


def _element(store: cst.Assign) -> cst.DictElement:
    return cst.DictElement(_store_key(store), store.value)


def _fed_read(statement: cst.BaseStatement, name: str) -> cst.Name | None:
    """The one read of `name` in a simple statement, where it is the feed dict of a `.run()` or
    `.eval()` call; None otherwise."""
    small = only_small_statement(statement)
    reads = [node for node in load_names(small) if node.value == name] if small is not None else []
    if len(reads) != 1:
        return None
    for call in (node for node in walk(small) if isinstance(node, cst.Call)):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("run", "eval"):
            position = 1 if call.func.attr.value == "run" else 0
            for index, arg in enumerate(call.args):
                is_feed = arg.keyword.value == "feed_dict" if arg.keyword else index == position and not arg.star
                if is_feed and arg.value is reads[0]:
                    return reads[0]
    return None


def _order_free(found: CompletedFeeds) -> bool:
    """Whether the stores add new keys only, and computing the dict in one literal, after the
    condition, evaluates what the statements evaluated to the same values (module docstring)."""
    literal = found.literal()
    keys = [code(element.key) for element in literal.elements]
    if len(set(keys)) != len(keys) or _reads(literal, found.name):
        return False
    if any(_runs_code(_store_key(store)) and _runs_code(store.value)
           for store in map(only_small_statement, found.stores)):
        return False
    if found.branches is None:
        return True
    tests = branch_tests(found.branches)
    if any(_reads(test, found.name) for test in tests):
        return False
    if _runs_code(literal) and any(_runs_code(test) for test in tests):
        return False
    bodies = branch_bodies(found.branches)
    if not all(isinstance(body, cst.IndentedBlock) for body in bodies):  # a one-line branch (`if x: feed[y] = 1`)
        return False
    for body in bodies:
        stores = [_store(statement, found.name) for statement in body.body if not _is_pass(statement)]
        if any(store is None for store in stores):
            return False
        branch_keys = [code(_store_key(store)) for store in stores]
        if len(set(keys + branch_keys)) != len(keys) + len(branch_keys):
            return False
        if any(_runs_code(_store_key(store)) and _runs_code(store.value) for store in stores):
            return False
    return True


def _is_pass(statement: cst.BaseStatement) -> bool:
    return isinstance(only_small_statement(statement), cst.Pass)


def _reads(node: cst.CSTNode, name: str) -> bool:
    return any(found.value == name for found in load_names(node))


def _runs_code(node: cst.CSTNode) -> bool:
    return any(isinstance(child, _RUNS_CODE) for child in walk(node))


def _sole_uses_of_their_names(found: list[CompletedFeeds], module: cst.Module) -> list[CompletedFeeds]:
    """Those of `found` whose dict's name means nothing else in its scope (functions defined in it
    included) than the dicts of such statements."""
    by_scope: dict[tuple[int, str], list[CompletedFeeds]] = {}
    scopes = {}
    for each in found:
        scope = _scope_of(each.binding, module)
        scopes[id(scope)] = scope
        by_scope.setdefault((id(scope), each.name), []).append(each)
    usable = []
    for (scope_id, name), group in by_scope.items():
        scope = scopes[scope_id]
        declared = any(isinstance(node, (cst.Global, cst.Nonlocal)) and name in {item.name.value for item in node.names}
                       for node in walk(scope))
        uses = {id(node) for node in load_names(scope, parameters=True) if node.value == name}
        if not declared and uses == set().union(*(each.names() for each in group)):
            usable.extend(group)
    return usable


def _scope_of(statement: cst.CSTNode, module: cst.Module) -> cst.CSTNode:
    """The innermost function holding `statement`, else the module."""
    functions = [node for node in walk(module) if isinstance(node, cst.FunctionDef)
                 and any(child is statement for child in walk(node.body))]
    return functions[-1] if functions else module  # walked outer first


def _inlined(found: CompletedFeeds) -> tuple[cst.BaseStatement, list[cst.SimpleStatementLine]]:
    """The statement standing for all of `found`'s (the run, or the `if` with a run in each branch),
    under the comments of those it replaces; and the runs it holds."""
    comments = [line for statement in [found.binding, *found.stores]
                for line in [*statement.leading_lines, *_trailing_comment(statement)]]
    literal = found.literal()
    if found.branches is None:
        run = _run_fed(found, literal, [])
        return run.with_changes(leading_lines=[*comments, *run.leading_lines]), [run]
    runs: list[cst.SimpleStatementLine] = []
    written = _with_runs(found.branches, found, literal, runs)
    return written.with_changes(leading_lines=[*comments, *found.branches.leading_lines]), runs


def _with_runs(branch: cst.If | cst.Else | None, found: CompletedFeeds, literal: cst.Dict, runs: list):
    """`branch` (and the branches after it) with its stores replaced by the run fed the whole dict."""
    if branch is None:
        runs.append(_run_fed(found, literal, []))
        return cst.Else(body=cst.IndentedBlock(body=[runs[-1]]))
    statements = list(branch.body.body)
    stores = [only_small_statement(statement) for statement in statements if not _is_pass(statement)]
    comments = [line for statement in statements for line in [*statement.leading_lines, *_trailing_comment(statement)]]
    runs.append(_run_fed(found, literal, stores).with_changes(leading_lines=[*comments, *found.run.leading_lines]))
    written = branch.with_changes(body=branch.body.with_changes(body=[runs[-1]]))
    if isinstance(branch, cst.If):
        written = written.with_changes(orelse=_with_runs(branch.orelse, found, literal, runs))
    return written


def _run_fed(found: CompletedFeeds, literal: cst.Dict, stores: list[cst.Assign]) -> cst.SimpleStatementLine:
    """The run statement fed `literal` with `stores`' keys added."""
    fed = _with_elements(literal, [_element(store) for store in stores])
    return replace_nodes(found.run, {id(found.read): lambda _: fed})


def _with_elements(bound: cst.Dict, added: list[cst.DictElement]) -> cst.Dict:
    """`bound` with `added` after its elements, in its layout (one per line stays one per line, a
    trailing comma stays trailing)."""
    if not added:
        return bound
    elements = list(bound.elements)
    between = elements[0].comma if len(elements) > 1 else cst.MaybeSentinel.DEFAULT
    if not isinstance(between, cst.Comma):
        between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = elements[-1].comma if elements else cst.MaybeSentinel.DEFAULT
    if elements:
        elements[-1] = elements[-1].with_changes(comma=between)
    added = [element.with_changes(comma=between) for element in added[:-1]] + [added[-1].with_changes(comma=last)]
    return bound.with_changes(elements=[*elements, *added])


def _trailing_comment(statement: cst.SimpleStatementLine) -> list[cst.EmptyLine]:
    """A statement's end-of-line comment, as a line of its own."""
    comment = statement.trailing_whitespace.comment
    return [cst.EmptyLine(comment=comment)] if comment is not None else []
