"""Recognising the session's part in graph code: run sites (`sess.run`, `tensor.eval`, `op.run`),
`sess.close()`, feed dicts built ahead of a run, and the names the session is bound to."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.graph.analysis.model import Kind

RUN_METHODS = ("run", "eval")


class Resolver(Protocol):
    def tf_name(self, node: cst.CSTNode) -> str | None: ...

    def is_block_reference(self, node: cst.Name) -> bool:
        """Whether a name refers to a binding of the graph block (not a local of a nested function)."""

    def is_session_name(self, node: cst.Name) -> bool:
        """Whether a name is only ever bound to the program's session."""


@dataclass
class ExprFacts:
    builds_ops: bool = False
    reads: set[str] = field(default_factory=set)         # block names of graph or state kinds
    python_reads: set[str] = field(default_factory=set)
    layer_calls: list[cst.Call] = field(default_factory=list)
    run_calls: list[cst.Call] = field(default_factory=list)
    session_closes: list[cst.Call] = field(default_factory=list)
    feed_dicts: list[cst.Assign] = field(default_factory=list)  # `feed = {placeholder: value, ...}`
    helper_calls: set[str] = field(default_factory=set)
    helper_call_nodes: list[cst.Call] = field(default_factory=list)
    checkpoint_calls: list[cst.Call] = field(default_factory=list)  # `saver.save(sess, ...)` / `.restore`
    regularization_calls: list[cst.Call] = field(default_factory=list)  # transforms/graph/layers/regularization.py


class SiteRecognizer:
    def __init__(self, resolver: Resolver, kinds: dict[str, Kind]) -> None:
        self.resolver = resolver
        self.kinds = kinds

    def category(self, func: cst.BaseExpression) -> tuple[str | None, Category | None, str]:
        name = self.resolver.tf_name(func)
        if name is None:
            return None, None, ""
        category, reason = categorize(name)
        return name, category, reason

    def is_initializer_group(self, node: cst.CSTNode) -> bool:
        """`tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())`: an init op too."""
        return isinstance(node, cst.Call) and self.category(node.func)[0] == "tf.group" and bool(node.args) \
            and all(arg.keyword is None and not arg.star and isinstance(arg.value, cst.Call)
                    and self.category(arg.value.func)[1] is Category.INIT_OP for arg in node.args)

    def is_run_call(self, node: cst.CSTNode) -> bool:
        """`sess.run(...)`, `tensor.eval(...)` or `op.run(...)`: a session run site."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return False
        receiver, method = node.func.value, node.func.attr.value
        if isinstance(receiver, cst.Call) and method == "run" and not node.args:
            return self.category(receiver.func)[1] is Category.INIT_OP  # tf.global_variables_initializer().run()
        if isinstance(receiver, cst.Call) and method == "eval":
            return self.category(receiver.func)[1] is Category.OP  # tf.image.resize_images(images, size).eval()
        if method not in RUN_METHODS or not isinstance(receiver, cst.Name):
            return False
        if self.is_session(receiver):
            return method == "run"
        if not self.resolver.is_block_reference(receiver):
            return False
        kind = self.kinds.get(receiver.value)
        return kind in (Kind.TENSOR, Kind.VARIABLE, Kind.PLACEHOLDER, Kind.TRAIN_OP, Kind.INIT_OP)

    def is_feed_dict(self, node: cst.Assign) -> bool:
        """`name = {placeholder: value, ...}`: a feed dict built ahead of the run that uses it."""
        value = node.value
        return (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                and isinstance(value, cst.Dict) and bool(value.elements)
                and all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name)
                        and self.kinds.get(e.key.value) is Kind.PLACEHOLDER and self.resolver.is_block_reference(e.key)
                        for e in value.elements))

    def is_session(self, node: cst.BaseExpression) -> bool:
        """A name bound to the program's session (at block level, or in a nested function or block)."""
        if not isinstance(node, cst.Name):
            return False
        if self.kinds.get(node.value) is Kind.SESSION and self.resolver.is_block_reference(node):
            return True
        return self.resolver.is_session_name(node)

    def _is_session_close(self, node: cst.Call) -> bool:
        func = node.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "close" and not node.args
                and self.is_session(func.value))
