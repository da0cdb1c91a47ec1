"""Assignments whose value creates something other than a tensor: placeholders, variables (also in
dicts), the global step, optimizers, schedules, initializers, train ops, init ops, sessions, graphs.
Each is converted in place (state) or dropped; see transforms/graph/writing/state.py and transforms/graph/training/optimizers.py."""
from __future__ import annotations

from dataclasses import replace

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.graph.analysis.model import Item, Kind
from transforms.graph.analysis.placeholders import read_placeholder
from transforms.graph.writing.state import (
    convert_get_variable,
    convert_initializer,
    convert_variable,
    draws_at_each_call,
    global_step_variable,
)
from transforms.common.syntax import Refusal, code, expr, only_small_statement, replace_nodes, walk, with_value
from transforms.graph.training.train_ops import TrainOpConverter
from transforms.graph.training.optimizers import convert_schedule, create_train_op_call, minimize_call

_VANISHING = {Category.PLACEHOLDER: Kind.PLACEHOLDER, Category.INIT_OP: Kind.INIT_OP,
              Category.SESSION: Kind.SESSION, Category.GRAPH_CONTEXT: Kind.SESSION}


class StateConverter:
    def __init__(self, scanner, names: NameAllocator) -> None:
        self.scanner = scanner
        self.names = names
        self.training = TrainOpConverter(scanner, names)
        self.factories: dict[str, bool] = {}  # variable-factory functions -> whether their variable trains
        self.fresh_initializers: dict[str, str] = {}  # unseeded random initializer -> its Keras construction

    @property
    def block(self):
        return self.scanner.block

    def convert(self, item: Item, name: str, value: cst.BaseExpression) -> bool:
        """Classify and convert `name = value` when value creates state; False when it does not."""
        if isinstance(value, cst.Dict) and value.elements and all(self._is_variable(e.value) for e in value.elements):
            self._variable_dict(item, name, value)
            return True
        if self.scanner.flattener.is_update_ops(value) and isinstance(value, cst.Call):
            item.kind = Kind.UPDATE_OPS
            return True
        if minimize_call(value) is not None:
            self.training.train_op(item, name, minimize_call(value))
            return True
        if create_train_op_call(value, self.scanner.analyzer.category) is not None:
            self.training.slim_train_op(item, name, value)
            return True
        if not isinstance(value, cst.Call):
            return False
        if self._dataset_value(item, value):
            return True
        if isinstance(value.func, cst.Name) and value.func.value in self.factories:
            self._factory_variable(item, name, value)
            return True
        tf_name, category, _ = self.scanner.analyzer.category(value.func)
        if self.scanner.analyzer.is_initializer_group(value):
            item.kind = Kind.INIT_OP
            return True
        if category in _VANISHING:
            item.kind = _VANISHING[category]
            if category is Category.PLACEHOLDER:
                with_default = tf_name.endswith("_with_default")
                self.block.placeholders[name] = read_placeholder(value, name, with_default)
            return True
        if category is Category.SAVER:
            self.scanner.checkpoints.read_saver(item, name, value)
            return True
        if category is Category.SCHEDULE and self._schedule_as_tensor(item, name, value, tf_name):
            return True
        converted = self._state_value(item, name, value, tf_name, category)
        if converted is None:
            return False
        item.emit = [with_value(item.node, converted)]
        return True

    def _dataset_value(self, item: Item, value: cst.Call) -> bool:
        """`dataset = tf.data.Dataset...` stays; `iterator = dataset.make_one_shot_iterator()` becomes
        `iter(dataset)` (see transforms/graph/inputs/datasets.py)."""
        datasets = self.scanner.analyzer.datasets
        if datasets.is_pipeline(value):
            self.scanner.analyzer.analyze(value)  # refuses pipelines built from graph values
            item.kind, item.emit = Kind.DATASET, [item.node]
            return True
        source = datasets.one_shot_source(value)
        if source is None:
            return False
        self.scanner.analyzer.analyze(source)
        item.kind, item.emit = Kind.ITERATOR, [with_value(item.node, f"iter({code(source)})")]
        return True

    def _state_value(self, item: Item, name: str, call: cst.Call, tf_name: str, category) -> str | None:
        if category is Category.VARIABLE:
            item.kind = Kind.VARIABLE
            return self._variable(item, name, call, tf_name)
        if category is Category.GLOBAL_STEP:
            item.kind = Kind.VARIABLE
            self.block.global_steps.add(name)
            self.block.trainable_state[name] = False
            return global_step_variable()
        if category is Category.OPTIMIZER:
            item.kind = Kind.OPTIMIZER
            return self.training.optimizer(item, name, call, tf_name)
        if category is Category.SCHEDULE:
            item.kind = Kind.SCHEDULE
            converted, step = convert_schedule(call, tf_name)
            if not (isinstance(step, cst.Name) and step.value in self.block.global_steps):
                raise Refusal(step, f"{tf_name} must read a global step that starts at 0")
            self.block.schedules[name] = step.value
            return converted
        if category is Category.INITIALIZER:
            item.kind = Kind.INITIALIZER
            converted = convert_initializer(call, tf_name)
            self.fresh_initializers.pop(name, None)
            if draws_at_each_call(call, tf_name):
                self.fresh_initializers[name] = converted
            return converted
        return None

    def _schedule_as_tensor(self, item: Item, name: str, call: cst.Call, tf_name: str) -> bool:
        """A schedule read at an expression of the global step (`batch * BATCH_SIZE`), or read by more than
        the optimizers it is given to (fetched, summarised): its value is computed in the steps, from the
        variables it reads, as TF1 computed it at each run; its optimizers get that rate in each train
        step, as a fed rate. False for a schedule the Keras optimizer can read at its own step count."""
        converted, step = convert_schedule(call, tf_name)
        target = only_small_statement(item.node).targets[0].target
        if not (isinstance(target, cst.Name) and target.value == name):
            return False
        at_global_step = isinstance(step, cst.Name) and step.value in self.block.global_steps
        if at_global_step and not self._read_beyond_optimizers(target):
            return False
        reads = self.scanner.analyzer.analyze(step).reads
        if not any(self.scanner.kinds[n] is Kind.VARIABLE for n in reads):
            raise Refusal(step, f"{tf_name} must read a global step that starts at 0")
        schedule = self.names.fresh(f"{name}_schedule")
        self.scanner.graph_statement(item, (name,), step)
        item.emit = [with_value(item.node, converted, schedule)]
        item.body = with_value(item.node, f"{schedule}({code(step)})")
        item.python_reads = item.python_reads | {schedule}
        return True

    def _read_beyond_optimizers(self, target: cst.Name) -> bool:
        resolver = self.scanner.analyzer.resolver
        for assignment in resolver.assignments_of(target):
            for access in assignment.references:
                argument = resolver.parent(access.node)
                call = resolver.parent(argument) if isinstance(argument, cst.Arg) else None
                if not (isinstance(call, cst.Call) and self._is_optimizer(call)):
                    return True
        return False

    def _is_optimizer(self, call: cst.Call) -> bool:
        return self.scanner.analyzer.category(call.func)[1] in (Category.OPTIMIZER, Category.REFUSED_OPTIMIZER)

    def _factory_variable(self, item: Item, name: str, call: cst.Call) -> None:
        """`W = weight_variable([784, 10])`: the function creates the variable, now eagerly, once."""
        facts = self.scanner.analyzer.analyze_arguments(call)
        if facts.reads or facts.layer_calls or facts.run_calls:
            raise Refusal(call, f"arguments of '{call.func.value}' depend on graph values")
        item.kind, item.emit = Kind.VARIABLE, [item.node]
        self.block.trainable_state[name] = self.factories[call.func.value]

    def _is_variable(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.scanner.analyzer.category(node.func)[1] is Category.VARIABLE

    def _variable(self, item: Item, name: str, call: cst.Call, tf_name: str) -> str:
        facts = self.scanner.analyzer.analyze_arguments(call)
        graph_reads = {n for n in facts.reads if self.scanner.kinds[n].is_graph or n in self.block.trainable_state}
        if graph_reads or facts.layer_calls or facts.run_calls:
            raise Refusal(call, f"initial value of '{name}' depends on other graph values")
        if tf_name == "tf.Variable":
            converted, trainable = convert_variable(self._with_fresh_initializers(call), item.scopes)
        else:
            initializer = next((a.value for i, a in enumerate(call.args) if (not a.keyword and i == 3)
                                or (a.keyword and a.keyword.value == "initializer")), None)
            known = self.scanner.initializer_code(initializer) if initializer is not None else None
            scopes = item.scopes
            if scopes.initializer is not None:
                scope_default = self.scanner.initializer_code(scopes.initializer)
                if scope_default is None:
                    raise Refusal(scopes.initializer, "variable_scope initializer is not a known initializer")
                scopes = replace(scopes, initializer=expr(scope_default))
            converted, trainable = convert_get_variable(call, scopes, known)
        self.block.trainable_state[name] = trainable
        if not trainable and isinstance(call.args[0].value, cst.Integer) and call.args[0].value.value == "0":
            self.block.global_steps.add(name)
        return converted

    def _with_fresh_initializers(self, call: cst.Call) -> cst.Call:
        """`tf.Variable(init([3, 2]))`: TF1 drew new values at each call of an unseeded initializer,
        a Keras initializer object returns the same values at each call, so each call gets its own."""
        replacements = {id(node.func): (lambda _, text=self.fresh_initializers[node.func.value]: expr(text))
                        for node in walk(call) if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                        and node.func.value in self.fresh_initializers
                        and self.scanner.resolver.is_block_reference(node.func)}
        return replace_nodes(call, replacements)

    def _variable_dict(self, item: Item, name: str, value: cst.Dict) -> None:
        """`weights = {'h1': tf.Variable(...), ...}`: each variable converted, the dict's layout kept."""
        replacements = {}
        for element in value.elements:
            converted = self._variable(item, name, element.value, self._tf_name(element.value))
            if not self.block.trainable_state[name]:
                raise Refusal(element, "non-trainable variable inside a dict of variables")
            replacements[id(element.value)] = lambda _, text=converted: expr(text)
        item.kind = Kind.VARIABLE_DICT
        self.block.variable_dicts.add(name)
        item.emit = [replace_nodes(item.node, replacements)]

    def _tf_name(self, call: cst.Call) -> str | None:
        return self.scanner.analyzer.category(call.func)[0]

    def initializer_code(self, node: cst.BaseExpression) -> str | None:
        """The Keras initializer for a TF1 initializer call; a name bound to one is already converted."""
        if isinstance(node, cst.Name) and self.scanner.kinds.get(node.value) is Kind.INITIALIZER:
            return self.fresh_initializers.get(node.value, node.value)
        if isinstance(node, cst.Call):
            name, category, _ = self.scanner.analyzer.category(node.func)
            if category is Category.INITIALIZER:
                return convert_initializer(node, name)
        return None
