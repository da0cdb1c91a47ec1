"""Flatten the graph-context `with` blocks of a graph program into one straight-line sequence.

`tf.variable_scope` / `tf.name_scope` only name things (their names are kept in `Scopes` and end up
in variable names), `tf.Graph().as_default()` and `tf.device` only choose where ops go, and
`tf.Session()` only holds the graph's state: in TF2 none of them remains, so their bodies are read
as if they stood in the enclosing block. The comments of a flattened `with` line move to the first
statement of its body. `scope.reuse_variables()` in `with tf.variable_scope(...) as scope:` marks the
rest of its block as reusing (`Scopes.reuse`), which only the program's own functions are modelled for."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import libcst as cst

from transforms.common.graph_symbols import Category, scope_kind
from transforms.graph.analysis.chained import chained_parts
from transforms.graph.analysis.exprs import ExprAnalyzer
from transforms.graph.analysis.model import Item, Kind, Scopes
from transforms.common.syntax import Refusal, bind_arguments, string_value, walk

_VARIABLE_SCOPE_SIGNATURE = ["name_or_scope", "default_name", "values", "initializer", "regularizer",
                             "caching_device", "partitioner", "custom_getter", "reuse", "dtype", "use_resource",
                             "constraint", "auxiliary_name_scope"]
_CREATES_VARIABLES = (Category.VARIABLE, Category.LAYER, Category.RNN_CELL, Category.RNN_RUN, Category.OPTIMIZER,
                      Category.REFUSED_OPTIMIZER)


class Flattener:
    def __init__(self, analyzer: ExprAnalyzer, classify: Callable[[Item], None]) -> None:
        self.analyzer = analyzer
        self.classify = classify
        self.items: list[Item] = []
        self.context_headers: list[cst.CSTNode] = []
        self.reuse_scopes: set[str] = set()  # names of `with tf.variable_scope(...) as <name>` told to reuse

    def flatten(self, statements: list[cst.BaseStatement], scopes: Scopes, leading: list[cst.EmptyLine]) -> None:
        for statement in statements:
            if self._reuses_variables(statement):
                scopes = replace(scopes, reuse=True)  # for the rest of this `with` block, and the blocks in it
                leading = leading + list(statement.leading_lines)
                continue
            inner = self._context_scopes(statement, scopes) if isinstance(statement, cst.With) else None
            if inner is None:
                self._add(statement, scopes, leading)
            else:
                if not isinstance(statement.body, cst.IndentedBlock):
                    raise Refusal(statement, "one-line `with` block around graph code")
                self.context_headers.extend(statement.items)
                carried = leading + list(statement.leading_lines) + _header_comment(statement.body)
                self.flatten(list(statement.body.body), inner, carried)
            leading = []

    def _add(self, statement: cst.BaseStatement, scopes: Scopes, leading: list[cst.EmptyLine]) -> None:
        if scopes.reuse:
            self._check_reusing(statement)
        parts = chained_parts(statement)
        item = self._item(parts[0] if parts else statement, scopes, leading)
        if parts and item.kind is Kind.PYTHON:
            item.node = statement  # plain Python (`width = features = 20`) stays as written
        elif parts:
            for alias in parts[1:]:
                self._item(alias, scopes, [])

    def _item(self, statement: cst.BaseStatement, scopes: Scopes, leading: list[cst.EmptyLine]) -> Item:
        item = Item(statement, len(self.items), scopes, leading)
        self.items.append(item)
        self.classify(item)
        return item

    def _context_scopes(self, statement: cst.With, scopes: Scopes) -> Scopes | None:
        """The scopes inside a graph-context `with`, or None when it is an ordinary `with`."""
        inner = scopes
        for with_item in statement.items:
            call = with_item.item
            if not isinstance(call, cst.Call):
                return None
            updated = self._context(call, with_item, inner, statement)
            if updated is None:
                return None
            inner = updated
        return inner

    def _context(self, call: cst.Call, with_item: cst.WithItem, scopes: Scopes, statement: cst.With) -> Scopes | None:
        name, category, _ = self.analyzer.category(call.func)
        if category is Category.SESSION:
            self._session(call, with_item)
            return scopes
        if category is Category.GRAPH_CONTEXT or self._is_as_default(call):
            return scopes
        if name == "tf.control_dependencies" and len(call.args) == 1 and self.is_update_ops(call.args[0].value):
            return replace(scopes, update_ops=True)
        if category is not Category.SCOPE:
            return None
        if with_item.asname is not None and not self._scope_object_modelled(name, with_item.asname, statement):
            raise Refusal(with_item, f"`{name}(...) as ...` (scope objects and reuse) is not modelled")
        if scope_kind(name) == "name":
            label = bind_arguments(call, ["name", "default_name", "values"], name).get("name")
            return replace(scopes, name=scopes.name + (_scope_label(call, self._constant(label)),))
        bound = bind_arguments(call, _VARIABLE_SCOPE_SIGNATURE, name)
        for parameter, value in bound.items():
            if parameter == "reuse" and isinstance(value, cst.Name) and value.value in ("None", "False"):
                continue
            if parameter not in ("name_or_scope", "initializer", "values"):
                raise Refusal(value, f"tf.variable_scope({parameter}=...) is not modelled")
        label = _scope_label(call, self._constant(bound.get("name_or_scope")))
        return Scopes(scopes.variable + (label,), scopes.name + (label,), bound.get("initializer", scopes.initializer),
                      reuse=scopes.reuse)

    def _constant(self, label: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """A scope name given as a name bound once, to a string (`name = "m1"`, a model's name parameter
        once its class is inlined): that string."""
        if not isinstance(label, cst.Name):
            return label
        assignments = self.analyzer.resolver.assignments_of(label)
        if len(assignments) != 1:
            return label
        target = self.analyzer.resolver.parent(assignments[0].node)
        assign = self.analyzer.resolver.parent(target) if isinstance(target, cst.AssignTarget) else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and string_value(assign.value) is not None:
            return assign.value
        return label

    def _scope_object_modelled(self, name: str, asname: cst.AsName, statement: cst.With) -> bool:
        """`with tf.name_scope(...) as scope:` where nothing reads `scope`, or `with tf.variable_scope(...) as
        scope:` where `scope` is only told `scope.reuse_variables()`, as a statement of the block itself."""
        if scope_kind(name) == "name":
            return self._never_read(asname)
        target = asname.name
        if not isinstance(target, cst.Name):
            return False
        references = [access.node for assignment in self.analyzer.resolver.assignments_of(target)
                      for access in assignment.references]
        block = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else ()
        receivers = {id(call.func.value) for call in map(self._reuse_call_of, block) if call is not None}
        if not references or not all(id(node) in receivers for node in references):
            return False
        self.reuse_scopes.add(target.value)
        return True

    def _check_reusing(self, statement: cst.BaseStatement) -> None:
        """Only the program's functions are modelled as reusing (transforms/graph/structure/modules.py)."""
        for node in walk(statement):
            if isinstance(node, cst.Call) and self.analyzer.category(node.func)[1] in _CREATES_VARIABLES:
                raise Refusal(node, "variables, layers or optimizer slots made directly after `reuse_variables()` "
                                    "(TF1 hands back existing ones) are not modelled")

    def _reuses_variables(self, statement: cst.BaseStatement) -> bool:
        call = self._reuse_call_of(statement)
        return call is not None and call.func.value.value in self.reuse_scopes

    @staticmethod
    def _reuse_call_of(statement: cst.BaseStatement) -> cst.Call | None:
        """The call of a statement `<name>.reuse_variables()`."""
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr)):
            return None
        call = statement.body[0].value
        if (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "reuse_variables" and isinstance(call.func.value, cst.Name)):
            return call
        return None

    def _never_read(self, asname: cst.AsName) -> bool:
        """`with tf.name_scope("layer") as scope:` where nothing reads `scope` (the scope's name string)."""
        target = asname.name
        return isinstance(target, cst.Name) and not any(
            assignment.references for assignment in self.analyzer.resolver.assignments_of(target))

    def is_update_ops(self, node: cst.BaseExpression) -> bool:
        """`tf.get_collection(tf.GraphKeys.UPDATE_OPS)`, or a name bound to it."""
        if isinstance(node, cst.Name):
            return self.analyzer.kinds.get(node.value) is Kind.UPDATE_OPS
        return (isinstance(node, cst.Call) and self.analyzer.category(node.func)[0] == "tf.get_collection"
                and len(node.args) == 1 and self.analyzer.category(node.args[0].value)[0] == "tf.GraphKeys.UPDATE_OPS")

    def _session(self, call: cst.Call, with_item: cst.WithItem) -> None:
        if with_item.asname is not None:
            target = with_item.asname.name
            if not isinstance(target, cst.Name):
                raise Refusal(with_item, "session bound to something other than a name")
            self.analyzer.kinds[target.value] = Kind.SESSION

    def _is_as_default(self, call: cst.Call) -> bool:
        """`graph.as_default()` / `sess.as_default()` / `tf.Graph().as_default()`."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "as_default" and not call.args):
            return False
        receiver = func.value
        if isinstance(receiver, cst.Name):
            return self.analyzer.kinds.get(receiver.value) is Kind.SESSION
        if isinstance(receiver, cst.Call):
            return self.analyzer.category(receiver.func)[1] is Category.GRAPH_CONTEXT
        return False


def _scope_label(call: cst.Call, label: cst.BaseExpression | None) -> str:
    text = string_value(label)
    if text is None or "/" in text:
        raise Refusal(call, "scope names must be plain string literals")
    return text


def _header_comment(body: cst.IndentedBlock) -> list[cst.EmptyLine]:
    comment = body.header.comment
    return [cst.EmptyLine(indent=True, comment=comment)] if comment else []
