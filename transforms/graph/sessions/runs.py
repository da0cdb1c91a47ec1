"""Session run sites: `sess.run(fetches, feed_dict)`, `tensor.eval(feed_dict)`, `op.run(feed_dict)`.

Each is read into its fetch structure (a tree of tensors and operations, shaped like the list / tuple /
dict the program passed) and its feeds (placeholder -> fed value). Feeding anything but a placeholder,
fetching Python values or run options are refused."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.analysis.exprs import ExprAnalyzer
from transforms.graph.analysis.model import Kind
from transforms.common.syntax import Refusal, bind_arguments, code, is_literal

_TENSOR_READS = (Kind.TENSOR, Kind.PLACEHOLDER, Kind.VARIABLE, Kind.VARIABLE_DICT)


# Leaf shapes whose run gives a value (a tensor in the step function, NumPy from sess.run).
VALUES = ("tensor", "loss")

@dataclass
class Fetch:
    """A node of the fetch structure: 'tensor' / 'tensors' / 'summary' / 'op' / 'loss' / 'init' leaves,
    'list' / 'tuple' / 'dict' nodes. A 'tensors' leaf is a graph name holding a list of tensors
    (`grads = tf.gradients(loss, tvars)`); a 'summary' leaf is a dict {tag: tensor} in TF2
    (transforms/graph/outputs/summaries.py); a 'loss' leaf is a train op whose run gives its loss
    (slim's create_train_op)."""

    shape: str
    node: cst.BaseExpression
    children: list[Fetch] = field(default_factory=list)
    keys: list[cst.BaseExpression] = field(default_factory=list)

    def leaves(self) -> list[Fetch]:
        if not self.children:
            return [self] if self.shape in ("tensor", "tensors", "summary", "op", "loss", "init") else []
        return [leaf for child in self.children for leaf in child.leaves()]

    def without_operations(self) -> Fetch:
        """This fetch as a step function returns it when its callers do not need sess.run's shape:
        a list or tuple less the operations fetched for their effect (sess.run gave None for them),
        a single remaining value bare. Other fetches are returned as they are."""
        kept = [child for child in self.children if child.shape != "op"]
        if self.shape not in ("list", "tuple") or len(kept) == len(self.children):
            return self
        if len(kept) == 1:
            return kept[0]
        return Fetch(self.shape, self.node, kept) if kept else Fetch("op", self.node)


@dataclass
class RunSite:
    call: cst.Call
    item_index: int
    fetch: Fetch
    fetch_code: str
    feeds: dict[str, tuple[int, int] | None]   # placeholder -> (argument, dict element) of an inline dict
    feed_values: dict[str, cst.BaseExpression]
    named_feed: cst.Name | None = None            # `feed_dict=feed`, a dict built by an earlier statement
    reads: set[str] = field(default_factory=set)  # block names the fetched tensors read
    python_reads: set[str] = field(default_factory=set)  # plain Python names fetch expressions read
    train_ops: list[str] = field(default_factory=list)

    @property
    def is_init(self) -> bool:
        leaves = self.fetch.leaves()
        return bool(leaves) and all(leaf.shape == "init" for leaf in leaves)


def read_run_site(analyzer: ExprAnalyzer, item_index: int, call: cst.Call, feed_dicts: dict) -> RunSite:
    """`feed_dicts`: the `feed = {...}` assignments, by the id of their target name."""
    receiver, method = call.func.value, call.func.attr.value
    if analyzer.is_session(receiver):
        bound = bind_arguments(call, ["fetches", "feed_dict", "options", "run_metadata"], "Session.run")
        if "options" in bound or "run_metadata" in bound:
            raise Refusal(call, "Session.run options / run_metadata are not modelled")
        if "fetches" not in bound:
            raise Refusal(call, "Session.run without fetches")
        fetch_node, feed_position = bound["fetches"], _position(call, "feed_dict", 1)
    else:
        bound = bind_arguments(call, ["feed_dict", "session"], f".{method}()")
        session = bound.get("session")
        if session is not None and not analyzer.is_session(session):
            raise Refusal(session, "run with a session that is not this program's")
        fetch_node, feed_position = receiver, _position(call, "feed_dict", 0)
    fetch = _read_fetch(analyzer, fetch_node)
    site = RunSite(call, item_index, fetch, code(fetch_node), {}, {})
    if feed_position is not None:
        _read_feeds(analyzer, site, feed_position, feed_dicts)
    for leaf in fetch.leaves():
        if leaf.shape in ("tensor", "tensors", "summary"):
            facts = analyzer.analyze(leaf.node)
            site.reads |= facts.reads
            site.python_reads |= facts.python_reads
        elif leaf.shape in ("op", "loss"):
            site.train_ops.append(leaf.node.value)
    if site.is_init is False and any(leaf.shape == "init" for leaf in fetch.leaves()):
        raise Refusal(call, "a run that initialises variables and computes something else")
    return site


def _position(call: cst.Call, keyword: str, index: int) -> int | None:
    for position, arg in enumerate(call.args):
        if (arg.keyword and arg.keyword.value == keyword) or (arg.keyword is None and position == index):
            return position
    return None


def _read_fetch(analyzer: ExprAnalyzer, node: cst.BaseExpression) -> Fetch:
    if isinstance(node, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            raise Refusal(node, "starred fetches are not modelled")
        shape = "list" if isinstance(node, cst.List) else "tuple"
        return Fetch(shape, node, [_read_fetch(analyzer, e.value) for e in node.elements])
    if isinstance(node, cst.Dict):
        if any(not isinstance(e, cst.DictElement) for e in node.elements):
            raise Refusal(node, "** in a fetch dict is not modelled")
        return Fetch("dict", node, [_read_fetch(analyzer, e.value) for e in node.elements],
                     [e.key for e in node.elements])
    return _read_leaf(analyzer, node)


def _read_leaf(analyzer: ExprAnalyzer, node: cst.BaseExpression) -> Fetch:
    if isinstance(node, cst.Name) and analyzer.kinds.get(node.value) is Kind.TRAIN_OP:
        return Fetch("loss" if node.value in analyzer.valued_train_ops else "op", node)
    if isinstance(node, cst.Name) and analyzer.kinds.get(node.value) is Kind.INIT_OP:
        return Fetch("init", node)
    if isinstance(node, cst.Call) and (analyzer.category(node.func)[1] is Category.INIT_OP
                                       or analyzer.is_initializer_group(node)):
        return Fetch("init", node)
    if isinstance(node, cst.Name) and node.value in analyzer.summary_names:
        return Fetch("summary", node)
    if isinstance(node, cst.Name) and node.value in analyzer.tensor_lists:
        return Fetch("tensors", node)
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        raise Refusal(node, "fetching tensors by name string is not modelled")
    variables = analyzer.fetched_variables(node.value) if isinstance(node, cst.Name) \
        and node.value in analyzer.variable_list_names else None
    if variables:  # `sess.run(tvars)`: the list of their values
        return Fetch("list", node, [Fetch("tensor", cst.Name(name)) for name in variables])
    facts = analyzer.analyze(node)
    if facts.run_calls or facts.layer_calls:
        raise Refusal(node, "a fetch that runs the session or creates layers")
    if any(analyzer.kinds[n] not in _TENSOR_READS for n in facts.reads):
        raise Refusal(node, f"fetching '{code(node)}', which is not a tensor")
    if not (facts.reads or facts.builds_ops):
        raise Refusal(node, f"fetching '{code(node)}', which is not a graph value")
    return Fetch("tensor", node)


def _read_feeds(analyzer: ExprAnalyzer, site: RunSite, position: int, feed_dicts: dict) -> None:
    feed = site.call.args[position].value
    if isinstance(feed, cst.Name) and feed.value == "None":
        return
    if isinstance(feed, cst.Name):
        assignments = analyzer.resolver.assignments_of(feed)
        if len(assignments) != 1 or id(assignments[0].node) not in feed_dicts:
            raise Refusal(feed, f"feed_dict '{feed.value}' is not one dict literal of placeholders")
        site.named_feed = feed
        for element in feed_dicts[id(assignments[0].node)].value.elements:
            site.feeds[element.key.value] = None
            site.feed_values[element.key.value] = element.value
        return
    if not isinstance(feed, cst.Dict):
        raise Refusal(feed, "feed_dict must be a dict literal or a name bound to one")
    for index, element in enumerate(feed.elements):
        if not isinstance(element, cst.DictElement):
            raise Refusal(element, "** in a feed_dict is not modelled")
        key = element.key
        if not (isinstance(key, cst.Name) and analyzer.kinds.get(key.value) is Kind.PLACEHOLDER):
            raise Refusal(key, f"feeding '{code(key)}', which is not a placeholder")
        facts = analyzer.analyze(element.value)
        if facts.reads or facts.builds_ops or facts.run_calls:
            raise Refusal(element.value, "a fed value computed from graph values or session runs")
        site.feeds[key.value] = (position, index)
        site.feed_values[key.value] = _default_never_overridden(analyzer.resolver, element.value) or element.value


def _default_never_overridden(resolver, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """For a fed parameter of a module-level function with a literal default that no call of it passes
    (`def predict(self, x, training=False)` once its class is a module of functions): that default,
    the one value ever fed."""
    if not isinstance(value, cst.Name):
        return None
    assignments = resolver.assignments_of(value)
    parameter = assignments[0].node if len(assignments) == 1 else None
    if not (isinstance(parameter, cst.Param) and parameter.default is not None and is_literal(parameter.default)):
        return None
    function = resolver.parent(resolver.parent(parameter))
    if not isinstance(function, cst.FunctionDef) or parameter not in function.params.params \
            or not isinstance(resolver.parent(function), cst.Module):  # a method's calls are not names
        return None
    position = function.params.params.index(parameter)
    definitions = resolver.scope(function).assignments[function.name.value] if resolver.scope(function) else ()
    for definition in definitions:
        for access in definition.references:
            call = resolver.parent(access.node)
            if not (isinstance(call, cst.Call) and call.func is access.node):
                return None
            if any(arg.star or (arg.keyword and arg.keyword.value == value.value)
                   or (arg.keyword is None and index >= position) for index, arg in enumerate(call.args)):
                return None
    return parameter.default
