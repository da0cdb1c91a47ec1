"""Write a step function: `@tf.function` with an input signature made of the placeholders' dtype and
shape (so NumPy feeds are converted as TF1 converted them, and nothing retraces), the graph statements
of its slice in their original order and with their comments, a GradientTape step for a train op, and
a return value holding what its callers read of the fetches (see CallSiteRewriter.choose_returns).

Without AutoGraph (`autograph=False`): the body is TF1 graph-building code, which ran once as plain
Python when TF1 built the graph, and so it runs at tracing; AutoGraph would rewrite it first (a
`print` in it would become a print at every step) and costs 15-30% of the tracing time
(benchmarks/step_overhead.py)."""
from __future__ import annotations

import textwrap

import libcst as cst

from transforms.graph.writing.assemble import tidy_body
from transforms.graph.layers.keras_layers import LayerUse
from transforms.graph.analysis.model import GraphBlock, Kind
from transforms.graph.writing.plan import StepFunction
from transforms.graph.analysis.listed_names import block_definition, listed_names
from transforms.graph.sessions.runs import Fetch
from transforms.graph.writing.constant_conds import is_self_assignment, predicate_name, resolved_cond
from transforms.common.syntax import (Refusal, bind_arguments, calls_under, code, load_names, replace_nodes,
                                     statement)

_OPTIONS = "autograph=False"
_LINE_LENGTH = 100


class FunctionWriter:
    def __init__(self, block: GraphBlock, layer_uses: dict[int, list[LayerUse]], local_names,
                 conds: list[cst.Call], built_at_first_call: set[str]) -> None:
        self.block = block
        self.layer_uses = layer_uses
        self.local_names = local_names  # NameAllocator for tape / variables / gradients
        self.conds = conds  # tf.cond calls of graph code on a plain name (constant_conds.py)
        self.built_at_first_call = built_at_first_call  # layers and modules making weights at their first call
        self._layer_calls = {id(use.call) for uses in layer_uses.values() for use in uses}
        self._cond_parameters = {name: _cond_predicate_parameters(definition, conds)
                                 for name, definition in block.helpers.items()}
        self.train_op_values: dict[str, str] = {}  # train ops that evaluate to their loss -> its name

    def write(self, function: StepFunction, trainable: list[str]) -> cst.FunctionDef:
        constants = {name: value for name, value in function.constants.items()}
        bodies = [self._body(index, constants) for index in function.items]
        statements: list[cst.BaseStatement] = []
        if function.train_op and function.train_op.fed_gradients is not None:
            statements += _kept(bodies) + self._fed_gradients_step(function.train_op, constants)
        elif function.train_op:
            last_tape = max(function.tape_items)
            first = set(function.before_tape)
            statements += _kept(b for i, b in zip(function.items, bodies) if i in first)
            inside = _kept(b for i, b in zip(function.items, bodies) if i <= last_tape and i not in first)
            after = _kept(b for i, b in zip(function.items, bodies) if i > last_tape and i not in first)
            statements += self._train_step(function, inside, after, trainable, constants)
        else:
            statements += _kept(bodies)
        returned = self._returned(function.returned, {**constants, **self.block.aliases})
        if returned is not None:
            statements.append(statement(f"return {returned}"))
        signature = f"def {function.name}({self._params(function)}):\n    pass\n"
        header = cst.parse_statement(self._decorator(function) + signature)
        return header.with_changes(body=cst.IndentedBlock(body=tidy_body(statements)))

    def _decorator(self, function: StepFunction) -> str:
        if not function.args:
            return f"@tf.function({_OPTIONS})\n"
        specs = []
        for name in function.args:
            placeholder = self.block.placeholders[name]
            specs.append(f"tf.TensorSpec({placeholder.shape}, {placeholder.dtype})")
        one_line = f"@tf.function(input_signature=[{', '.join(specs)}], {_OPTIONS})\n"
        if len(one_line) <= 100:
            return one_line
        return "@tf.function(input_signature=[\n" + "".join(f"    {spec},\n" for spec in specs) + f"], {_OPTIONS})\n"

    def _params(self, function: StepFunction) -> str:
        params = []
        for name in function.args:
            default = self.block.placeholders[name].default
            params.append(f"{name}={code(default)}" if default is not None else name)
        return ", ".join(params)

    def _body(self, index: int, constants: dict[str, str]) -> cst.BaseStatement:
        item = self.block.items[index]
        replacements = {}
        for use in self.layer_uses.get(index, []):
            replacements[id(use.call)] = layer_call(use)
        replacements.update(_constant_replacements(item.node, {**constants, **item.renames}))
        replacements.update(self._constants_given_to_helpers(item.node, constants))
        replacements.update({key: (lambda _, text=text: cst.parse_expression(text))
                             for key, text in self.block.member_aliases.items()})
        replacements.update(self.block.graph_code_replacements)
        replacements.update(self._resolved_conds(item.node, constants))
        body = replace_nodes(item.body or item.node, replacements)
        return body.with_changes(leading_lines=[*item.leading, *body.leading_lines])

    def _constants_given_to_helpers(self, node: cst.CSTNode, constants: dict[str, str]) -> dict:
        """A placeholder fed one literal and passed to a function of the program that makes it the
        predicate of a `tf.cond` stays a tensor there, of the placeholder's dtype, as in TF1: TF2's cond
        refuses a Python bool. Elsewhere (a Keras layer's `training=`) the literal serves."""
        replacements = {}
        for call in calls_under(node):
            predicates = self._cond_parameters.get(call.func.value) if isinstance(call.func, cst.Name) else None
            if not predicates:
                continue
            for parameter, value in _parameters_given(call, self.block.helpers[call.func.value]):
                if parameter in predicates and isinstance(value, cst.Name) and value.value in constants:
                    text = f"tf.constant({constants[value.value]}, {self.block.placeholders[value.value].dtype})"
                    replacements[id(value)] = lambda _, text=text: cst.parse_expression(text)
        return replacements

    def _resolved_conds(self, node: cst.CSTNode, constants: dict[str, str]) -> dict:
        """The conds of `node` on a placeholder fed one literal bool, reduced to the branch it takes."""
        replacements = {}
        for call in self.conds:
            value = constants.get(predicate_name(call))
            if value in ("True", "False") and any(call is child for child in calls_under(node)):
                make = resolved_cond(call, value == "True", self._creates_state)
                if make is not None:
                    replacements[id(call)] = make
        return replacements

    def _creates_state(self, call: cst.Call) -> bool:
        return id(call) in self._layer_calls or (
            isinstance(call.func, cst.Name) and call.func.value in self.built_at_first_call)

    def _train_step(self, function, inside, after, trainable, constants) -> list[cst.BaseStatement]:
        train_op = function.train_op
        tape, variables, gradients = (self.local_names.fresh(n) for n in ("tape", "variables", "gradients"))
        renames = self._renames(train_op)
        loss = code(replace_nodes(train_op.loss, _constant_replacements(train_op.loss, {**constants, **renames})))
        if not isinstance(train_op.loss, cst.Name):
            loss_name = self.local_names.fresh("loss")
            inside = inside + [statement(f"{loss_name} = {loss}")]
            loss = loss_name
        with_tape = cst.parse_statement(f"with tf.GradientTape() as {tape}:\n    pass\n")
        lines = [with_tape.with_changes(body=cst.IndentedBlock(body=tidy_body(inside)))] + after
        variable_list = code(train_op.var_list) if train_op.var_list is not None else _variable_list(
            trainable, self.block)
        if len(variable_list) + len(variables) > 90:
            variable_list = _wrapped_variable_list(variable_list)
        lines += [statement(f"{variables} = {variable_list}"),
                  statement(f"{gradients} = {tape}.gradient({loss}, {variables})")]
        lines += self._fed_rate(train_op, {**constants, **renames})
        if train_op.clip_norm is not None:  # slim clips each gradient on its own
            lines.append(statement(f"{gradients} = [None if gradient is None else tf.clip_by_norm(gradient, "
                                   f"{code(train_op.clip_norm)}) for gradient in {gradients}]"))
        if train_op.gradients is not None:
            lines += self._gradient_code(train_op.gradients, gradients, variables)
            lines.append(statement(f"{train_op.optimizer}.apply_gradients({code(train_op.gradients.applied)})"))
        else:
            lines.append(statement(f"{train_op.optimizer}.apply_gradients(zip({gradients}, {variables}))"))
        lines += _step_increment(train_op)
        if train_op.check_numerics:
            lines.append(statement(f"{loss} = tf.debugging.check_numerics({loss}, 'LossTensor is inf or nan')"))
        if train_op.returns_loss:
            self.train_op_values[train_op.name] = loss
        return lines

    def _fed_gradients_step(self, train_op, constants) -> list[cst.BaseStatement]:
        """The update of `optimizer.apply_gradients(zip(placeholders, variables))`, after the step's
        graph statements: the gradients are its arguments, there is nothing to differentiate."""
        names = {**constants, **self._renames(train_op)}
        applied = code(replace_nodes(train_op.fed_gradients, _constant_replacements(train_op.fed_gradients, names)))
        return [*self._fed_rate(train_op, names), statement(f"{train_op.optimizer}.apply_gradients({applied})"),
                *_step_increment(train_op)]

    @staticmethod
    def _fed_rate(train_op, names: dict[str, str]) -> list[cst.BaseStatement]:
        """`optimizer.learning_rate = <the fed rate>` when the rate is fed each step (else nothing)."""
        if train_op.learning_rate is None:
            return []
        rate = replace_nodes(train_op.learning_rate, _constant_replacements(train_op.learning_rate, names))
        return [statement(f"{train_op.optimizer}.learning_rate = {code(rate)}")]

    @staticmethod
    def _gradient_code(gradient_code, gradients: str, variables: str) -> list[cst.BaseStatement]:
        """The program's statements between computing and applying its gradients, the gradients call
        in them replaced by the tape's gradients."""
        tape_value = f"list(zip({gradients}, {variables}))" if gradient_code.pairs else gradients
        replacements = {id(gradient_code.call): lambda _: cst.parse_expression(tape_value)}
        return [replace_nodes(node, replacements) for node in gradient_code.statements]

    def optimizer_builds(self, order: list[StepFunction],
                         trainables: dict[int, list[str]]) -> dict[int, cst.BaseStatement]:
        """`optimizer.build([variables])` for each optimizer of the train steps, keyed by the id of the
        function whose definition it follows (the last one using it, in the written `order`): the
        optimizer then makes its slots at once, as TF1 did with the graph. Made in a step's first
        trace, they would have tf.function trace it twice (0.1 s for a small step, more for a fused
        loop around it). An optimizer that several train steps share must be built for all their
        variables (a Keras optimizer builds once); where they are not all listed, it is refused."""
        users: dict[str, list[StepFunction]] = {}
        for function in order:
            if function.train_op is not None:
                users.setdefault(function.train_op.optimizer, []).append(function)
        builds = {}
        for optimizer, trained in users.items():
            names = self._built_variables(trained, trainables)
            if names is None:
                if len(trained) > 1:
                    raise Refusal(trained[1].train_op.node, f"optimizer '{optimizer}' minimizes several losses "
                                  "whose variables are not all listed by name")
                continue
            last = trained[-1]
            sites = [site for function in trained for site in function.sites]
            if len(trained) > 1 and any(site.item_index < last.insert_at for site in sites):
                raise Refusal(trained[0].sites[0].call, f"optimizer '{optimizer}' minimizes several losses and "
                              "one is trained before the graph of another is built")
            comment = f"its slots now, not in {_names(trained)}'s first trace"
            builds[id(last)] = _build_statement(optimizer, names, comment)
        return builds

    def _built_variables(self, trained: list[StepFunction], trainables: dict[int, list[str]]) -> list[str] | None:
        """The variables the train steps of one optimizer update, in order; None unless all are plain
        variables listed by name."""
        names: list[str] = []
        for function in trained:
            train_op = function.train_op
            listed = trainables[id(function)] if train_op.var_list is None else listed_names(
                train_op.var_list, block_definition(self.block))
            renamed = set(self.block.aliases) | set(self._renames(train_op))
            if not listed or any(self.block.kind(name) is not Kind.VARIABLE or name in renamed for name in listed):
                return None
            names += [name for name in listed if name not in names]
        return names

    def _renames(self, train_op) -> dict[str, str]:
        """The state names the train op's statement reads that were rebound later."""
        return self.block.items[self.block.last_definition(train_op.name)].renames

    def _returned(self, fetch: Fetch, constants: dict[str, str]) -> str | None:
        if fetch.shape == "op":
            return None
        return _render(fetch, constants, self.train_op_values, self.block.member_aliases)


def _step_increment(train_op) -> list[cst.BaseStatement]:
    return [statement(f"{train_op.global_step}.assign_add(1)")] if train_op.global_step else []


def _build_statement(optimizer: str, names: list[str], comment: str) -> cst.BaseStatement:
    call = f"{optimizer}.build([{', '.join(names)}])"
    if len(call) <= _LINE_LENGTH:
        return statement(f"{call}  # {comment}")
    listed = textwrap.fill(" ".join(f"{name}," for name in names), _LINE_LENGTH, initial_indent="    ",
                           subsequent_indent="    ", break_on_hyphens=False)
    return cst.parse_statement(f"{optimizer}.build([\n{listed}\n])  # {comment}\n")


def _names(functions: list[StepFunction]) -> str:
    names = [function.name for function in functions]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _wrapped_variable_list(variable_list: str) -> str:
    """A long variable list over several lines: a list display one element a line, a sum of lists
    one term a line."""
    expression = cst.parse_expression(variable_list)
    if isinstance(expression, cst.List):
        return "[\n" + "".join(f"    {code(element.value)},\n" for element in expression.elements) + "]"
    return "(\n    " + "\n    + ".join(variable_list.split(" + ")) + "\n)"


def _render(fetch: Fetch, constants: dict[str, str], train_op_values: dict[str, str],
            member_aliases: dict[int, str]) -> str:
    if fetch.shape == "op":
        return "None"
    if fetch.shape == "loss":
        return train_op_values[fetch.node.value]
    if fetch.shape in ("tensor", "tensors", "summary"):
        replacements = _constant_replacements(fetch.node, constants)
        replacements.update({key: (lambda _, text=text: cst.parse_expression(text))
                             for key, text in member_aliases.items()})
        return code(replace_nodes(fetch.node, replacements))
    parts = [_render(child, constants, train_op_values, member_aliases) for child in fetch.children]
    if fetch.shape == "dict":
        return "{" + ", ".join(f"{code(key)}: {part}" for key, part in zip(fetch.keys, parts)) + "}"
    if fetch.shape == "tuple":
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return "[" + ", ".join(parts) + "]"


def _variable_list(trainable: list[str], block: GraphBlock) -> str:
    pieces, plain = [], []
    for name in trainable:
        if name in block.variable_dicts or name in block.layer_objects:
            if plain:
                pieces.append("[" + ", ".join(plain) + "]")
                plain = []
            pieces.append(f"list({name}.values())" if name in block.variable_dicts else f"{name}.trainable_variables")
        else:
            plain.append(name)
    if plain or not pieces:
        pieces.append("[" + ", ".join(plain) + "]")
    return " + ".join(pieces)


def layer_call(use: LayerUse):
    """Replacement maker: the TF1 layer call becomes a call of its Keras object."""
    positions = {id(arg.value): index for index, arg in enumerate(use.call.args)}

    def make(updated: cst.Call) -> cst.BaseExpression:
        def render(original: cst.BaseExpression) -> str:
            index = positions.get(id(original))
            return code(updated.args[index].value) if index is not None else code(original)
        return cst.parse_expression(use.call_code(render))
    return make


def _cond_predicate_parameters(definition: cst.FunctionDef, conds: list[cst.Call]) -> set[str]:
    """The parameters of `definition` that a `tf.cond` in it takes as its predicate."""
    inside = {id(call) for call in calls_under(definition)}
    parameters = {param.name.value for param in [*definition.params.posonly_params, *definition.params.params,
                                                 *definition.params.kwonly_params]}
    return {predicate_name(call) for call in conds if id(call) in inside} & parameters


def _parameters_given(call: cst.Call, definition: cst.FunctionDef) -> list[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) for the arguments of `call` to `definition`; none where they cannot be
    bound statically (*args, unknown keywords)."""
    params = definition.params
    signature = [param.name.value for param in [*params.posonly_params, *params.params, *params.kwonly_params]]
    try:
        return list(bind_arguments(call, signature, call.func.value).items())
    except Refusal:
        return []


def _kept(bodies) -> list[cst.BaseStatement]:
    """The statements written, less the self-assignments a resolved cond leaves (`hidden = hidden`)."""
    return [body for body in bodies if not is_self_assignment(body)]


def _constant_replacements(node: cst.CSTNode, constants: dict[str, str]) -> dict:
    """Replace the names in `constants` (placeholders fed one literal, renamed state) where read."""
    return {id(n): (lambda _, text=constants[n.value]: cst.parse_expression(text))
            for n in load_names(node) if n.value in constants}
