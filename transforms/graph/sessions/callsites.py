"""Rewrite the run sites into calls of the step functions, and keep their results usable as NumPy.

`sess.run` returned NumPy values; a `tf.function` returns tensors. Results are converted where the
program uses them: a name bound to a fetched tensor gets `.numpy()` at each place it is read (not at
`float(name)` / `int(name)`, which tensors support as they are), the way TF2 code reads results. When
a name may also hold something else (it is bound elsewhere too), or a read may write into the array
or share it (result_reads.py), the result is converted once right where it is bound instead; results
used inside an expression are converted in place. No per-step work is added beyond the function call
itself and the conversions the program's own uses need."""
from __future__ import annotations

import functools
from collections.abc import Callable

import libcst as cst

from transforms.graph.writing.plan import StepFunction
from transforms.graph.sessions.result_reads import ResultReads
from transforms.graph.sessions.results import fetched_item, in_place_conversion
from transforms.graph.sessions.runs import VALUES, RunSite
from transforms.common.syntax import Refusal, code, statement, walk


class CallSiteRewriter:
    def __init__(self, resolver) -> None:
        self.resolver = resolver  # parent(node), assignments_of(name_node), references
        self.replacements: dict[int, Callable] = {}
        self.tensor_targets: set[int] = set()
        self.result_reads = ResultReads(resolver)
        self.bound_feed_values: dict[int, str] = {}  # id of a feed dict's value -> the name it is bound to

    def rewrite(self, functions: list[StepFunction], init_sites: list[RunSite], closes: list[cst.Call],
                feed_dicts: list[cst.Assign], fresh: Callable[[str], str]) -> None:
        for assign in feed_dicts:
            line = self.resolver.parent(assign)
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
                raise Refusal(assign, "a feed dict built on a line with other statements")
            self.replacements[id(line)] = self._feed_dict_line(assign, fresh)
        for site in init_sites:
            self._remove_statement(site.call, "initialising variables")
        for call in closes:
            self._remove_statement(call, "closing the session")
        contexts = [(site, function) for function in functions for site in function.sites]
        for site, _ in contexts:
            self.tensor_targets |= self._tensor_target_ids(site)
        for site, function in contexts:
            self._rewrite_site(site, function)
            self._keep_dropped_feeds(site, function)

    def _feed_dict_line(self, assign: cst.Assign, fresh: Callable[[str], str]) -> Callable:
        """What replaces `feed = {x: value, ...}`. Its values are written into the calls that use it,
        except values that call something (`rng.rand(8, 2)`, `data.next_batch(32)[0]`): TF1 evaluated
        them once, there, however many runs used the dict (or none used the value), so each is bound
        to a name of its own there and the calls read that name."""
        target = assign.targets[0].target.value
        bound = []
        for element in assign.value.elements:
            if _calls_something(element.value):
                name = fresh(f"{target}_{element.key.value}")
                self.bound_feed_values[id(element.value)] = name
                bound.append(f"{name} = {code(element.value)}\n")
        if not bound:
            return lambda _: cst.RemovalSentinel.REMOVE
        return lambda updated: cst.FlattenSentinel([
            cst.parse_statement(line).with_changes(leading_lines=updated.leading_lines if index == 0 else [])
            for index, line in enumerate(bound)])

    def choose_returns(self, functions: list[StepFunction]) -> None:
        """Each function returns its fetch less the operations in it (`return loss`, not
        `return [None, loss]`) when every run site can do without their places: the run's value is
        discarded, or unpacked with `_` (or a name never read) where the operations were."""
        for function in functions:
            fetch = function.sites[0].fetch
            compact = fetch.without_operations()
            ignored = all(self._ignores_operations(site) for site in function.sites)
            if function.effects and not ignored:
                raise Refusal(function.sites[0].call, f"the run's values of {', '.join(sorted(function.effects))} "
                                                      "are read: the step function could give them only as its "
                                                      "update leaves them, not as assigned")
            if compact is not fetch and ignored:
                function.returns = compact

    def _ignores_operations(self, site: RunSite) -> bool:
        if isinstance(self.resolver.parent(site.call), cst.Expr):
            return True
        _, pairs = self._targets(site)
        return len(pairs) > 1 and all(self._never_read(name) for name, leaf in pairs if leaf.shape == "op")

    def _never_read(self, name: cst.Name) -> bool:
        return name.value == "_" or not any(a.references for a in self.resolver.assignments_of(name))

    def _remove_statement(self, call: cst.Call, what: str) -> None:
        parent = self.resolver.parent(call)
        if not isinstance(parent, cst.Expr):
            raise Refusal(call, f"the result of {what} is used")
        self.replacements[id(self.resolver.parent(parent))] = lambda _: cst.RemovalSentinel.REMOVE

    def _targets(self, site: RunSite) -> tuple[cst.Assign | None, list]:
        """The assignment whose whole value is the run, and its target names paired with fetch leaves."""
        parent = self.resolver.parent(site.call)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return None, []
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return parent, [(target, site.fetch)]
        sequence = site.fetch.shape in ("list", "tuple")
        if isinstance(target, (cst.Tuple, cst.List)) and sequence and len(target.elements) == len(site.fetch.children) \
                and all(isinstance(e.value, cst.Name) for e in target.elements):
            return parent, [(e.value, leaf) for e, leaf in zip(target.elements, site.fetch.children)]
        return parent, []

    def _tensor_target_ids(self, site: RunSite) -> set[int]:
        _, pairs = self._targets(site)
        return {id(name) for name, leaf in pairs if leaf.shape in VALUES}

    def _rewrite_site(self, site: RunSite, function: StepFunction) -> None:
        assign, pairs = self._targets(site)
        make_call = _call_maker(site, function, self.bound_feed_values)
        if function.returns is not None and assign is not None:
            self._unpack_values_only(assign, pairs)
        if len(pairs) == 1 and pairs[0][1].children and self._convert_item_uses(*pairs[0]):
            self.replacements[id(site.call)] = make_call
            return
        if assign is None or not pairs or (len(pairs) == 1 and _structured(pairs[0][1])):
            discarded = isinstance(self.resolver.parent(site.call), cst.Expr)  # nothing to convert for
            conversion = None if discarded else in_place_conversion(site.fetch, site.call)
            if conversion is None or (
                    site.fetch.shape in VALUES and self._is_float_or_int_argument(site.call)):
                self.replacements[id(site.call)] = make_call
            else:
                self.replacements[id(site.call)] = lambda updated: cst.parse_expression(
                    conversion.format(code(make_call(updated))))
            return
        later = []
        for name, leaf in pairs:
            if leaf.shape == "op" or name.value == "_":
                continue
            if leaf.shape in VALUES and not self._convert_uses(name):
                later.append(f"{name.value} = {name.value}.numpy()")
            elif leaf.shape == "tensors" or (leaf.children and not self._convert_item_uses(name, leaf)):
                later.append(f"{name.value} = " + in_place_conversion(leaf, site.call).format(name.value))
        if len(pairs) == 1 and later:
            self.replacements[id(site.call)] = lambda updated: cst.parse_expression(
                f"{code(make_call(updated))}.numpy()")
            return
        self.replacements[id(site.call)] = make_call
        if later:
            line = self.resolver.parent(assign)
            self.replacements[id(line)] = lambda updated: cst.FlattenSentinel(
                [updated] + [statement(line) for line in later])

    def _keep_dropped_feeds(self, site: RunSite, function: StepFunction) -> None:
        """TF1 evaluated every value of an inline feed dict, also those fed to placeholders the run
        does not need, which the step function does not take. A dropped value that calls something
        (`sample_z(n, dim)`, `next_batch(n)`: a random stream, a data cursor) is still evaluated, as a
        statement of its own, in the dict's order relative to the arguments that call something:
        before the run's line when it came before them, after it when it came after them (the step
        function itself runs no Python). Dropped calls fed between two such arguments cannot keep
        their place and are left out, as before."""
        calls = [(name, _calls_something(value))
                 for name, value in site.feed_values.items() if site.feeds.get(name) is not None]
        kept_calls = [index for index, (name, calls_something) in enumerate(calls)
                      if calls_something and name in function.args]
        before, after = [], []
        for index, (name, calls_something) in enumerate(calls):
            if not calls_something or name in function.args:
                continue
            if not kept_calls or index < kept_calls[0]:
                before.append(name)
            elif index > kept_calls[-1]:
                after.append(name)
        line = self.resolver.parent(site.call)
        while line is not None and not isinstance(line, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            line = self.resolver.parent(line)
        if not (before or after) or not isinstance(line, cst.SimpleStatementLine):
            return
        earlier = self.replacements.get(id(line))
        evaluate = functools.partial(_evaluation, site=site, function=function)

        def with_evaluations(updated: cst.SimpleStatementLine):
            result = earlier(updated) if earlier else updated
            rest = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
            statements = [*map(evaluate, before), rest[0].with_changes(leading_lines=[]), *rest[1:],
                          *map(evaluate, after)]
            statements[0] = statements[0].with_changes(leading_lines=rest[0].leading_lines)
            return cst.FlattenSentinel(statements)
        self.replacements[id(line)] = with_evaluations

    def _unpack_values_only(self, assign: cst.Assign, pairs: list) -> None:
        """`_, loss_value = ...` -> `loss_value = ...`: the targets of what the function returns."""
        kept = [name for name, leaf in pairs if leaf.shape != "op"]
        target = assign.targets[0].target
        if len(kept) == 1:
            self.replacements[id(target)] = lambda _: kept[0]
        else:
            elements = [element for element, (_, leaf) in zip(target.elements, pairs) if leaf.shape != "op"]
            last = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            self.replacements[id(target)] = lambda updated: updated.with_changes(elements=[*elements[:-1], last])

    def _convert_uses(self, name: cst.Name) -> bool:
        """Append `.numpy()` where the name is read, when it only ever holds fetched tensors."""
        assignments = self.resolver.assignments_of(name)
        if not assignments or any(id(a.node) not in self.tensor_targets for a in assignments):
            return False
        reads = [access.node for assignment in assignments for access in assignment.references]
        if not all(map(self._reads_only, reads)):
            return False
        for read in reads:
            if not self._is_float_or_int_argument(read):
                self.replacements[id(read)] = lambda updated: cst.Call(cst.Attribute(updated, cst.Name("numpy")))
        return True

    def _convert_item_uses(self, name: cst.Name, fetch) -> bool:
        """`results = sess.run({"loss": loss, ...})` read only as `results["loss"]`: convert each item."""
        assignments = self.resolver.assignments_of(name)
        if len(assignments) != 1 or assignments[0].node is not name:
            return False
        keys = [code(key) for key in fetch.keys] if fetch.shape == "dict" else None
        conversions = {}
        for access in assignments[0].references:
            subscript = self.resolver.parent(access.node)
            leaf = fetched_item(subscript, fetch, keys) if isinstance(subscript, cst.Subscript) else None
            if leaf is None or not self._reads_only(subscript):
                return False
            if leaf.shape in VALUES and not self._is_float_or_int_argument(subscript):
                conversions[id(subscript)] = lambda updated: cst.Call(cst.Attribute(updated, cst.Name("numpy")))
        self.replacements.update(conversions)
        return True

    def _reads_only(self, read: cst.CSTNode) -> bool:
        return self.result_reads.reads_only(read)

    def _is_float_or_int_argument(self, node: cst.BaseExpression) -> bool:
        arg = self.resolver.parent(node)
        call = self.resolver.parent(arg) if isinstance(arg, cst.Arg) else None
        return (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
                and call.func.value in ("float", "int") and len(call.args) == 1)


def _structured(fetch) -> bool:
    """Whether sess.run gave a structure of values for `fetch` (a list, tuple or dict; a list of tensors)."""
    return bool(fetch.children) or fetch.shape == "tensors"


def _calls_something(value: cst.BaseExpression) -> bool:
    """Whether evaluating a fed value calls something (a random draw, a data cursor): TF1 did it once."""
    return any(isinstance(node, cst.Call) for node in walk(value))


def _evaluation(name: str, site: RunSite, function: StepFunction) -> cst.SimpleStatementLine:
    return cst.parse_statement(f"{code(site.feed_values[name])}  # fed to {name}, which {function.name} "
                               "does not read: evaluated as TF1 evaluated it\n")


def _call_maker(site: RunSite, function: StepFunction,
                bound_values: dict[int, str]) -> Callable[[cst.Call], cst.BaseExpression]:
    def make(updated: cst.Call) -> cst.BaseExpression:
        arguments = []
        for name in function.args:
            if name not in site.feeds:
                continue  # a placeholder_with_default left to its default
            if site.feeds[name] is None:  # from a feed dict bound to a name
                value = site.feed_values[name]
                value = bound_values.get(id(value)) or code(value)
            else:
                position, index = site.feeds[name]
                value = code(updated.args[position].value.elements[index].value)
            arguments.append(f"{name}={value}" if name in function.defaults else value)
        return cst.parse_expression(f"{function.name}({', '.join(arguments)})")
    return make

