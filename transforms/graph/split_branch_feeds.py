"""TFM204: a feed dict completed in the branches of an `if` -> its run written in each branch.

    feed = {x: batch}                      if multi_label:
    if multi_label:                            loss = sess.run(op, feed_dict={x: batch, y_multi: labels})
        feed[y_multi] = labels          ->     else:
    else:                                      loss = sess.run(op, feed_dict={x: batch, y: labels})
        feed[y] = labels
    loss = sess.run(op, feed_dict=feed)

What such a run feeds is known only when it runs, so it cannot become one function with fixed
arguments: TFM203 prunes a function per set of fed values at the run (run_graph), and TFM201 refuses
it. Written in each branch, each run feeds one dict literal, a run site like any other, and the dict's
name is gone. The program computes the same thing; still TF1 code, which TFM201 / TFM203 then convert.

Rewritten only where that is provably so:
- the binding (`name = {...}`), the `if` and the run are consecutive statements;
- every branch of the `if` only stores keys into the dict (`name[key] = value`), none a key the
  literal or the branch already has; a missing `else` runs the dict as it was bound;
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

# Nodes whose evaluation may run code of the program: what may not move past other such code.
_RUNS_CODE = (cst.Call, cst.NamedExpr, cst.Await, cst.Yield, cst.ListComp, cst.SetComp, cst.DictComp,
              cst.GeneratorExp)


@dataclass
class BranchFeeds:
    """A binding, the `if` completing it and the run reading it (see the module docstring)."""
    name: str
    binding: cst.SimpleStatementLine
    branches: cst.If
    run: cst.SimpleStatementLine
    read: cst.Name  # the run's read of the dict

    def names(self) -> set[int]:
        """The Name nodes of the dict in these three statements."""
        return {id(node) for statement in (self.binding, self.branches, self.run)
                for node in load_names(statement) if node.value == self.name}


class SplitBranchFeeds(TFTransform):
    CODE = "TFM204"
    DESCRIPTION = "Feed dicts completed in the branches of an if (`feed[y] = labels`) -> the run written in each " \
                  "branch with the whole dict, so each run feeds fixed values"
    SAFETY = "safe"
    PHASE = 17  # before TFM201 and TFM203 read the run sites
    TRIGGERS = (".run(", ".eval(")

    METADATA_DEPENDENCIES = (PositionProvider,)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        found = [found for block in _statement_blocks(original) for found in _branch_feeds(block)]
        usable = _sole_uses_of_their_names(found, original)
        if not usable:
            return updated
        replacements = {}
        for each in usable:
            split, runs = _split(each)
            for run in runs:
                self.moved_from(run, each.run)
            replacements[id(each.binding)] = lambda _: cst.RemovalSentinel.REMOVE
            replacements[id(each.run)] = lambda _: cst.RemovalSentinel.REMOVE
            replacements[id(each.branches)] = lambda _, split=split: split
            self.report(each.branches, f"the feed dict `{each.name}` completed in the branches of this `if` -> the "
                        f"run at line {self._line(each.run)} written in each branch with the whole dict", fixed=True)
        return replace_nodes(original, replacements)

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line


def _statement_blocks(module: cst.Module):
    """Every sequence of statements in the module: its body and each indented block's."""
    yield module.body
    for node in walk(module):
        if isinstance(node, cst.IndentedBlock):
            yield node.body


def _branch_feeds(statements) -> list[BranchFeeds]:
    found = []
    for binding, branches, run in zip(statements, statements[1:], statements[2:]):
        name = _dict_binding(binding)
        if name is None or not isinstance(branches, cst.If):
            continue
        read = _fed_read(run, name)
        if read is not None and _completes(branches, binding, name):
            found.append(BranchFeeds(name, binding, branches, run, read))
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


def _branch_bodies(branches: cst.If) -> list[list[cst.BaseStatement] | None]:
    """The statements of each branch, in order; None for a missing final `else`."""
    bodies, current = [], branches
    while isinstance(current, cst.If):
        bodies.append(list(current.body.body))
        current = current.orelse
    bodies.append(list(current.body.body) if isinstance(current, cst.Else) else None)
    return bodies


def _store(statement: cst.BaseStatement, name: str) -> cst.Assign | None:
    """`name[key] = value`, alone on its line."""
    small = only_small_statement(statement)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target = small.targets[0].target
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name
            and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)
            and target.slice[0].slice.star is None):
        return None
    return small


def _store_key(store: cst.Assign) -> cst.BaseExpression:
    return store.targets[0].target.slice[0].slice.value


def _completes(branches: cst.If, binding: cst.SimpleStatementLine, name: str) -> bool:
    """Whether every branch only stores new keys into the dict, in an order-free way (module docstring)."""
    if not isinstance(branches.body, cst.IndentedBlock):
        return False
    bound = only_small_statement(binding).value
    bound_keys = {code(element.key) for element in bound.elements}
    values_run_code = any(_runs_code(part) for element in bound.elements for part in (element.key, element.value))
    tests = []
    current = branches
    while isinstance(current, cst.If):
        tests.append(current.test)
        current = current.orelse
    if values_run_code and any(_runs_code(test) for test in tests):
        return False
    if any(_reads(part, name) for part in (bound, *tests)):
        return False
    for body in _branch_bodies(branches):
        keys = set(bound_keys)
        for statement in body or ():
            if isinstance(only_small_statement(statement), cst.Pass):
                continue
            store = _store(statement, name)
            if store is None or code(_store_key(store)) in keys:
                return False
            if _runs_code(_store_key(store)) and _runs_code(store.value):
                return False
            if _reads(store.value, name) or _reads(_store_key(store), name):
                return False
            keys.add(code(_store_key(store)))
    return True


def _reads(node: cst.CSTNode, name: str) -> bool:
    return any(found.value == name for found in load_names(node))


def _runs_code(node: cst.CSTNode) -> bool:
    return any(isinstance(child, _RUNS_CODE) for child in walk(node))


def _sole_uses_of_their_names(found: list[BranchFeeds], module: cst.Module) -> list[BranchFeeds]:
    """Those of `found` whose dict's name means nothing else in its scope (functions defined in it
    included) than the dicts of such statements."""
    by_scope: dict[tuple[int, str], list[BranchFeeds]] = {}
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


def _split(found: BranchFeeds) -> tuple[cst.If, list[cst.SimpleStatementLine]]:
    """The `if` with the run, fed the whole dict, in each of its branches; and those runs."""
    bound = only_small_statement(found.binding).value
    comments = [*found.binding.leading_lines, *_trailing_comment(found.binding)]
    runs: list[cst.SimpleStatementLine] = []
    split = _split_branch(found.branches, found, bound, runs)
    return split.with_changes(leading_lines=[*comments, *found.branches.leading_lines]), runs


def _split_branch(branch: cst.If | cst.Else | None, found: BranchFeeds, bound: cst.Dict, runs: list):
    if branch is None:
        runs.append(_run_fed(found, bound, []))
        return cst.Else(body=cst.IndentedBlock(body=[runs[-1]]))
    statements = list(branch.body.body)
    stores = [only_small_statement(statement) for statement in statements
              if not isinstance(only_small_statement(statement), cst.Pass)]
    comments = [line for statement in statements
                for line in [*statement.leading_lines, *_trailing_comment(statement)]]
    runs.append(_run_fed(found, bound, stores).with_changes(leading_lines=[*comments, *found.run.leading_lines]))
    split = branch.with_changes(body=branch.body.with_changes(body=[runs[-1]]))
    if isinstance(branch, cst.If):
        split = split.with_changes(orelse=_split_branch(branch.orelse, found, bound, runs))
    return split


def _run_fed(found: BranchFeeds, bound: cst.Dict, stores: list[cst.Assign]) -> cst.SimpleStatementLine:
    """The run statement fed the bound dict with `stores`' keys added."""
    fed = _with_elements(bound, [cst.DictElement(_store_key(store), store.value) for store in stores])
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
