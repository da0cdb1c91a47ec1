"""Feed dicts a program builds before it runs them (`feed = {x: batch_x, y: batch_y}`, then
`sess.run(train_op, feed_dict=feed)`): a run site reads the fed values out of that dict
(`run_train_op(feed[x], feed[y])`), so they are the values the dict holds at the run, as in TF1.

A name qualifies when every assignment to it in the scope is a dict literal with the same keys, and
nothing else writes it or into it (`feed[k] = v`, `feed.update(...)`)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import code, walk

MUTATING_METHODS = frozenset({"update", "pop", "popitem", "setdefault", "clear"})


class NamedFeedDicts:
    def __init__(self, scope: cst.CSTNode) -> None:
        self.literals: dict[str, list[cst.Dict]] = {}
        self.written: set[str] = set()
        for node in walk(scope):
            self._read(node)

    def _read(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                name = target.target.value if isinstance(target.target, cst.Name) else None
                if name is not None and isinstance(node.value, cst.Dict) and len(node.targets) == 1:
                    self.literals.setdefault(name, []).append(node.value)
                elif name is not None:
                    self.written.add(name)
                elif isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                    self.written.add(target.target.value.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and isinstance(node.target, cst.Name):
            self.written.add(node.target.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.attr.value in MUTATING_METHODS:
            self.written.add(node.func.value.value)

    def elements(self, name: str) -> list[cst.DictElement] | None:
        """`key: name[key]` for each key of the dict `name` is bound to; None when it does not qualify."""
        literals = self.literals.get(name)
        if not literals or name in self.written:
            return None
        if not all(isinstance(element, cst.DictElement) for literal in literals for element in literal.elements):
            return None
        keys = [[code(element.key) for element in literal.elements] for literal in literals]
        if any(sorted(other) != sorted(keys[0]) for other in keys[1:]):
            return None
        return [cst.DictElement(element.key, cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(element.key))]))
                for element in literals[0].elements]
