"""Train ops: `optimizer.minimize(loss, global_step=..., var_list=...)` read into a TrainOp (the step
functions turn it into a GradientTape step), with its optimizer converted to Keras. An optimizer may
minimize several losses (a GAN's one Adam for both networks): its Keras optimizer is built for all
their variables (FunctionWriter.optimizer_builds), and its state shared between the steps is what
TF1 shared (TF1Adam's beta powers, advanced by each step). A decaying learning rate becomes a Keras
schedule, which follows `optimizer.iterations`: the global step when the optimizer's one minimize()
increments it. Otherwise (another op increments the step, or none does, or several minimize() calls
share the optimizer) the optimizer reads the schedule at the global step's value each time it
applies gradients, `learning_rate=lambda: rate(global_step)`, as TF1's train op did."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.analysis.model import Item, Kind
from transforms.graph.writing.renames import renamed_reads
from transforms.common.syntax import Refusal, expr, replace_nodes, walk, with_value
from transforms.graph.training.optimizers import (concatenated_lists, convert_optimizer, learning_rate_argument,
                                                  read_create_train_op, read_minimize)


class TrainOpConverter:
    def __init__(self, scanner, names) -> None:
        self.scanner = scanner
        self.names = names
        self.optimizer_schedules: dict[str, str | None] = {}
        self.minimized: set[str] = set()
        self.fed_rates: dict[str, tuple[cst.BaseExpression, set[str]]] = {}  # optimizer -> (rate, its reads)
        self.emulated: dict[str, tuple[cst.Call, str, str]] = {}  # optimizer -> (TF1 call, TF1 name, class)
        self.creations: dict[str, Item] = {}  # optimizer -> the item whose emitted code creates it
        self.step_read_rates: set[str] = set()  # optimizers whose schedule is read at the global step

    @property
    def block(self):
        return self.scanner.block

    def optimizer(self, item: Item, name: str, call: cst.Call, tf_name: str) -> str:
        """The Keras optimizer for a TF1 optimizer call bound to `name`. A learning rate fed through a
        placeholder (or computed from one), or held in a variable the program assigns (`lr = tf.Variable(0.01)`,
        `sess.run(lr.assign(lr * 0.5))`), is set on the optimizer in each train step instead: TF1 read
        it each time the train op ran."""
        rate = learning_rate_argument(call, tf_name)
        analyzer = self.scanner.analyzer
        for arg in call.args:
            facts = analyzer.analyze(arg.value)
            graph = {n for n in facts.reads if self.scanner.kinds[n] is not Kind.SCHEDULE}
            if (graph or facts.builds_ops) and arg.value is not rate:
                raise Refusal(arg, f"{tf_name} hyper-parameters computed in the graph are not modelled")
            if graph or facts.builds_ops:
                if any(self.scanner.kinds[n] not in (Kind.PLACEHOLDER, Kind.TENSOR, Kind.VARIABLE) for n in graph):
                    raise Refusal(arg, f"{tf_name} learning rate computed from graph state")
                self.fed_rates[name] = (rate, facts.reads)
        schedules = [n for n in analyzer.analyze_arguments(call).reads if self.scanner.kinds[n] is Kind.SCHEDULE]
        self.optimizer_schedules[name] = schedules[0] if schedules else None
        converted, emulation = convert_optimizer(call, tf_name, set(self.block.schedules), name in self.fed_rates)
        if emulation:
            self.emulated[name] = (call, tf_name, emulation)
        self.creations[name] = item
        return converted

    def train_op(self, item: Item, name: str, call: cst.Call) -> None:
        """`name = optimizer.minimize(...)`: a TrainOp, its optimizer converted when created inline."""
        receiver = call.func.value
        if isinstance(receiver, cst.Name) and self.scanner.kinds.get(receiver.value) is Kind.OPTIMIZER:
            optimizer = self.block.aliases.get(receiver.value, receiver.value)
        elif self.is_optimizer_creation(receiver):
            optimizer = self.inline_optimizer(item, name, receiver)
        else:
            self.scanner.analyzer.analyze(receiver)  # refuses a known-but-unconvertible optimizer with its reason
            raise Refusal(call, "minimize() on something that is not a known optimizer")
        train_op = read_minimize(call, name, optimizer)
        train_op.runs_update_ops = item.scopes.update_ops
        self.register(item, name, train_op)

    def is_optimizer_creation(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.scanner.analyzer.category(node.func)[1] is Category.OPTIMIZER

    def inline_optimizer(self, item: Item, train_op: str, creation: cst.Call) -> str:
        """The name of the Keras optimizer for `tf.train.AdamOptimizer(...)` created inline, in
        `train_op = tf.train.AdamOptimizer(...).minimize(loss)`; `item` now creates it."""
        # `optimizer = tf.train.AdamOptimizer().minimize(loss)` names the train op `optimizer`;
        # the name is free again once the train op is gone, and fits the Keras optimizer best.
        optimizer = train_op if train_op == "optimizer" else self.names.fresh("optimizer")
        tf_name = self.scanner.analyzer.category(creation.func)[0]
        item.emit = [with_value(item.node, self.optimizer(item, optimizer, creation, tf_name), optimizer)]
        return optimizer

    def slim_train_op(self, item: Item, name: str, call: cst.Call) -> None:
        """`name = slim.learning.create_train_op(total_loss, optimizer, ...)` (see read_create_train_op)."""
        optimizer = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else None
        if not (isinstance(optimizer, cst.Name) and self.scanner.kinds.get(optimizer.value) is Kind.OPTIMIZER):
            raise Refusal(call, "create_train_op with an optimizer that is not a name bound to a known optimizer")
        optimizer_name = self.block.aliases.get(optimizer.value, optimizer.value)
        self.register(item, name, read_create_train_op(call, name, optimizer_name, self.block.global_steps))
        self.scanner.analyzer.valued_train_ops.add(name)

    def register(self, item: Item, name: str, train_op) -> None:
        """Record a train op read from `item` (its reads: the loss's, the var_list's, the global step)."""
        optimizer = train_op.optimizer
        if optimizer in self.minimized and self.optimizer_schedules.get(optimizer):
            self._read_rate_at_global_step(optimizer)  # a Keras schedule would count the steps of both
        self.minimized.add(optimizer)
        if train_op.global_step:
            train_op.global_step = self.block.aliases.get(train_op.global_step, train_op.global_step)
        self._check_train_op(train_op)
        facts = self.scanner.analyzer.analyze(train_op.loss)
        if facts.layer_calls or facts.run_calls or not (facts.reads or facts.builds_ops):
            raise Refusal(train_op.loss, "training something that is not a plain graph tensor")
        for part in concatenated_lists(train_op.var_list) if train_op.var_list is not None else ():
            if isinstance(part, cst.Name) and part.value not in self.scanner.analyzer.variable_list_names:
                raise Refusal(part, "minimize(var_list=<name>): the name must hold tf.trainable_variables(...) "
                              "or a list of variables")
        var_list = self.scanner.analyzer.analyze(train_op.var_list).reads if train_op.var_list else set()
        if var_list & set(self.block.aliases):
            raise Refusal(train_op.var_list, "var_list names a variable whose name was reused")
        extra = {n for n in (train_op.global_step, optimizer) if n} | var_list
        if optimizer in self.fed_rates:
            train_op.learning_rate, rate_reads = self.fed_rates[optimizer]
            extra |= renamed_reads(self.block, item, rate_reads)
        item.kind, item.reads = Kind.TRAIN_OP, frozenset(renamed_reads(self.block, item, facts.reads) | extra)
        item.python_reads = frozenset(facts.python_reads)
        self.block.train_ops[name] = train_op

    def _check_train_op(self, train_op) -> None:
        schedule = self.optimizer_schedules.get(train_op.optimizer)
        if schedule and self.block.schedules[schedule] != train_op.global_step:
            self._read_rate_at_global_step(train_op.optimizer)
        step = train_op.global_step
        if step and step not in self.block.trainable_state:
            raise Refusal(train_op.node, f"global_step '{step}' is not a variable of this program")

    def _read_rate_at_global_step(self, optimizer: str) -> None:
        """Make the optimizer read its schedule at the global step each time it applies gradients."""
        if optimizer in self.step_read_rates:
            return
        self.step_read_rates.add(optimizer)
        schedule = self.optimizer_schedules[optimizer]
        rate = f"lambda: {schedule}({self.block.schedules[schedule]})"
        item = self.creations[optimizer]
        item.emit = [_with_learning_rate(statement, schedule, rate) for statement in item.emit]


def _with_learning_rate(statement: cst.BaseStatement, schedule: str, rate: str) -> cst.BaseStatement:
    """`statement` with its `learning_rate=<schedule>` arguments given `rate` instead."""
    replacements = {id(node): (lambda updated: updated.with_changes(value=expr(rate))) for node in walk(statement)
                    if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "learning_rate"
                    and isinstance(node.value, cst.Name) and node.value.value == schedule}
    return replace_nodes(statement, replacements)

