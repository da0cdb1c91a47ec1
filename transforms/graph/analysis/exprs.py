"""What an expression in graph-building code is: which block names it reads, whether it builds graph
ops, which layers and run sites it contains. Anything it cannot place raises a Refusal."""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.inputs.datasets import DatasetReader
from transforms.graph.analysis.assigns import ASSIGN_METHODS, assignment_outside_statement
from transforms.graph.analysis.model import Kind
from transforms.graph.analysis.recognize import ExprFacts, Resolver, SiteRecognizer
from transforms.common.syntax import Refusal, children, code
from transforms.graph.layers.variable_lists import lists_trainable_variables, name_filtered, name_tested_iteration

class ExprAnalyzer(SiteRecognizer):
    """Reads expressions against the kinds of the names bound so far in the block."""

    def __init__(self, resolver: Resolver, kinds: dict[str, Kind], helpers: set[str]) -> None:
        super().__init__(resolver, kinds)
        self.helpers = helpers
        self.lenient = False  # True while reading function definitions
        self.checkpoints = None  # the scan's outputs.checkpoints.Checkpoints
        self.variable_lists: dict[int, cst.Call] = {}  # tf.trainable_variables() calls (transforms/graph/layers/variable_lists.py)
        self.variable_list_names: set[str] = set()  # names bound to one, at block level
        self.variable_list_calls: dict[str, cst.Call] = {}  # name -> the tf.trainable_variables() bound to it
        self.fetched_variables: Callable[[str], list[str] | None] = lambda name: None  # variable_lists.py
        self.rebindings: dict[str, list[cst.Name]] = {}  # graph tensor name -> plain code binding it anew
        self.filtered_lists: dict[int, tuple[cst.ListComp, cst.Call, Callable[[str], bool]]] = {}  # variable_lists.py
        self.variable_iterations: dict[int, tuple[cst.CSTNode, cst.Call, Callable[[str], bool] | None]] = {}  # ditto
        self.datasets = DatasetReader(self)
        self.tensor_lists: set[str] = set()  # graph names holding a list of tensors (tf.gradients' result)
        self.summary_names: set[str] = set()  # graph names holding summary dicts (transforms/graph/outputs/summaries.py)
        self.valued_train_ops: set[str] = set()  # train ops whose run gives the loss (slim's create_train_op)
        self.member_aliases: dict[int, str] = {}  # `state.h` of an LSTM and the like (transforms/graph/rnn/cells.py)

    def analyze(self, node: cst.CSTNode) -> ExprFacts:
        facts = ExprFacts()
        self.lenient = isinstance(node, cst.FunctionDef)
        try:
            self._visit(node, facts)
        finally:
            self.lenient = False
        return facts

    def analyze_arguments(self, call: cst.Call) -> ExprFacts:
        """Facts about a call's arguments (not the call itself)."""
        facts = ExprFacts()
        for arg in call.args:
            self._visit(arg.value, facts)
        return facts

    def _visit(self, node: cst.CSTNode, facts: ExprFacts) -> None:
        if isinstance(node, cst.Call):
            self._visit_call(node, facts)
        elif isinstance(node, cst.Name):
            self._visit_name(node, facts)
        elif isinstance(node, cst.Attribute):
            self._visit_attribute(node, facts)
        elif isinstance(node, cst.Arg):
            self._visit(node.value, facts)  # not its keyword
        elif isinstance(node, cst.Param):
            return
        elif isinstance(node, (cst.ListComp, cst.GeneratorExp)) and self._iterates_variables(node):
            self._visit(node.elt, facts)
        elif isinstance(node, cst.AssignTarget):
            self._visit_target(node.target, facts)
        elif isinstance(node, cst.Assign) and self.is_feed_dict(node):
            facts.feed_dicts.append(node)
            for element in node.value.elements:
                self._visit(element.value, facts)
        else:
            for child in children(node):
                self._visit(child, facts)

    def _iterates_variables(self, comprehension: cst.ListComp | cst.GeneratorExp) -> bool:
        """`[f(v) for v in tf.trainable_variables() if <tests of v.name>]`: registered to iterate the
        variables TF1 listed (transforms/graph/layers/variable_lists.py)."""
        if isinstance(comprehension, cst.ListComp) and name_filtered(comprehension) is not None:
            return False  # a plain filter: the list it makes is the variables (scan.py's filtered_lists)
        found = name_tested_iteration(comprehension)
        if found is None or not lists_trainable_variables(found[0], self.resolver.tf_name):
            return False
        self.variable_iterations[id(comprehension)] = (comprehension, found[0], found[1])
        return True

    def _visit_target(self, target: cst.BaseExpression, facts: ExprFacts) -> None:
        """An assignment target: binding the throwaway name `_` reads nothing, even where the
        program also bound a graph value to it (`_, logits = P(z)` ... `X_mb, _ = next_batch(n)`), and
        nor does plain code giving a graph tensor's name a value of its own (`loss, _ = sess.run(...)`
        after the graph used `loss`: checks.check_bindings decides whether that may stay)."""
        if isinstance(target, cst.Name) and target.value == "_":
            return
        if isinstance(target, cst.Name) and self._names_tensor(target):
            self.rebindings.setdefault(target.value, []).append(target)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._visit_target(element.value, facts)
            return
        self._visit(target, facts)

    def _names_tensor(self, node: cst.Name) -> bool:
        return self.kinds.get(node.value) is Kind.TENSOR and self.resolver.is_block_reference(node)

    def _after_rebinding(self, node: cst.Name) -> bool:
        """Whether a statement binding the name anew in plain code comes before `node` in the block of
        statements holding both (`loss, _ = sess.run(...)` then `print(loss)`): the read is of that value."""
        for target in self.rebindings.get(node.value, ()):
            statement = self._statement_of(target)
            body = self.resolver.parent(statement)
            ancestor = node
            while ancestor is not None and self.resolver.parent(ancestor) is not body:
                ancestor = self.resolver.parent(ancestor)
            siblings = list(getattr(body, "body", ()))
            if ancestor is not None and ancestor in siblings and siblings.index(ancestor) > siblings.index(statement):
                return True
        return False

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        while not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            node = self.resolver.parent(node)
        return node

    def _visit_name(self, node: cst.Name, facts: ExprFacts) -> None:
        kind = self.kinds.get(node.value, Kind.PYTHON)
        if kind is not Kind.PYTHON and not self.resolver.is_block_reference(node):
            kind = Kind.PYTHON
        if kind is Kind.TENSOR and self._after_rebinding(node):
            kind = Kind.PYTHON
        if kind in (Kind.DATASET, Kind.SUMMARY_WRITER, Kind.QUEUE):
            kind = Kind.PYTHON  # ordinary Python objects in TF2, kept where they are
        if kind is Kind.PYTHON:
            facts.python_reads.add(node.value)
            if node.value in self.helpers and self.resolver.is_block_reference(node):
                facts.helper_calls.add(node.value)  # `tf.scan(rnn_step, ...)`: it runs and reads state too
        elif kind in (Kind.INIT_OP, Kind.SESSION, Kind.TRAIN_OP, Kind.SAVER):
            raise Refusal(node, f"'{node.value}' ({kind.value}) is used as a value in graph code")
        else:
            facts.reads.add(node.value)

    def _visit_attribute(self, node: cst.Attribute, facts: ExprFacts) -> None:
        if id(node) in self.member_aliases:
            self._visit(node.value, facts)
            return
        name, category, reason = self.category(node)
        if name is not None:
            if category is Category.UNSUPPORTED:
                raise Refusal(node, f"{name}: {reason} is not modelled")
            return  # a TF constant or function used as a value (tf.float32, tf.nn.relu)
        inner = ExprFacts()
        self._visit(node.value, inner)
        if inner.reads & self._names_of(Kind.TENSOR, Kind.PLACEHOLDER, Kind.VARIABLE):
            raise Refusal(node, f"'{code(node)}' reads static graph information (shape, name, op)")
        _merge(facts, inner)

    def _names_of(self, *kinds: Kind) -> set[str]:
        return {name for name, kind in self.kinds.items() if kind in kinds}

    def _visit_call(self, node: cst.Call, facts: ExprFacts) -> None:
        if self.is_run_call(node):
            facts.run_calls.append(node)
            return
        if self._is_session_close(node):
            facts.session_closes.append(node)
            return
        if self.checkpoints is not None and self.checkpoints.is_call(node):
            facts.checkpoint_calls.append(node)
            self.checkpoints.read_call(node, lambda value: self._argument_facts(value, facts))
            return
        if self._visit_dataset_call(node, facts):
            return
        name, category, reason = self.category(node.func)
        if category is None:
            self._visit_plain_call(node, facts)
            return
        if lists_trainable_variables(node, self.resolver.tf_name):
            self.variable_lists[id(node)] = node
            return
        if category is Category.ASSIGN:
            raise Refusal(node, assignment_outside_statement(name, in_function=self.lenient))
        if category in (Category.UNSUPPORTED, Category.REFUSED_OPTIMIZER):
            raise Refusal(node, f"{name}: {reason} is not modelled" if category is Category.UNSUPPORTED
                          else f"{name} is not converted: {reason}")
        if category is Category.LAYER:
            facts.layer_calls.append(node)
            facts.builds_ops = True
        elif category is Category.REGULARIZATION:
            facts.regularization_calls.append(node)
            facts.builds_ops = True
        elif category in (Category.OP, Category.RNN_RUN):
            facts.builds_ops = True
        elif category is Category.SESSION:
            return  # the program's one session: its `with` is unwrapped, its assignment removed
        elif self.lenient:
            facts.builds_ops = True  # graph construction in a function body runs only when it is called
        elif category not in (Category.PYTHON, Category.INITIALIZER):
            raise Refusal(node, f"{name} ({category.value}) must be assigned to a name of its own")
        for arg in node.args:
            self._visit(arg.value, facts)

    def _visit_dataset_call(self, node: cst.Call, facts: ExprFacts) -> bool:
        """A tf.data pipeline (kept as Python: its map functions are traced by tf.data in both worlds)
        or `iterator.get_next()` (graph code reading the iterator); False for other calls."""
        if self.datasets.is_pipeline(node):
            inner = ExprFacts()
            for child in children(node):
                self._visit(child, inner)
            graph_values = {name for name in inner.reads if self.kinds[name] is not Kind.DATASET}
            if graph_values or inner.run_calls:
                raise Refusal(node, f"a tf.data pipeline built from graph values ({', '.join(sorted(graph_values))})"
                                    if graph_values else "a session run inside a tf.data pipeline")
            facts.python_reads |= inner.python_reads | inner.reads
            return True
        iterator = self.datasets.next_element_iterator(node)
        if iterator is not None and self.datasets.is_iterator_name(iterator):
            facts.reads.add(iterator.value)
            facts.builds_ops = True
            return True
        if iterator is not None or self.datasets.one_shot_source(node) is not None:
            raise Refusal(node, "a one-shot iterator must be assigned to a name, or read by "
                                "`x = dataset.make_one_shot_iterator().get_next()` on a line of its own")
        return False

    def _argument_facts(self, node: cst.BaseExpression, facts: ExprFacts) -> ExprFacts:
        """Facts about an argument of a checkpoint call; the session runs in it join `facts`."""
        inner = ExprFacts()
        self._visit(node, inner)
        facts.run_calls += inner.run_calls
        facts.feed_dicts += inner.feed_dicts
        return inner

    def _visit_plain_call(self, node: cst.Call, facts: ExprFacts) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ASSIGN_METHODS:
            self._refuse_variable_method(node)
        if isinstance(func, cst.Name) and func.value in self.helpers and self.resolver.is_block_reference(func):
            facts.helper_calls.add(func.value)
            facts.builds_ops = True
            for arg in node.args:
                self._visit(arg.value, facts)
            facts.helper_call_nodes.append(node)  # after the calls in its arguments, as Python calls them
            return
        inner = ExprFacts()
        for child in children(node):
            self._visit(child, inner)
        if self._calls_initializer(func):
            facts.builds_ops = True  # a random tensor (a variable's initial value; graph code refuses it)
        elif self.resolver.is_builtin(func, "sum") and (inner.reads or inner.builds_ops):
            facts.builds_ops = True  # `0 + t1 + t2 ...`: the same Add ops in a TF2 function as in TF1's graph
        elif inner.reads or inner.builds_ops:
            raise Refusal(node, f"graph values flow into '{code(func)}', which is not a TensorFlow op")
        _merge(facts, inner)

    def _calls_initializer(self, func: cst.BaseExpression) -> bool:
        """`xavier_init(shape)`, where `xavier_init = tf.contrib.layers.xavier_initializer()`: the
        initializer's tensor, which the Keras initializer it becomes also returns when called."""
        return isinstance(func, cst.Name) and self.kinds.get(func.value) is Kind.INITIALIZER \
            and self.resolver.is_block_reference(func)

    def _refuse_variable_method(self, node: cst.Call) -> None:
        """`variable.assign(value)` anywhere but as a graph statement of its own (see analysis/assigns.py)."""
        inner = ExprFacts()
        self._visit(node.func.value, inner)
        for arg in node.args:
            self._visit(arg.value, inner)
        if inner.reads or inner.builds_ops:
            raise Refusal(node, assignment_outside_statement(f"'{code(node.func)}'"))


def _merge(target: ExprFacts, source: ExprFacts) -> None:
    target.builds_ops |= source.builds_ops
    target.reads |= source.reads
    target.python_reads |= source.python_reads
    target.layer_calls += source.layer_calls
    target.run_calls += source.run_calls
    target.session_closes += source.session_closes
    target.feed_dicts += source.feed_dicts
    target.helper_calls |= source.helper_calls
    target.helper_call_nodes += source.helper_call_nodes
    target.checkpoint_calls += source.checkpoint_calls
    target.regularization_calls += source.regularization_calls
