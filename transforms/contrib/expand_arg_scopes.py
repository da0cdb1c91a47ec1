"""TFM501: `with slim.arg_scope([ops...], key=value, ...):` -> the defaults written into each call of
those ops in the block, and the block removed.

arg_scope (tf.contrib.slim / tf.contrib.framework, now tf-slim) sets default keyword arguments for a
list of functions while its block runs: a call's own keywords win, an inner arg_scope's defaults win
over an outer one's (blocks are expanded innermost first, so that falls out), and an argument given
both positionally and by the scope is a TypeError in TF1. TensorFlow 2 has no arg_scope; with every
default spelled out at its call, the later rewrites (TFM201: slim layers -> Keras layers) see plain
calls, and the code stays valid TF1 if they do not apply.

The expansion is lexical, so it is refused (with the reason) wherever the scope could reach a call
that is not written in the block: the block calls a function that is not TensorFlow's, a builtin or
a function of this file that provably runs none of the scoped ops (methods, imported helpers,
`slim.repeat` / `slim.stack`); a scoped op is passed as a value (`normalizer_fn=slim.batch_norm`
runs under the scope inside the layer); a scoped call sits in a nested function or lambda (it runs
later, outside the scope); an inner arg_scope could not be expanded; or the scope is stored (`as sc`)
or given as a dict. A default's value is evaluated once by arg_scope; it is repeated at each call only
when that is provably the same: literals, names the block does not rebind, and TensorFlow
constructors (initializers, regularizers) of such values.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider, QualifiedNameSource

from transforms.common.syntax import Refusal, bind_arguments, code, unwrapped_block, walk
from transforms.base import TFTransform
from transforms.common.qualnames import dotted_name
from transforms.common.tables import slim_table

_PURE_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)


class ExpandArgScopes(TFTransform):
    CODE = "TFM501"
    DESCRIPTION = "slim / contrib arg_scope blocks -> their defaults written into each call, the block removed"
    SAFETY = "safe"
    PHASE = 15
    TRIGGERS = ("arg_scope",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.local_functions: dict[str, cst.FunctionDef | None] = {}
        for child in walk(node):
            if isinstance(child, cst.FunctionDef):
                name = child.name.value  # a name defined twice is ambiguous: None, never trusted
                self.local_functions[name] = None if name in self.local_functions else child
        self.plans: dict[int, tuple[dict, dict]] = {}  # id(with) -> (defaults by op key, its own defaults)
        self.missing: dict[int, dict[str, cst.BaseExpression]] = {}  # id(call.func) -> defaults to add
        self.failed: set[int] = set()  # arg_scope blocks that were refused
        self.depth = 0  # nesting of expanded arg_scope blocks around the node being visited
        self.ops = slim_table().get("arg_scope_ops", {})

    def visit_With(self, node: cst.With) -> None:
        if self._arg_scope_call(node) is None or self.depth or id(node) in self.failed:
            self.depth += bool(self.depth) and id(node) in self.plans
            return
        plans, missing = dict(self.plans), dict(self.missing)
        try:
            self._plan(node, {})
            self.depth = 1
        except Refusal as refusal:
            self.plans, self.missing = plans, missing
            self.report(refusal.node or node, f"arg_scope not expanded: {refusal.message}; the block is left "
                        "as it is", fixed=False, severity="warning")

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.BaseStatement | cst.FlattenSentinel:
        if id(original) not in self.plans or not self.depth:
            return updated
        self.depth -= 1
        keywords = ", ".join(self.plans[id(original)][1]) or "no defaults"
        self.report(original, f"arg_scope defaults ({keywords}) written into the calls of its ops in the block; "
                    "the arg_scope is gone", fixed=True)
        return unwrapped_block(updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        missing = self.missing.get(id(original.func)) if self.depth else None
        if not missing:
            return updated
        added = [cst.Arg(value=value, keyword=cst.Name(keyword),
                         equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                 for keyword, value in missing.items()]
        return updated.with_changes(args=[*updated.args, *added])

    def _plan(self, node: cst.With, inherited: dict[str, dict]) -> None:
        """Check the block (and the arg_scopes nested in it) and record what each scoped call gets;
        raises Refusal when any part cannot be expanded."""
        try:
            self._plan_block(node, inherited)
        except Refusal:
            self.failed.add(id(node))
            raise

    def _plan_block(self, node: cst.With, inherited: dict[str, dict]) -> None:
        keys, defaults = self._scope(node, self._arg_scope_call(node))
        merged = dict(inherited)
        for key in keys:
            merged[key] = {**inherited.get(key, {}), **defaults}
        self.plans[id(node)] = (merged, defaults)
        callees = {id(child.func) for child in _walk_scope(node.body, self) if isinstance(child, cst.Call)}
        for child in _walk_scope(node.body, self):
            if isinstance(child, cst.With) and child is not node and self._arg_scope_call(child):
                self._plan(child, merged)
            elif isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and self._reaches(child, set(merged), set()):
                raise Refusal(child, "a scoped op inside a nested function runs later, outside the scope")
            elif isinstance(child, (cst.Name, cst.Attribute)) and self._key_of(child) in merged and id(child) not in callees:
                raise Refusal(child, f"'{code(child)}' is passed as a value and runs under the scope where it is called")
            elif isinstance(child, cst.Call):
                key = self._key_of(child.func)
                if key in merged:
                    self.missing[id(child.func)] = self._missing(child, merged[key])
                else:
                    self._check_callee(child, set(merged), set())

    # -- recognising the scope -----------------------------------------------------------------

    def _arg_scope_call(self, node: cst.With) -> cst.Call | None:
        scopes = set(slim_table().get("arg_scopes", ()))
        for item in node.items:
            if isinstance(item.item, cst.Call) and self.tf_name(item.item.func) in scopes:
                return item.item
        return None

    def _scope(self, node: cst.With, call: cst.Call) -> tuple[set[str], dict[str, cst.BaseExpression]]:
        """The keys of the scoped ops and the defaults the scope sets."""
        if len(node.items) != 1 or node.items[0].asname is not None:
            raise Refusal(node, "an arg_scope stored with `as` or combined with other context managers")
        if node.asynchronous is not None:
            raise Refusal(node, "an `async with` arg_scope")
        if not call.args:
            raise Refusal(call, "an arg_scope without its list of ops")
        first, *rest = call.args
        if first.keyword is not None or first.star or not isinstance(first.value, (cst.List, cst.Tuple)):
            raise Refusal(call, "an arg_scope given a stored scope (a dict) instead of a list of ops")
        keys = {self._op_key(element.value) for element in first.value.elements}
        defaults = {}
        for arg in rest:
            if arg.keyword is None or arg.star:
                raise Refusal(arg, "arg_scope defaults must be plain keyword arguments")
            defaults[arg.keyword.value] = arg.value
        self._check_duplicable(node, defaults)
        return keys, defaults

    def _op_key(self, node: cst.BaseExpression) -> str:
        name = self.tf_name(node)
        if name is None or name not in self.ops:
            raise Refusal(node, f"'{code(node)}' is not an arg_scope op of tf-slim")
        return self.ops[name]["key"]

    def _check_duplicable(self, node: cst.With, defaults: dict[str, cst.BaseExpression]) -> None:
        rebound = _bound_names(node.body)
        for keyword, value in defaults.items():
            if not self._duplicable(value):
                raise Refusal(value, f"the default {keyword}={code(value)} is evaluated once by arg_scope and "
                                     "repeating it at each call is not proven the same")
            reused = {n.value for n in walk(value) if isinstance(n, cst.Name)} & rebound
            if reused:
                raise Refusal(value, f"the default {keyword}= reads '{sorted(reused)[0]}', which the block rebinds")

    def _duplicable(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, (*_PURE_LITERALS, cst.Name)):
            return True
        if isinstance(node, cst.Attribute):
            return bool(dotted_name(node))
        if isinstance(node, cst.UnaryOperation):
            return self._duplicable(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self._duplicable(node.left) and self._duplicable(node.right)
        if isinstance(node, (cst.List, cst.Tuple)):
            return all(self._duplicable(element.value) for element in node.elements)
        if isinstance(node, cst.Call):
            return self.tf_name(node.func) is not None and all(
                not arg.star and self._duplicable(arg.value) for arg in node.args)
        return False

    # -- the calls the scope reaches -----------------------------------------------------------

    def _key_of(self, node: cst.CSTNode) -> str | None:
        name = self.tf_name(node)
        entry = self.ops.get(name) if name else None
        return entry["key"] if entry else None

    def _missing(self, call: cst.Call, defaults: dict) -> dict[str, cst.BaseExpression]:
        name = self.tf_name(call.func)
        parameters = self.ops[name]["parameters"]
        if any(arg.star for arg in call.args):
            raise Refusal(call, f"a call of {name} with *args / **kwargs")
        bound = bind_arguments(call, parameters, name)
        positional = {parameters[i] for i, arg in enumerate(call.args) if arg.keyword is None}
        for keyword in defaults:
            if keyword not in parameters:
                raise Refusal(call, f"{name} takes no '{keyword}' (TF1 raises TypeError here)")
            if keyword in positional:
                raise Refusal(call, f"{name} gets '{keyword}' both positionally and from the arg_scope "
                                    "(TF1 raises TypeError here)")
        return {keyword: value for keyword, value in defaults.items() if keyword not in bound}

    def _check_callee(self, call: cst.Call, keys: set[str], seen: set[str]) -> None:
        """Refuse a call that could run a scoped op out of sight of the block."""
        name = self.tf_name(call.func)
        if name is not None:
            if name.startswith("tf.contrib.") and name not in self.ops:
                raise Refusal(call, f"{name} may run the scoped ops inside it")
            return
        qualified = self.get_metadata(QualifiedNameProvider, call.func, set())
        if qualified and all(q.source is QualifiedNameSource.BUILTIN for q in qualified):
            return
        local = self.local_functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if local is not None and (call.func.value in seen or not self._reaches(local, keys, seen | {call.func.value})):
            return
        raise Refusal(call, f"the block calls '{code(call.func)}', which may run the scoped ops under this arg_scope")

    def _reaches(self, node: cst.CSTNode, keys: set[str], seen: set[str]) -> bool:
        """Whether running `node` (a function) could run a scoped op."""
        for child in walk(node):
            if isinstance(child, (cst.Name, cst.Attribute)) and self._key_of(child) in keys:
                return True
            if isinstance(child, cst.Call) and self._key_of(child.func) is None:
                try:
                    self._check_callee(child, keys, seen)
                except Refusal:
                    return True
        return False


def _bound_names(node: cst.CSTNode) -> set[str]:
    bound = set()
    for child in walk(node):
        if isinstance(child, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            bound |= {n.value for n in walk(child.target) if isinstance(n, cst.Name)}
        elif isinstance(child, (cst.For, cst.CompFor)):
            bound |= {n.value for n in walk(child.target) if isinstance(n, cst.Name)}
        elif isinstance(child, cst.AsName):
            bound |= {n.value for n in walk(child.name) if isinstance(n, cst.Name)}
        elif isinstance(child, cst.NamedExpr):
            bound |= {n.value for n in walk(child.target) if isinstance(n, cst.Name)}
    return bound


def _walk_scope(node: cst.CSTNode, transform: ExpandArgScopes):
    """Like walk, but a nested arg_scope block is yielded without its contents (planned on its own)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not (current is not node and isinstance(current, cst.With) and transform._arg_scope_call(current)):
            stack.extend(reversed(current.children))
