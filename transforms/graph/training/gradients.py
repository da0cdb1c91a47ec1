"""Train ops whose gradients are computed and applied in separate statements, e.g.

    grads_and_vars = optimizer.compute_gradients(loss)
    clipped = [(tf.clip_by_value(grad, -1.0, 1.0), var) for grad, var in grads_and_vars]
    train_op = optimizer.apply_gradients(clipped, global_step=global_step)

or `grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), 5.0)` followed by
`optimizer.apply_gradients(zip(grads, tvars))`: one TrainOp, a GradientTape step (as minimize() is).
The statements from the one computing the gradients to the apply, each reading the gradients, move
into that step after `tape.gradient`, where the gradients call becomes the tape's gradients
(`list(zip(gradients, variables))` for compute_gradients' pairs), and `apply_gradients` applies what
they made. tf.gradients starts such a chain only when taken of a list of variables (the gradient of a
penalty with respect to a tensor stays graph code), and gradients no optimizer applies are read as
graph code again; bound to one name straight from tf.gradients, they are a list of tensors, and
fetching them gives the list of their values.

Gradients computed elsewhere and fed back, `apply_gradients(zip([w_grad, b_grad], tvars))` with one
placeholder per variable (policy-gradient agents sum each episode's gradients in NumPy and apply the
sum every few episodes), make a train op with no tape: its step takes the placeholders and applies them.

Refused: applied gradients read by anything but their chain (fetched, summarised), or read together
with other graph tensors."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.common.syntax import (Refusal, bind_arguments, calls_under, code_identifiers, load_names,
                                      module_code, only_small_statement, target_names, walk)
from transforms.graph.analysis.listed_names import items_definition, listed_names
from transforms.graph.analysis.model import GradientCode, Item, Kind, TrainOp
from transforms.graph.layers.variable_lists import lists_trainable_variables

_COMPUTE_GRADIENTS = ["loss", "var_list", "gate_gradients", "aggregation_method", "colocate_gradients_with_ops",
                      "grad_loss"]
_TF_GRADIENTS = ["ys", "xs", "grad_ys", "name", "colocate_gradients_with_ops", "gate_gradients",
                 "aggregation_method", "stop_gradients", "unconnected_gradients"]
_APPLY_GRADIENTS = ["grads_and_vars", "global_step", "name"]
_PLACEMENT_ONLY = {"gate_gradients", "colocate_gradients_with_ops", "name"}
# Python builtins that only regroup the gradients and variables
_REGROUPING = {"zip", "list", "tuple", "enumerate", "len", "range", "reversed"}


@dataclass
class _Chain:
    call: cst.Call                 # the compute_gradients / tf.gradients call
    pairs: bool                    # compute_gradients: (gradient, variable) pairs
    optimizer: str | None          # compute_gradients' optimizer
    loss: cst.BaseExpression
    var_list: cst.BaseExpression | None
    items: list[Item] = field(default_factory=list)
    python_reads: set[str] = field(default_factory=set)
    applied: bool = False


class GradientReader:
    def __init__(self, scanner) -> None:
        self.scanner = scanner
        self.chains: dict[str, _Chain] = {}  # a name holding gradients -> its chain
        identifiers = code_identifiers(module_code(scanner.resolver.module)) or frozenset()
        # nothing to read in a program that never spells compute_gradients, gradients or apply_gradients
        self.possible = not identifiers.isdisjoint({"compute_gradients", "gradients", "apply_gradients"})

    def assign(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """Read `target = value` when it computes, transforms or applies gradients; False otherwise."""
        if not self.possible or any(map(self.scanner.analyzer.is_run_call, calls_under(value))):
            return False  # a session run fetching gradients is a run site
        apply = self._apply_call(value)
        if apply is not None and self._gradient_names(apply):
            self._apply(item, target, apply)
            return True
        applied = self._fed_gradients(apply) if apply is not None else None
        if applied is not None:
            self._apply_fed(item, target, apply, applied)
            return True
        source = self._source_call(value)
        read = {id(self.chains[name]): self.chains[name] for name in self._gradient_names(value)}
        if source is None and not read:
            return False
        if len(read) + (source is not None) > 1:
            raise Refusal(value, "gradients of two computations combined")
        chain = source or next(iter(read.values()))
        if chain.applied:
            raise Refusal(value, "gradients read after the train op that applies them")
        chain.python_reads |= self._checked_reads(value, chain.call if source is not None else None)
        names = target_names(target)
        if names is None:
            raise Refusal(target, "gradients assigned to something other than plain names")
        chain.items.append(item)
        self.chains.update((name, chain) for name in names)
        self.scanner.bind(item, names, Kind.GRADIENTS)
        return True

    def finish(self) -> None:
        """Gradients no optimizer applies (fetched to be looked at, say) are read again as graph code."""
        unapplied = {id(chain): chain for chain in self.chains.values() if not chain.applied}
        for chain in unapplied.values():
            for item in chain.items:
                for name in item.defines:
                    del self.scanner.kinds[name]
                    del self.chains[name]
            for item in chain.items:
                value = only_small_statement(item.node).value
                self.scanner.graph_statement(item, item.defines, value)
                if value is chain.call and not chain.pairs and len(item.defines) == 1:
                    self.scanner.analyzer.tensor_lists.add(item.defines[0])  # `grads = tf.gradients(...)`

    def _apply(self, item: Item, target: cst.BaseExpression, call: cst.Call) -> None:
        bound = bind_arguments(call, _APPLY_GRADIENTS, "apply_gradients")
        applied = bound.get("grads_and_vars")
        if applied is None or not isinstance(target, cst.Name):
            raise Refusal(call, "apply_gradients must be assigned to a name of its own, with its gradients")
        names = self._gradient_names(applied)
        chain = self.chains[names[0]]
        if any(self.chains[name] is not chain for name in names):
            raise Refusal(applied, "gradients of two computations applied together")
        reads = self._checked_reads(applied, None)
        optimizer, step = self._optimizer_and_step(item, target, call, bound)
        if chain.optimizer is not None and chain.optimizer != optimizer:
            raise Refusal(call, "gradients computed by one optimizer and applied by another")
        train_op = TrainOp(target.value, optimizer, chain.loss, step, chain.var_list, call)
        train_op.gradients = GradientCode(chain.call, chain.pairs, [i.node for i in chain.items], applied)
        train_op.runs_update_ops = any(i.scopes.update_ops for i in [*chain.items, item])
        self.scanner.state.training.register(item, target.value, train_op)
        self.scanner.bind(item, (target.value,), Kind.TRAIN_OP)
        item.python_reads = item.python_reads | chain.python_reads | reads
        chain.applied = True

    def _apply_fed(self, item: Item, target: cst.BaseExpression, call: cst.Call, applied: cst.Call) -> None:
        """`train_op = optimizer.apply_gradients(zip(gradient_placeholders, variables))`: gradients
        computed elsewhere (accumulated over episodes in NumPy, say) are fed and applied; no tape."""
        if not isinstance(target, cst.Name):
            raise Refusal(call, "apply_gradients must be assigned to a name of its own")
        gradients, variables = (argument.value for argument in applied.args)
        optimizer, step = self._optimizer_and_step(item, target, call, bind_arguments(call, _APPLY_GRADIENTS,
                                                                                    "apply_gradients"))
        train_op = TrainOp(target.value, optimizer, gradients, step, variables, call, fed_gradients=applied)
        train_op.runs_update_ops = item.scopes.update_ops
        self.scanner.state.training.register(item, target.value, train_op)
        self.scanner.bind(item, (target.value,), Kind.TRAIN_OP)

    def _optimizer_and_step(self, item: Item, target: cst.Name, call: cst.Call,
                            bound: dict) -> tuple[str, str | None]:
        """The optimizer applying the gradients (created inline, it gets a name of its own) and the
        global step it increments."""
        receiver = call.func.value
        if isinstance(receiver, cst.Name):
            optimizer = self.scanner.block.aliases.get(receiver.value, receiver.value)
        else:
            optimizer = self.scanner.state.training.inline_optimizer(item, target.value, receiver)
        step = bound.get("global_step")
        if step is not None and not isinstance(step, cst.Name):
            raise Refusal(step, "apply_gradients(global_step=...) must name a variable")
        return optimizer, step.value if step is not None else None

    def _fed_gradients(self, call: cst.Call) -> cst.Call | None:
        """`zip(gradients, variables)` when `call` applies it, `gradients` listing placeholders (by name,
        or a name bound once to such a list) and `variables` the program's variables; else None."""
        applied = bind_arguments(call, _APPLY_GRADIENTS, "apply_gradients").get("grads_and_vars")
        if not (isinstance(applied, cst.Call) and isinstance(applied.func, cst.Name) and applied.func.value == "zip"
                and len(applied.args) == 2 and all(a.keyword is None and not a.star for a in applied.args)):
            return None
        gradients, variables = (argument.value for argument in applied.args)
        scanner = self.scanner
        listed = listed_names(gradients, items_definition(scanner.block.definitions, scanner.flattener.items))
        fed = bool(listed) and all(scanner.kinds.get(name) is Kind.PLACEHOLDER for name in listed)
        return applied if fed and self._lists_variables(variables) else None

    def _apply_call(self, value: cst.BaseExpression) -> cst.Call | None:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "apply_gradients" and (
                    self._is_optimizer(value.func.value)
                    or self.scanner.state.training.is_optimizer_creation(value.func.value)):
            return value
        return None

    def _source_call(self, value: cst.BaseExpression) -> _Chain | None:
        """A new chain when `value` holds `optimizer.compute_gradients(...)` or tf.gradients of variables."""
        chains = [chain for node in walk(value) if isinstance(node, cst.Call)
                  for chain in [self._compute_gradients(node) or self._tf_gradients(node)] if chain]
        if len(chains) > 1:
            raise Refusal(value, "several gradient computations in one statement")
        return chains[0] if chains else None

    def _compute_gradients(self, call: cst.Call) -> _Chain | None:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "compute_gradients"
                and self._is_optimizer(func.value)):
            return None
        bound = self._bound(call, _COMPUTE_GRADIENTS, "compute_gradients", "loss")
        optimizer = self.scanner.block.aliases.get(func.value.value, func.value.value)
        return _Chain(call, True, optimizer, bound["loss"], bound.get("var_list"))

    def _tf_gradients(self, call: cst.Call) -> _Chain | None:
        if self.scanner.analyzer.category(call.func)[0] != "tf.gradients":
            return None
        bound = bind_arguments(call, _TF_GRADIENTS, "tf.gradients")
        variables = bound.get("xs")
        if variables is None or not self._lists_variables(variables):
            return None  # with respect to tensors: graph code (a gradient penalty)
        bound = self._bound(call, _TF_GRADIENTS, "tf.gradients", "ys")
        if isinstance(variables, cst.Call):  # tf.trainable_variables(): every trainable variable so far
            variables = None
        return _Chain(call, False, None, bound["ys"], variables)

    def _bound(self, call: cst.Call, signature: list[str], what: str, loss: str) -> dict:
        bound = bind_arguments(call, signature, what)
        unmodelled = set(bound) - _PLACEMENT_ONLY - {loss, signature[1]}
        if unmodelled:
            raise Refusal(call, f"{what}({sorted(unmodelled)[0]}=...) is not modelled")
        if loss not in bound:
            raise Refusal(call, f"{what} without a loss")
        return bound

    def _lists_variables(self, node: cst.BaseExpression) -> bool:
        analyzer = self.scanner.analyzer
        if isinstance(node, cst.Call):
            return lists_trainable_variables(node, self.scanner.resolver.tf_name) and not node.args
        if isinstance(node, cst.Name):
            return node.value in analyzer.variable_list_names
        return isinstance(node, (cst.List, cst.Tuple)) and bool(node.elements) and all(
            isinstance(element.value, cst.Name) and self.scanner.kinds.get(element.value.value) is Kind.VARIABLE
            for element in node.elements)

    def _is_optimizer(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Name) and self.scanner.kinds.get(node.value) is Kind.OPTIMIZER

    def _gradient_names(self, node: cst.CSTNode) -> list[str]:
        return [name.value for name in load_names(node) if name.value in self.chains]

    def _checked_reads(self, value: cst.BaseExpression, source: cst.Call | None) -> set[str]:
        """The plain Python names `value` reads (outside the gradients call `source`), after checking
        that it reads no graph value but gradients and calls only TensorFlow ops and regrouping builtins."""
        skipped = {id(node) for node in walk(source)} if source is not None else set()
        local = {name.value for node in walk(value) if isinstance(node, (cst.CompFor, cst.Lambda))
                 for name in walk(node.target if isinstance(node, cst.CompFor) else node.params)
                 if isinstance(name, cst.Name)}
        reads = set()
        for node in walk(value):
            if isinstance(node, cst.Call) and id(node) not in skipped:
                self._check_call(node)
        for name in load_names(value):
            if id(name) in skipped or name.value in local or name.value in self.chains \
                    or self.scanner.analyzer.category(name)[0] is not None:  # `tf` itself
                continue
            kind = self.scanner.kinds.get(name.value, Kind.PYTHON)
            if kind is Kind.PYTHON:
                reads.add(name.value)
            elif not kind.is_state:
                raise Refusal(name, f"gradients combined with the {kind.value} '{name.value}'")
        return reads

    def _check_call(self, call: cst.Call) -> None:
        tf_name, category, _ = self.scanner.analyzer.category(call.func)
        if category is Category.OP:
            return
        if tf_name is None and isinstance(call.func, cst.Name) and call.func.value in _REGROUPING:
            return
        what = tf_name or (call.func.value if isinstance(call.func, cst.Name) else "a call")
        raise Refusal(call, f"gradients passed to '{what}', which is neither a TensorFlow op nor zip / list")
