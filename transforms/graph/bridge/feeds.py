"""Feed dicts bound to a name before the run: `feed = {x: batch}` ... `sess.run(op, feed_dict=feed)`.

TF2 tensors are unhashable, so a dict keyed by them cannot be built outside the graph any more. When
the name is bound only to dict literals keyed by the same graph values and read only as the feed dict
of run sites, each binding becomes the tuple of its values, in the key order of the first one, and each
run site calls its function with them unpacked: `feed = (batch,)` ... `run_op(*feed)`. The values are
computed where the dict was, as before. A name that says it holds a dict says what it holds now:
`feed_dict` becomes `feed_values` (a fresh name).

A dict that also gains keys after it is bound (`feed[y] = labels`, often in one branch of an `if`, or
`feed[c] = state.c` for each part of an RNN state), or whose bindings feed different values, is
*keyed*: what it feeds is known only at the run. It stays a dict, keyed by the fed values' `.ref()`s
(`{x.ref(): batch}`, `feed[y.ref()] = labels`), and its run sites call `run_graph`, which prunes one
function per set of fed values. The keys it gains need not be named by the graph code: any graph
tensor found at the run will do.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.syntax import (Refusal, calls_under, code, fresh_name, load_names, only_small_statement,
                                      shortened, walk, walk_outside_functions)
from transforms.graph.bridge.bindings import bound_names, mentions
from transforms.graph.structure.feed_functions import returned_feed_dict

NOT_WRITTEN = "is not written at the run (a dict keyed by graph tensors cannot be built outside the graph: " \
              "TF2 tensors are unhashable)"


@dataclass
class NamedFeeds:
    name: str
    keys: list[cst.BaseExpression]  # the fed graph values, in the order of the first binding
    bindings: list[cst.Dict]  # every dict literal bound to the name
    reads: list[cst.Name]  # every read of the name: each one a run site's feed dict
    stores: list[cst.Subscript]  # every `name[key] = ...` target
    keyed: bool  # what it feeds is known only at the run (see the module docstring)
    targets: list[cst.Name]  # the name where each binding binds it
    written_name: str = ""  # the name the rewrite gives it (see the module docstring)

    def as_tuple(self, binding: cst.Dict) -> cst.Tuple:
        """`{x: a, y: b}` as `(a, b)`, its values in the order of `keys`, its layout kept."""
        by_key = {code(element.key): element.value for element in binding.elements}
        values = [by_key[code(key)] for key in self.keys]
        elements = [cst.Element(value, comma=slot.comma) for value, slot in zip(values, binding.elements)]
        if len(elements) == 1 and not isinstance(elements[0].comma, cst.Comma):
            elements[0] = elements[0].with_changes(comma=cst.Comma())  # (a,): a tuple of one
        return cst.Tuple(elements, lpar=[cst.LeftParen(whitespace_after=binding.lbrace.whitespace_after)],
                         rpar=[cst.RightParen(whitespace_before=binding.rbrace.whitespace_before)])

    def rewritten(self, node: cst.CSTNode) -> cst.CSTNode:
        """A binding or a store as it reads after the rewrite (see the module docstring)."""
        if isinstance(node, cst.Name):
            return node.with_changes(value=self.written_name)
        if isinstance(node, cst.Subscript):
            index = node.slice[0].slice
            return node.with_changes(slice=[node.slice[0].with_changes(slice=index.with_changes(
                value=_ref(index.value)))])
        if self.keyed:
            return node.with_changes(elements=[element.with_changes(key=_ref(element.key))
                                               for element in node.elements])
        return self.as_tuple(node)

    def nodes(self) -> list[cst.CSTNode]:
        """The bindings, stores and (when it is renamed) binding names the rewrite changes."""
        return [*self.bindings, *self.stores, *(self.targets if self.written_name != self.name else ())]


class NamedFeedReader:
    """Reads, once per name, the bindings and reads of the feed dicts run sites name."""

    def __init__(self, scope: cst.CSTNode, check_key, module: cst.Module | None = None) -> None:
        self.scope = scope
        self.module = module  # where functions making feed dicts are looked up (made_feeds)
        self.check_key = check_key  # GraphValues.check for a fed value
        self.read_names: dict[tuple[int, str], NamedFeeds] = {}  # by (id of the name's scope, name)

    def __call__(self, name: cst.Name) -> NamedFeeds:
        scope = self._scope_of(name)
        key = (id(scope), name.value)
        if key not in self.read_names:
            self.read_names[key] = self._read(name, scope)
        return self.read_names[key]

    def _scope_of(self, name: cst.Name) -> cst.CSTNode:
        """Where the feed dict `name` reads is bound: the innermost function defined in the scope that
        holds the read and binds the name itself (a closure over the session, such as a
        `train_step(x_batch, y_batch)` making its own `feed_dict`), else the scope (a closure reading
        the scope's dict)."""
        enclosing = [function.body for function in walk(self.scope) if isinstance(function, cst.FunctionDef)
                     and function is not self.scope and any(node is name for node in walk(function.body))]
        for body in reversed(enclosing):  # walked outer first
            if name.value in bound_names(body.body):
                return body
        return self.scope

    def _read(self, name: cst.Name, scope: cst.CSTNode) -> NamedFeeds:
        refusal = f"the feed dict `{name.value}` {NOT_WRITTEN}"
        bindings, stores, targets = self._bindings(name.value, scope)
        if not bindings:
            raise Refusal(name, refusal)
        for binding in bindings:
            if not all(isinstance(element, cst.DictElement) for element in binding.elements) or not binding.elements:
                raise Refusal(binding, refusal)
            for element in binding.elements:
                self.check_key(element.key, "fed value")
        keys = [element.key for element in bindings[0].elements]
        key_codes = sorted(code(key) for key in keys)
        if len(set(key_codes)) != len(key_codes):
            raise Refusal(name, f"{refusal}; it feeds one value twice")
        keyed = bool(stores) or any(sorted(code(element.key) for element in binding.elements) != key_codes
                                    for binding in bindings)
        for binding in bindings[1:] if not keyed else ():
            if [code(element.key) for element in binding.elements] != [code(key) for key in keys] \
                    and any(next(calls_under(element.value), None) is not None for element in binding.elements):
                raise Refusal(binding, f"{refusal}; its bindings list the fed values in different orders, and "
                                       "computing them in one order would change the order of their calls")
        in_scope = {id(node) for node in walk_outside_functions(scope)}  # a function's names are its own
        reads = [node for node in load_names(scope)
                 if node.value == name.value and id(node) in in_scope and id(node) not in targets]
        binding_targets = [node for node in walk_outside_functions(scope)
                           if isinstance(node, cst.Name) and id(node) in targets and node.value == name.value]
        return NamedFeeds(name.value, keys, bindings, reads, stores, keyed, binding_targets,
                          self._written_name(name.value, keyed))

    def _written_name(self, name: str, keyed: bool) -> str:
        """`feed_dict` -> `feed_values` for a dict that becomes a tuple; any other name as it is."""
        if keyed or "dict" not in name:
            return name
        taken = {node.value for node in load_names(self.module or self.scope, parameters=True)}
        return fresh_name(name.replace("dict", "values"), taken)

    @staticmethod
    def _bindings(name: str, scope: cst.CSTNode) -> tuple[list[cst.Dict], list[cst.Subscript], set[int]]:
        """The dict literals `name = {...}` binds in `scope`, the targets `name[key] = ...` stores
        to, and the nodes naming it in those targets."""
        bindings, stores, targets = [], [], set()
        for node in walk_outside_functions(scope):
            small = only_small_statement(node) if isinstance(node, cst.SimpleStatementLine) else None
            if isinstance(small, cst.Assign) and any(mentions(target.target, name) for target in small.targets):
                target = small.targets[0].target if len(small.targets) == 1 else None
                if isinstance(target, cst.Name) and isinstance(small.value, cst.Dict):
                    bindings.append(small.value)
                elif _is_store(target, name):
                    stores.append(target)
                    target = target.value
                else:
                    raise Refusal(small, f"the feed dict `{name}` is bound or changed by `{shortened(code(node))}` "
                                         f"and {NOT_WRITTEN}")
                targets.add(id(target))
        return bindings, stores, targets


def _is_store(target: cst.BaseExpression | None, name: str) -> bool:
    """`name[key]`, one key, as an assignment's target."""
    return isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name \
        and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index) \
        and target.slice[0].slice.star is None and not mentions(target.slice[0].slice.value, name)


def _ref(key: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(key, cst.Name("ref")))


def read_elsewhere(reader: NamedFeedReader, sites) -> cst.Name | None:
    """The first read of a feed dict `reader` read that is not the feed dict of one of `sites` (whose
    `feeds_read` is the name each reads): such a dict cannot become a tuple."""
    at_sites = {id(site.feeds_read) for site in sites if site.feeds_read is not None}
    reads = (read for named in reader.read_names.values() for read in named.reads)
    return next((read for read in reads if id(read) not in at_sites), None)


@dataclass
class MadeFeeds:
    """A feed dict a function of the program makes (`feed_dict(train)`, the TensorBoard tutorial's):
    keyed like a keyed named dict, since what it feeds is known only at the run. The dict literal the
    function returns is keyed by the fed values' `.ref()`s; the run calls run_graph with the call."""
    call: cst.Call
    returned: cst.Dict

    def rewritten(self, node: cst.Dict) -> cst.Dict:
        return node.with_changes(elements=[element.with_changes(key=_ref(element.key)) for element in node.elements])


def made_feeds(feed_dict: cst.BaseExpression, module: cst.Module, check_key) -> MadeFeeds | None:
    """`feed_dict(False)` given as a run's feed dict, where `feed_dict` is a function of the program
    returning a dict literal of fed values (structure/feed_functions.py's shape) that nothing but runs'
    feed dicts call (its dict's keys become `.ref()`s); None for anything else."""
    if not (isinstance(feed_dict, cst.Call) and isinstance(feed_dict.func, cst.Name)):
        return None
    name = feed_dict.func.value
    functions = [node for node in walk(module) if isinstance(node, cst.FunctionDef) and node.name.value == name]
    returned = returned_feed_dict(functions[0]) if len(functions) == 1 else None
    if returned is None or _uses(module, name) != _feeding_calls(module, name):
        return None
    for element in returned.elements:
        check_key(element.key, "fed value")
    return MadeFeeds(feed_dict, returned)


def _uses(module: cst.Module, name: str) -> int:
    defined = {id(node.name) for node in walk(module) if isinstance(node, cst.FunctionDef)}
    return sum(1 for node in load_names(module) if node.value == name and id(node) not in defined)


def _feeding_calls(module: cst.Module, name: str) -> int:
    """How many calls of `name` are the feed dict of a `.run(fetches, feed_dict)` call."""
    count = 0
    for call in calls_under(module):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "run":
            feeds = [arg.value for index, arg in enumerate(call.args)
                     if (arg.keyword is None and index == 1) or (arg.keyword and arg.keyword.value == "feed_dict")]
            count += sum(1 for feed in feeds if isinstance(feed, cst.Call) and isinstance(feed.func, cst.Name)
                         and feed.func.value == name)
    return count
