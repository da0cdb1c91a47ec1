"""Model functions that build and run an RNN, the shape of most TF1 RNN tutorials:

    def recurrent_net(x, weights, biases):           def recurrent_net(x, weights, biases):
        steps = tf.unstack(x, TIMESTEPS, 1)               steps = tf.unstack(x, TIMESTEPS, 1)
        cell = rnn.BasicLSTMCell(HIDDEN)          ->      outputs_sequence, states_h, states_c = lstm(
        outputs, states = rnn.static_rnn(                     tf.stack(steps, axis=1))
            cell, steps, dtype=tf.float32)                return tf.matmul(outputs_sequence[:, -1], ...)
        return tf.matmul(outputs[-1], ...)

Like a function building layers (transforms/graph/layers/model_functions.py), it must be called once from graph code:
its Keras layer is then built once beside the other state and the function keeps computing with it.
Cells and runs must be top-level statements of the function; the cell is read only by its run."""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.rnn.cells import layer_settings, parse_cell
from transforms.common.syntax import Refusal, load_names, walk
from transforms.graph.bridge.bindings import bound_names

RNN_CATEGORIES = (Category.RNN_CELL, Category.RNN_RUN)


def is_rnn_helper(helper: cst.FunctionDef, analyzer) -> bool:
    return any(isinstance(node, cst.Call) and analyzer.category(node.func)[1] in RNN_CATEGORIES
               for node in walk(helper.body))


def convert_rnn_helper(scanner, helper: cst.FunctionDef) -> list[LayerUse]:
    """The Keras layers for the runs in `helper`; the rewrites of its statements go to
    `scanner.helper_rewrites` (node id -> replacement maker)."""
    cells, uses, planned = {}, [], set()
    resolver = scanner.resolver
    for statement in helper.body.body:
        found = _rnn_assignment(statement, scanner.analyzer)
        if found is None:
            continue
        target, call, tf_name, category = found
        planned.add(id(call))
        if category is Category.RNN_CELL:
            cells[target.value] = parse_cell(target, call, tf_name, cells, scanner.resolver.tf_name)
            for settings in layer_settings(call, tf_name):
                planned.add(id(settings))  # a cell made inside a DropoutWrapper or a MultiRNNCell
                _check_settings_are_global(resolver, helper, settings)
            _check_only_run_reads(resolver, target)
            scanner.helper_rewrites[id(statement)] = lambda _: cst.RemovalSentinel.REMOVE
            continue
        aliases: dict[int, str] = {}
        conversion = scanner.rnn.convert_run(target, call, tf_name, cells,
                                             lambda name, anchor=target: _references(resolver, anchor, name), aliases)
        scanner.helper_rewrites[id(target)] = lambda _, new=conversion.target(): new
        after = [layer.line for layer in conversion.stack_layers]
        after += [dropout.statement() for dropout in conversion.output_dropouts]
        if after:
            scanner.helper_rewrites[id(statement)] = lambda updated, after=after: cst.FlattenSentinel(
                [updated, *after])
        scanner.helper_rewrites.update({key: (lambda _, text=text: cst.parse_expression(text))
                                        for key, text in aliases.items()})
        uses += [conversion.use, *(layer.use for layer in conversion.stack_layers)]
    stray = [node for node in walk(helper.body) if isinstance(node, cst.Call) and id(node) not in planned
             and scanner.analyzer.category(node.func)[1] in RNN_CATEGORIES]
    if stray:
        raise Refusal(stray[0], f"RNN cells and runs in '{helper.name.value}' must be statements "
                                "`name = <cell or run>(...)` of the function's own body")
    return uses


def _rnn_assignment(statement, analyzer):
    """(target, call, tf name, category) of `target = <RNN cell or run>(...)`, else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)):
        return None
    tf_name, category, _ = analyzer.category(assign.value.func)
    if category not in RNN_CATEGORIES:
        return None
    return assign.targets[0].target, assign.value, tf_name, category


def _references(resolver, anchor: cst.BaseExpression, name: str) -> list:
    """Reads of the function's local `name` (bound in the statement whose target is `anchor`). When the
    function's body rebinds the name later by statements of its own (`outputs = tf.stack(outputs)`),
    only the reads up to the first of them: the later ones read what it bound."""
    node = next(n for n in walk(anchor) if isinstance(n, cst.Name) and n.value == name)
    accesses = [access for assignment in resolver.assignments_of(node) for access in assignment.references]
    body, index = _body_position(resolver, anchor)
    if body is None:
        return accesses
    rebinding = [k for k, statement in enumerate(body) if k > index and _rebinds(statement, name, nested=False)]
    if not rebinding or any(_rebinds(statement, name, nested=True) for statement in body[index + 1:rebinding[0]]):
        return accesses
    positions = {id(n): k for k, statement in enumerate(body) for n in walk(statement)}
    return [access for access in accesses if index < positions.get(id(access.node), -1) <= rebinding[0]]


def _body_position(resolver, node: cst.CSTNode) -> tuple[list | None, int]:
    """The body of the function holding `node`, and the index of its statement there."""
    child, parent = node, resolver.parent(node)
    while parent is not None and not isinstance(parent, cst.IndentedBlock):
        child, parent = parent, resolver.parent(parent)
    if parent is None or not isinstance(resolver.parent(parent), cst.FunctionDef):
        return None, -1
    return list(parent.body), list(parent.body).index(child)


def _rebinds(statement: cst.BaseStatement, name: str, nested: bool) -> bool:
    """Whether a simple statement binds `name` (`nested`: whether a compound statement does, in its blocks)."""
    compound = not isinstance(statement, cst.SimpleStatementLine)
    return compound == nested and name in bound_names([statement])


def _check_settings_are_global(resolver, helper: cst.FunctionDef, settings: cst.CSTNode) -> None:
    """The layer is built once, outside the function: its settings must not read the function's locals."""
    for name in load_names(settings):
        scope = resolver.scope(name)
        if scope is not None and getattr(scope, "node", None) is helper and name.value in scope.assignments:
            raise Refusal(name, f"RNN cell settings in '{helper.name.value}' depend on its local '{name.value}'")


def _check_only_run_reads(resolver, target: cst.Name) -> None:
    """A cell is read only as an argument (of the run, a DropoutWrapper) or listed in a MultiRNNCell."""
    for assignment in resolver.assignments_of(target):
        for access in assignment.references:
            holder = resolver.parent(resolver.parent(access.node))
            if isinstance(holder, cst.List):
                holder = resolver.parent(resolver.parent(holder))
            if not isinstance(holder, cst.Call):
                raise Refusal(access.node, f"RNN cell '{target.value}' is used other than by the run it feeds")
