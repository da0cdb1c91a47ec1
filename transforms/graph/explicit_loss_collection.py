"""TFM202: the LOSSES collection made explicit.

    tf.losses.softmax_cross_entropy(one_hot, logits)        softmax_cross_entropy_loss = tf.losses.softmax_cross_entropy(one_hot, logits)
    total_loss = tf.losses.get_total_loss()            ->   total_loss = tf.add_n([softmax_cross_entropy_loss] + tf.losses.get_regularization_losses())

Every `tf.losses.*` loss function also added its result to the graph's LOSSES collection, and
`get_total_loss()` summed that collection and the regularization losses (`add_n(get_losses() +
get_regularization_losses())`); `get_losses()` returned the collection. TensorFlow 2 has no
collections, so the losses are named where they are made and summed where they were read, exactly as
TF1 did: still TF1 code, which TFM201 then converts (the regularization losses become the Keras
layers' `losses`).

Only provable cases are rewritten: every loss-function call of the file is a whole statement (`x =
loss(...)` or a bare call) of the same straight-line code as the read, before it (in order, as the
collection was filled), without `loss_collection=`; nothing else adds to the collection
(`tf.losses.add_loss`, `tf.add_to_collection`); and the reads take no `scope=`. Anything else is left
as it is, with the reason.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.common.graph_symbols import table
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.common.syntax import Refusal, bind_arguments, code, walk
from transforms.base import TFTransform
from transforms.common.qualnames import tensorflow_alias

_READS = {"tf.losses.get_total_loss": ["add_regularization_losses", "name", "scope"],
          "tf.losses.get_losses": ["scope", "loss_collection"]}


class ExplicitLossCollection(TFTransform):
    CODE = "TFM202"
    DESCRIPTION = "tf.losses collection reads (get_total_loss, get_losses) -> the losses named and summed explicitly"
    SAFETY = "safe"
    PHASE = 16
    TRIGGERS = ("get_total_loss", "get_losses")

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        reads = [node for node in walk(original) if isinstance(node, cst.Call) and self.tf_name(node.func) in _READS]
        if not reads:
            return updated
        try:
            self.tf = tensorflow_alias(original)
            if self.tf is None:
                raise Refusal(reads[0], "the module does not import tensorflow under a name the rewrite can use")
            body = self._body_of(original, reads)
            plan = self._plan(original, body, reads)
        except Refusal as refusal:
            self.report(refusal.node or reads[0], f"loss collection not made explicit: {refusal.message}; left as "
                        "it is", fixed=False, severity="warning")
            return updated
        for read in reads:
            self.report(read, f"{self.tf_name(read.func)}() -> {code(cst.parse_expression(plan[id(read)]))}: the losses "
                        "it collected, named where they are made", fixed=True)
        return original.visit(_Rewriter(plan))

    def _body_of(self, module: cst.Module, reads: list[cst.Call]) -> list[cst.BaseStatement]:
        """The straight-line statements (module or function body, `with` blocks flattened) holding every read."""
        functions = [n for n in walk(module) if isinstance(n, cst.FunctionDef)]
        for owner in [*reversed(functions), module]:  # innermost first
            statements = _straight_line(owner.body if isinstance(owner, cst.Module) else owner.body.body)
            inside = {id(n) for s in statements for n in walk(s)}
            if all(id(read) in inside for read in reads):
                return statements
        raise Refusal(reads[0], "the collection is read in loops, branches or several functions")

    def _plan(self, module: cst.Module, statements: list[cst.BaseStatement], reads: list[cst.Call]) -> dict:
        losses = self._loss_calls(module)
        position = {id(n): index for index, s in enumerate(statements) for n in walk(s)}
        names = NameAllocator({n.value for n in walk(module) if isinstance(n, cst.Name)})
        plan: dict[int, object] = {}
        collected: list[tuple[int, str]] = []  # (statement index, name holding the loss)
        for call in losses:
            index = position.get(id(call))
            small = _whole_statement(statements[index], call) if index is not None else None
            if small is None:
                raise Refusal(call, "a loss function called inside an expression, a loop, a branch or another "
                                    "function (its place in the collection is not known statically)")
            if "loss_collection" in bind_arguments(call, self._loss_signature(call), "loss"):
                raise Refusal(call, "a loss added to another collection (loss_collection=)")
            if isinstance(small, cst.Expr):
                name = names.fresh(f"{self.tf_name(call.func).rsplit('.', 1)[-1]}_loss")
                plan[id(small)] = name
            else:
                name = small.targets[0].target.value
            collected.append((index, name))
        for read in reads:
            plan[id(read)] = self._replacement(read, [name for index, name in collected if index < position[id(read)]])
        return plan

    def _loss_calls(self, module: cst.Module) -> list[cst.Call]:
        api = table("graph_api")
        found = []
        for node in walk(module):
            if not isinstance(node, cst.Call):
                continue
            name = self.tf_name(node.func)
            if name in api["collection_writers"]:
                raise Refusal(node, f"{name} adds to the LOSSES collection")
            if name in api["collection_losses"]:
                found.append(node)
        return found

    def _loss_signature(self, call: cst.Call) -> list[str]:
        return table("graph_api")["collection_losses"][self.tf_name(call.func)]

    def _replacement(self, read: cst.Call, names: list[str]) -> str:
        name = self.tf_name(read.func)
        bound = bind_arguments(read, _READS[name], name)
        if "scope" in bound or "loss_collection" in bound:
            raise Refusal(read, f"{name}(scope=... / loss_collection=...) is not modelled")
        listed = f"[{', '.join(names)}]"
        if name == "tf.losses.get_losses":
            return listed
        if not names:
            raise Refusal(read, "get_total_loss() before any loss (TF1 raises an error there)")
        regularization = bound.get("add_regularization_losses")
        if regularization is not None and not (isinstance(regularization, cst.Name) and regularization.value in ("True", "False")):
            raise Refusal(regularization, "add_regularization_losses= must be True or False")
        if regularization is not None and regularization.value == "False":
            return f"{self.tf}.add_n({listed})"
        return f"{self.tf}.add_n({listed} + {self.tf}.losses.get_regularization_losses())"


def _straight_line(statements) -> list[cst.BaseStatement]:
    """Statements in execution order, with the bodies of `with` blocks (straight-line too) spliced in."""
    flat = []
    for statement in statements:
        flat.append(statement)
        if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
            flat += _straight_line(statement.body.body)
    return flat


def _whole_statement(statement: cst.BaseStatement, call: cst.Call):
    """The `x = call` assignment or bare `call` expression `call` is the whole value of, else None."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for small in statement.body:
        if isinstance(small, cst.Expr) and small.value is call:
            return small
        if (isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            return small
    return None


class _Rewriter(cst.CSTTransformer):
    def __init__(self, plan: dict) -> None:
        self.plan = plan

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        name = self.plan.get(id(original))
        if name is None:
            return updated
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=updated.value)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        text = self.plan.get(id(original))
        return cst.parse_expression(text) if text is not None else updated
