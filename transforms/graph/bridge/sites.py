"""The run sites of a wrapped graph, and every other use of its sessions.

A run site is `sess.run(fetches[, feed_dict])`, `tensor.eval([feed_dict], session=sess)` or
`op.run([feed_dict], session=sess)` (without `session=`, inside a `with tf.Session()` block or after an
`InteractiveSession`, which make the session the default one), or `tf.train.global_step(sess, step)`,
which is `int(sess.run(step))`. Its feed dict is written at the run or
bound to a name before it (feeds.py). Its fetches and the keys of its feed dict must be graph values:
names the region binds (and nothing else rebinds), their attributes and constant subscripts, and lists,
tuples and dicts of those, so that the function pruned for the site can be made once, right after the
graph is built. Initializer calls among the fetches
(`sess.run(tf.global_variables_initializer())`) are made in the region instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from transforms.common.syntax import Refusal, bind_arguments, code, is_constant
from transforms.graph.bridge.feeds import NOT_WRITTEN, MadeFeeds, NamedFeedReader, NamedFeeds, made_feeds
from transforms.graph.layers.keras_layers import NameAllocator

INITIALIZERS = frozenset({"tf.global_variables_initializer", "tf.initialize_all_variables",
                          "tf.local_variables_initializer", "tf.initialize_local_variables"})
# Variable listings a run may fetch: the graph is complete when it runs, so they are listed at its end.
LISTINGS = {"tf.global_variables": "global_variables", "tf.all_variables": "global_variables",
            "tf.trainable_variables": "trainable_variables", "tf.local_variables": "local_variables"}
RUN_SIGNATURE = ["fetches", "feed_dict", "options", "run_metadata"]
EVAL_SIGNATURE = ["feed_dict", "session"]
GLOBAL_STEP_READ = "tf.train.global_step"
GLOBAL_STEP_SIGNATURE = ["sess", "global_step_tensor"]


@dataclass
class RunSite:
    call: cst.Call
    fetches: cst.BaseExpression
    feeds: list[cst.DictElement]  # key: the fed graph value, value: what is fed
    named_feeds: NamedFeeds | None = None  # a feed dict bound to a name before the run (the feeds: its keys)
    feeds_read: cst.Name | None = None  # that name, as the site reads it
    as_int: bool = False  # the run's result is given as a Python int (tf.train.global_step)
    traced: bool = False  # given RunOptions / RunMetadata, which a pruned function takes none of
    made_feeds: MadeFeeds | None = None  # a feed dict a function of the program makes (feeds.py)
    # Set when another branch of its `if` runs the same fetches (uses.alternative_runs); sites with
    # the same key share one function name.
    alternatives: tuple[int, str] | None = None

    def signature(self) -> tuple[str, tuple[str, ...]]:
        """Sites with equal signatures share one pruned function."""
        return code(self.fetches), tuple(code(key) for key in self.fed_values())

    def fed_values(self) -> list[cst.BaseExpression]:
        return self.named_feeds.keys if self.named_feeds is not None else [element.key for element in self.feeds]


class GraphValues:
    """Decides whether an expression is a graph value (see the module docstring)."""

    def __init__(self, transform, region_names: set[str], other_names: set[str]) -> None:
        self.transform = transform
        self.names = region_names - other_names
        self.initializer_calls: list[cst.Call] = []
        self.listing_calls: list[cst.Call] = []

    def check(self, node: cst.BaseExpression, what: str) -> None:
        if isinstance(node, cst.Name):
            if node.value not in self.names:
                raise Refusal(node, f"the {what} `{node.value}` is not a value the graph-building code binds")
        elif isinstance(node, cst.Attribute):
            self.check(node.value, what)
        elif isinstance(node, cst.Subscript):
            self.check(node.value, what)
            if not all(isinstance(s.slice, cst.Index) and is_constant(s.slice.value) for s in node.slice):
                raise Refusal(node, f"the {what} `{code(node)}` is subscripted by a value computed at the run")
        elif isinstance(node, (cst.List, cst.Tuple)):
            for element in node.elements:
                if isinstance(element, cst.StarredElement):
                    raise Refusal(node, f"the {what} `{code(node)}` unpacks a sequence")
                self.check(element.value, what)
        elif isinstance(node, cst.Dict):
            for element in node.elements:
                if not isinstance(element, cst.DictElement) or not is_constant(element.key):
                    raise Refusal(node, f"the {what} `{code(node)}` is a dict with computed keys")
                self.check(element.value, what)
        elif isinstance(node, cst.Call) and self.transform.tf_name(node.func) in INITIALIZERS and not node.args:
            self.initializer_calls.append(node)
        elif isinstance(node, cst.Call) and self.transform.tf_name(node.func) in LISTINGS and not node.args:
            self.listing_calls.append(node)
        else:
            raise Refusal(node, f"the {what} `{code(node)}` is computed at the run, not by the graph")


def read_run_call(call: cst.Call, values: GraphValues, named_feeds: NamedFeedReader) -> RunSite:
    """`sess.run(...)`."""
    bound = bind_arguments(call, RUN_SIGNATURE, "Session.run")
    if "fetches" not in bound:
        raise Refusal(call, "Session.run() without fetches")
    values.check(bound["fetches"], "fetch")
    site = _site(call, bound["fetches"], bound.get("feed_dict"), values, named_feeds)
    site.traced = "options" in bound or "run_metadata" in bound
    return site


def read_eval_call(call: cst.Call, receiver: cst.BaseExpression, values: GraphValues,
                   named_feeds: NamedFeedReader) -> RunSite:
    """`tensor.eval(...)` / `op.run(...)`."""
    bound = bind_arguments(call, EVAL_SIGNATURE, "eval")
    values.check(receiver, "fetch")
    return _site(call, receiver, bound.get("feed_dict"), values, named_feeds)


def read_global_step_call(call: cst.Call, session: cst.Arg, values: GraphValues) -> RunSite | None:
    """`tf.train.global_step(sess, step)` given `session` as its session; None when it is not."""
    bound = bind_arguments(call, GLOBAL_STEP_SIGNATURE, GLOBAL_STEP_READ)
    if bound.get("sess") is not session.value or "global_step_tensor" not in bound:
        return None
    values.check(bound["global_step_tensor"], "fetch")
    return RunSite(call, bound["global_step_tensor"], [], as_int=True)


def site_result(site: RunSite, call: cst.Call) -> cst.Call:
    """What replaces the site's call: `call`, the pruned function's, as the run gave its result."""
    return cst.Call(cst.Name("int"), [cst.Arg(call)]) if site.as_int else call


def _site(call: cst.Call, fetches: cst.BaseExpression, feed_dict: cst.BaseExpression | None, values: GraphValues,
          named_feeds: NamedFeedReader) -> RunSite:
    if isinstance(feed_dict, cst.Name) and feed_dict.value != "None":
        return RunSite(call, fetches, [], named_feeds(feed_dict), feed_dict)
    made = made_feeds(feed_dict, named_feeds.module, values.check) if named_feeds.module is not None else None
    if made is not None:
        return RunSite(call, fetches, [], made_feeds=made)
    return RunSite(call, fetches, _feeds(feed_dict, values))


def _feeds(feed_dict: cst.BaseExpression | None, values: GraphValues) -> list[cst.DictElement]:
    if feed_dict is None or (isinstance(feed_dict, cst.Name) and feed_dict.value == "None"):
        return []
    if not isinstance(feed_dict, cst.Dict):
        raise Refusal(feed_dict, f"the feed dict `{code(feed_dict)}` {NOT_WRITTEN}")
    feeds = []
    for element in feed_dict.elements:
        if not isinstance(element, cst.DictElement):
            raise Refusal(feed_dict, "the feed dict unpacks another mapping")
        values.check(element.key, "fed value")
        feeds.append(element)
    keys = [code(element.key) for element in feeds]
    if len(set(keys)) != len(keys):
        raise Refusal(feed_dict, "the feed dict feeds one value twice")
    return feeds


def function_name(site: RunSite, names: NameAllocator) -> str:
    """`run_<fetched names>` (each once, at most three), a name the file does not use yet."""
    words = list(dict.fromkeys(word for word in _leaf_words(site.fetches) if word))[:3] or ["graph"]
    return names.fresh("run_" + "_".join(words))


def _leaf_words(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value.strip("_")]
    if isinstance(node, cst.Attribute):
        return [node.attr.value.strip("_")]
    if isinstance(node, cst.Subscript):
        return _leaf_words(node.value)
    if isinstance(node, (cst.List, cst.Tuple, cst.Dict)):
        return [word for element in node.elements for word in _leaf_words(element.value)]
    if isinstance(node, cst.Call):
        function = code(node.func).rsplit(".", 1)[-1]
        return [re.sub(r"^(initialize_all|global)_variables(_initializer)?$", "init", function)]
    return []
