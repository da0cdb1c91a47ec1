"""Read the statements of a graph block one by one and decide what each is (see analysis/model.py, Kind):
placeholders and sessions vanish, state is converted in place, graph statements are kept aside for
the step functions, plain Python stays. Refuses (raises Refusal) whatever it cannot place."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.outputs.checkpoints import Checkpoints
from transforms.graph.analysis.assigns import AssignReader
from transforms.graph.analysis.conditional import branch_assignments, branch_tests, calls_anything
from transforms.graph.analysis.exprs import ExprAnalyzer
from transforms.graph.analysis.recognize import Resolver
from transforms.graph.analysis.flatten import Flattener
from transforms.graph.analysis.helper_calls import helper_layer_uses
from transforms.graph.layers.keras_layers import LayerConverter, LayerUse, NameAllocator
from transforms.graph.layers.variable_lists import lists_trainable_variables, name_filtered
from transforms.graph.training.gradients import GradientReader
from transforms.graph.training.metrics import MetricConverter
from transforms.graph.training.optimizers import concatenated_lists
from transforms.graph.structure.modules import ModuleHelper
from transforms.graph.analysis.model import GraphBlock, Item, Kind, Scopes
from transforms.graph.writing.renames import renamed_reads, state_name
from transforms.graph.analysis.statevalues import StateConverter
from transforms.graph.inputs.queues import QueueReader
from transforms.graph.rnn.cells import RnnConverter
from transforms.graph.outputs.summaries import SummaryConverter
from transforms.common.syntax import Refusal, argument_code, code, expr, retarget, target_names, with_value

# What may sit under `tf.control_dependencies(<UPDATE_OPS>)`: the train op (which then runs the
# updates), the gradients it applies, and an optimizer (creating one makes no op).
_UPDATE_OPS_DEPENDENTS = (Kind.TRAIN_OP, Kind.GRADIENTS, Kind.OPTIMIZER)
_CREATED_OBJECTS = (Category.PLACEHOLDER, Category.VARIABLE, Category.GLOBAL_STEP, Category.SAVER, Category.OPTIMIZER,
                    Category.SCHEDULE, Category.LAYER, Category.RNN_CELL, Category.RNN_RUN)


class GraphScanner:
    def __init__(self, resolver: Resolver, helpers: set[str], names: NameAllocator) -> None:
        self.resolver = resolver
        self.kinds: dict[str, Kind] = {}
        self.analyzer = ExprAnalyzer(resolver, self.kinds, helpers)
        self.checkpoints = self.analyzer.checkpoints = Checkpoints(self)
        self.names = names
        self.state = StateConverter(self, names)
        self.initializer_code = self.state.initializer_code
        self.layers = LayerConverter(names, self.initializer_code)
        self.layer_uses: dict[int, list[LayerUse]] = {}
        self.metrics = MetricConverter(self)
        self.summaries = SummaryConverter(self)
        self.queues = QueueReader(self)
        self.rnn = RnnConverter(self)
        self.assigns = AssignReader(self)
        self.gradients = GradientReader(self)
        self.run_calls: list[tuple[int, cst.Call]] = []
        self.session_closes: list[cst.Call] = []
        self.feed_dicts: list[cst.Assign] = []
        self.helper_defs: dict[str, cst.FunctionDef] = {}
        self.converted_helpers: set[str] = set()     # model functions whose layers were built once
        self.layer_helper_settings: dict[str, dict[str, str]] = {}  # model function -> its building call's layer settings
        self.helper_layer_uses: list[LayerUse] = []
        self.regularization_reads: list[tuple[int, cst.Call]] = []  # (item index, call): transforms/graph/layers/regularization.py
        self.helper_scope_blocks: list[cst.With] = []  # scope blocks in model functions, unwrapped
        self.module_layers: dict[str, list[LayerUse]] = {}  # module-level model function -> its layers
        self.helper_rewrites: dict = {}  # node id -> replacement maker, in functions running RNNs
        self.module_helpers: dict[str, ModuleHelper] = {}  # functions with variables -> their tf.Module
        self.module_calls: list[cst.Call] = []
        self.cell_variable_functions: set[str] = set()  # transforms/graph/rnn/cell_variables.py
        self.helper_uses: dict[int, set[str]] = {}
        self.block = GraphBlock([], None, [], self.kinds, {}, {}, {})
        self.analyzer.summary_names = self.block.summaries
        self.analyzer.member_aliases = self.block.member_aliases

    def scan(self, statements: list[cst.BaseStatement], owner: cst.CSTNode) -> tuple[GraphBlock, Flattener]:
        flattener = Flattener(self.analyzer, self.classify)
        self.flattener = flattener
        flattener.flatten(statements, Scopes(), [])
        self.gradients.finish()
        self.block.statements, self.block.scope_owner, self.block.items = statements, owner, flattener.items
        return self.block, flattener

    # -- classification ----------------------------------------------------------------------------

    def classify(self, item: Item) -> None:
        self._classify(item)
        if item.scopes.update_ops and item.kind not in _UPDATE_OPS_DEPENDENTS:
            raise Refusal(item.node, "only train ops (their optimizer and gradients) may depend on the UPDATE_OPS "
                                     "collection")

    def _classify(self, item: Item) -> None:
        statement = item.node
        if isinstance(statement, cst.If) and self._conditional_graph(item, statement):
            return
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            self._python(item)
            return
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            self._assign(item, small.targets[0].target, small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self._assign(item, small.target, small.value)
        elif isinstance(small, cst.AugAssign) and self._is_tensor_name(small.target):
            self.graph_statement(item, (small.target.value,), small, extra_reads={small.target.value})
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            self._call_statement(item, small.value)
        else:
            self._python(item)

    def _conditional_graph(self, item: Item, statement: cst.If) -> bool:
        """An `if` on plain Python whose branches bind graph values: one graph statement
        (analysis/conditional.py); False for anything else, left to `_python`."""
        assigns = branch_assignments(statement)
        tests = branch_tests(statement)
        if assigns is None or any(self._reads_graph(test) or calls_anything(test) for test in tests):
            return False
        created = [name for name in map(self._created_object, assigns) if name]
        if created:
            raise Refusal(statement, f"{created[0]} created under a Python `if` is not modelled")
        if not any(self._reads_graph(assign.value) for assign in assigns):
            return False
        bound = [target_names(assign.targets[0].target) for assign in assigns]
        if None in bound:
            raise Refusal(statement, "graph value assigned to something other than plain names")
        names = tuple(dict.fromkeys(name for names in bound for name in names))
        self.graph_statement(item, names, statement)
        if self.layer_uses[item.index]:
            raise Refusal(statement, "layers created under a Python `if` are not modelled")
        item.python_reads = item.python_reads - set(names)  # bound here, not captured
        return True

    def _created_object(self, assign: cst.Assign) -> str | None:
        """`tf.Variable(...)` / `tf.placeholder(...)` / an optimizer, layer or cell: what a branch creates."""
        if not isinstance(assign.value, cst.Call):
            return None
        name, category, _ = self.analyzer.category(assign.value.func)
        return f"{name} ({category.value})" if category in _CREATED_OBJECTS else None

    def _reads_graph(self, node: cst.BaseExpression) -> bool:
        facts = self.analyzer.analyze(node)
        return facts.builds_ops or any(self.kinds[name].is_graph or self.kinds[name].is_state for name in facts.reads)

    def _is_tensor_name(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Name) and self.kinds.get(node.value) is Kind.TENSOR

    def _call_statement(self, item: Item, call: cst.Call) -> None:
        _, category, _ = self.analyzer.category(call.func)
        if category is Category.SEED:
            seed = f"tf.random.set_seed({argument_code(call)})"
            item.kind, item.emit = Kind.INITIALIZER, [with_value(item.node, seed)]
        elif category is Category.DROPPED:
            item.kind = Kind.INIT_OP
        elif self.summaries.statement(item, call) or self.queues.statement(item, call):
            return
        else:
            self._python(item)

    def _python(self, item: Item) -> None:
        facts = self.analyzer.analyze(item.node)
        graph_reads = {name for name in facts.reads if self.kinds[name].is_graph}
        if isinstance(item.node, cst.FunctionDef) and not graph_reads:
            facts.builds_ops, facts.reads = False, set()  # a helper: checked where graph code calls it
        if facts.builds_ops or facts.reads:
            names = ", ".join(sorted(facts.reads)) or "new graph ops"
            raise Refusal(item.node, f"plain Python code uses graph values ({names}) outside a session run")
        self.run_calls += [(item.index, call) for call in facts.run_calls]
        self.session_closes += facts.session_closes
        self.feed_dicts += facts.feed_dicts

    def _lists_variables(self, value: cst.BaseExpression) -> bool:
        """`tf.trainable_variables(...)`, or a list / tuple display of names bound to variables
        (`theta_D = [D_W1, D_W2, D_b1, D_b2]`), or such lists concatenated (`theta_G1 + theta_G2`):
        what minimize(var_list=...) may be given."""
        if isinstance(value, cst.Call):
            return lists_trainable_variables(value, self.resolver.tf_name)
        if isinstance(value, cst.ListComp):
            return self._filtered_variable_list(value)
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            return all(self._lists_variables(part) or (
                isinstance(part, cst.Name) and part.value in self.analyzer.variable_list_names)
                for part in concatenated_lists(value))
        return isinstance(value, (cst.List, cst.Tuple)) and bool(value.elements) and all(
            isinstance(element.value, cst.Name) and self.kinds.get(element.value.value) is Kind.VARIABLE
            for element in value.elements)

    def _filtered_variable_list(self, comprehension: cst.ListComp) -> bool:
        """`[v for v in t_vars if 'd_' in v.name]` over tf.trainable_variables() (or a name bound to
        it): registered to become the list TF1 selected (transforms/graph/layers/variable_lists.py)."""
        filtered = name_filtered(comprehension)
        if filtered is None:
            return False
        source, selects = filtered
        if isinstance(source, cst.Name):
            call = self.analyzer.variable_list_calls.get(source.value)
        else:
            call = source if lists_trainable_variables(source, self.resolver.tf_name) else None
        if call is None:
            return False
        self.analyzer.filtered_lists[id(comprehension)] = (comprehension, call, selects)
        return True

    def _assign(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        small = item.node.body[0]
        if isinstance(small, cst.Assign) and self.analyzer.is_feed_dict(small):
            self._python(item)
            return
        if self.metrics.convert(item, target, value) or self.gradients.assign(item, target, value):
            return
        if isinstance(target, cst.Name) and self._lists_variables(value):
            self.analyzer.variable_list_names.add(target.value)  # may be a minimize(var_list=...)
            if isinstance(value, cst.Call):
                self.analyzer.variable_list_calls[target.value] = value
        value = self._inline_iterator(item, value)
        if self.summaries.assign(item, target, value) or self.queues.assign(item, target, value):
            return
        if self._rnn(item, target, value) or self.assigns.convert(item, target, value):
            return
        if isinstance(target, cst.Name):
            name = state_name(self.kinds, self.names, item, target.value)
            if self.state.convert(item, name, value):
                if name != target.value:
                    item.emit[0] = retarget(item.emit[0], name)
                    self.block.aliases[target.value] = name
                self.bind(item, (name,), item.kind)
                return
        facts = self.analyzer.analyze(value)
        if not (facts.builds_ops or facts.reads):
            self._python(item)
            return
        names = target_names(target)
        if names is None:
            raise Refusal(target, "graph value assigned to something other than plain names")
        self.graph_statement(item, names, value)

    def _rnn(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.List, cst.ListComp)) and self.rnn.is_cell_list(value):
            self.rnn.cell_list(item, target, value)
            return True
        if self.rnn.is_zero_state(value):
            self.rnn.zero_state(item, target, value)
            return True
        if not isinstance(value, cst.Call):
            return False
        tf_name, category, _ = self.analyzer.category(value.func)
        if category is Category.RNN_CELL:
            self.rnn.cell(item, target, value, tf_name)
        elif category is Category.RNN_RUN:
            self.rnn.run(item, target, value, tf_name)
        else:
            return False
        return True

    def _inline_iterator(self, item: Item, value: cst.BaseExpression) -> cst.BaseExpression:
        """`x, y = dataset.make_one_shot_iterator().get_next()`: the iterator is created here, once,
        and the step functions read its next element."""
        datasets = self.analyzer.datasets
        receiver = datasets.next_element_iterator(value)
        source = datasets.one_shot_source(receiver) if receiver is not None else None
        if source is None:
            return value
        self.analyzer.analyze(source)  # refuses pipelines built from graph values
        iterator = self.names.fresh("iterator")
        datasets.inline_iterators.add(iterator)
        self.kinds[iterator] = Kind.ITERATOR
        item.emit = [with_value(item.node, f"iter({code(source)})", iterator)]
        item.body = with_value(item.node, f"{iterator}.get_next()")
        return expr(f"{iterator}.get_next()")

    def graph_statement(self, item: Item, names: tuple[str, ...], node: cst.CSTNode,
                        extra_reads: set[str] = frozenset(), extra_uses: list[LayerUse] = ()) -> None:
        facts = self.analyzer.analyze(node)
        if facts.run_calls or facts.checkpoint_calls:
            raise Refusal((facts.run_calls or facts.checkpoint_calls)[0], "a session run inside graph-building code")
        not_tensors = {n for n in facts.reads if self.kinds[n] in (Kind.OPTIMIZER, Kind.SCHEDULE, Kind.INITIALIZER)}
        if not_tensors:
            raise Refusal(node, f"{', '.join(sorted(not_tensors))} used as a tensor")
        uses = [self.layers.convert(call, self.analyzer.category(call.func)[0]) for call in facts.layer_calls]
        uses += helper_layer_uses(self, item, facts) + list(extra_uses)
        self.layer_uses[item.index] = uses + [use for call in facts.helper_call_nodes
                                              for use in self.module_layers.get(call.func.value, [])]
        self.helper_uses[item.index] = facts.helper_calls
        self.regularization_reads += [(item.index, call) for call in facts.regularization_calls]
        item.emit += [with_value(item.node, use.construction, use.object_name) for use in uses if use.construction]
        item.layers += [use.object_name for use in uses]
        item.reads = frozenset(renamed_reads(self.block, item, facts.reads | set(extra_reads)) | set(item.layers))
        item.python_reads = frozenset(facts.python_reads)
        self.block.layer_objects.update(use.object_name for use in uses if use.has_weights)
        self.bind(item, names, Kind.TENSOR)

    def bind(self, item: Item, names: tuple[str, ...], kind: Kind) -> None:
        item.kind, item.defines = kind, names
        for name in names:
            previous = self.kinds.get(name)
            if previous is not None and previous is not kind:
                raise Refusal(item.node, f"'{name}' is bound to both a {previous.value} and a {kind.value}")
            self.kinds[name] = kind
            if kind in (Kind.TENSOR, Kind.PLACEHOLDER, Kind.TRAIN_OP):
                self.block.definitions.setdefault(name, []).append(item.index)
