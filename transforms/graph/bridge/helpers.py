"""Functions of the program given the session: `def evaluate(sess, model, data):` ... `evaluate(sess, ...)`.

Such a helper may only run the session (`sess.run(fetches, feed_dict)`, the feed dict written at the
run) and call nothing that builds graph. What it fetches may be values it is given (a model's tensors, a
list of ops), known only when it runs, so each of its run sites becomes `run_graph(graph, name,
fetches, feeds, values)`: the function pruned for those fetches and feeds is made on their first run
and kept. The helper then takes the wrapped graph where it took the session, under the graph's name.

One idiom builds graph in a helper and is kept: a variable assigned a constant, the op run at once
(`op = tf.assign(model.embedding, tf.constant(vectors))`, then `sess.run(op)` on the next line). In
TF2 the helper runs eagerly, where such an assignment runs as it is built, on the wrapped graph's
variable: the line becomes `model.embedding.assign(...)` and the run goes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ParentNodeProvider

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import (Refusal, bind_arguments, calls_under, code, load_names, only_small_statement,
                                      walk)
from transforms.graph.bridge.assignments import Assignment, assignment_of
from transforms.graph.bridge.bindings import mentions
from transforms.graph.bridge.feeds import NamedFeedReader, NamedFeeds, read_elsewhere
from transforms.graph.bridge.sites import RUN_SIGNATURE

HELPER_CALLS = frozenset({Category.PYTHON})  # what else a helper may call of TensorFlow's
EAGER_VALUES = frozenset({"tf.constant"})  # what a helper may build for an eager assignment


@dataclass
class HelperSite:
    call: cst.Call  # `sess.run(...)` in the helper
    fetches: cst.BaseExpression
    feeds: list[cst.DictElement]
    named_feeds: NamedFeeds | None = None  # a feed dict the helper binds to a name before the run
    feeds_read: cst.Name | None = None  # that name, as the site reads it
    made_feeds: None = None  # a helper's runs are fed dicts it writes (RunSite's feeds made by functions: sites.py)


@dataclass
class EagerAssignment(Assignment):
    """`op = tf.assign(...)` (the line), run at once by `sess.run(op)` (the run line)."""
    run_line: cst.SimpleStatementLine
    value_line: cst.SimpleStatementLine | None  # `value = tf.constant(...)`, when the value is a name


@dataclass
class SessionHelper:
    function: cst.FunctionDef
    parameter: cst.Param  # the session's parameter
    sites: list[HelperSite] = field(default_factory=list)
    arguments: list[cst.Arg] = field(default_factory=list)  # the session given to it, at each call
    eager_assignments: list[EagerAssignment] = field(default_factory=list)


class HelperReader:
    """Reads the helpers a program gives its session to, once each."""

    def __init__(self, transform, module: cst.Module, host: cst.CSTNode, session_names: set[str]) -> None:
        self.transform = transform
        self.module = module
        self.session_names = session_names
        self.functions = _functions(module, host)
        self.helpers: dict[str, SessionHelper] = {}

    def helper_for(self, argument: cst.Arg, call: cst.Call) -> SessionHelper | None:
        """The helper `call` gives the session to as `argument`; None when `call` is not a helper's."""
        if not isinstance(call.func, cst.Name) or call.func.value not in self.functions:
            return None
        name = call.func.value
        if name not in self.helpers:
            self.helpers[name] = self._read(self.functions[name], argument, call)
        helper = self.helpers[name]
        if _parameter_given(helper.function, call, argument) is not helper.parameter:
            raise Refusal(call, f"`{name}()` is given the session as another parameter than elsewhere")
        return helper

    def _read(self, function: cst.FunctionDef, argument: cst.Arg, call: cst.Call) -> SessionHelper:
        name = function.name.value
        parameter = _parameter_given(function, call, argument)
        if parameter is None or function.decorators:
            raise Refusal(call, f"the session is given to `{name}()` in a way this bridge does not follow")
        helper = SessionHelper(function, parameter)
        named_feeds = NamedFeedReader(function.body, _check_key)
        for node in load_names(function.body):
            if node.value == parameter.name.value:
                site = self._site(function, node, named_feeds)
                assignment = self._eager_assignment(function, site)
                if assignment is None:
                    helper.sites.append(site)
                else:
                    helper.eager_assignments.append(assignment)
        if (read := read_elsewhere(named_feeds, helper.sites)) is not None:
            raise Refusal(read, f"the feed dict `{read.value}` is used other than as a run's feed dict")
        self._check_calls(function, helper)
        self._check_calls_of(helper)
        return helper

    def _site(self, function: cst.FunctionDef, node: cst.Name, named_feeds: NamedFeedReader) -> HelperSite:
        attribute = self.transform.get_metadata(ParentNodeProvider, node)
        call = self.transform.get_metadata(ParentNodeProvider, attribute) if isinstance(attribute, cst.Attribute) \
            else None
        if not (isinstance(call, cst.Call) and call.func is attribute and attribute.value is node
                and attribute.attr.value == "run"):
            raise Refusal(node, f"`{function.name.value}()` does more with the session than run it")
        bound = bind_arguments(call, RUN_SIGNATURE, "Session.run")
        if "options" in bound or "run_metadata" in bound or "fetches" not in bound:
            raise Refusal(call, "Session.run() with these arguments has no counterpart for a pruned function")
        feed_dict = bound.get("feed_dict")
        if isinstance(feed_dict, cst.Name) and feed_dict.value != "None":
            return HelperSite(call, bound["fetches"], [], named_feeds(feed_dict), feed_dict)
        return HelperSite(call, bound["fetches"], _written_feeds(feed_dict))

    def _eager_assignment(self, function: cst.FunctionDef, site: HelperSite) -> EagerAssignment | None:
        """The assignment `site` runs, when it is one that can run where it is built (see the module
        docstring)."""
        fetched = site.fetches
        run_line = self.transform.get_metadata(ParentNodeProvider, self.transform.get_metadata(
            ParentNodeProvider, site.call))
        if not isinstance(fetched, cst.Name) or site.feeds or site.named_feeds is not None \
                or not isinstance(run_line, cst.SimpleStatementLine) or len(run_line.body) != 1:
            return None
        body = self.transform.get_metadata(ParentNodeProvider, run_line)
        index = body.body.index(run_line)
        line = body.body[index - 1] if index else None
        small = only_small_statement(line) if isinstance(line, cst.SimpleStatementLine) else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == fetched.value):
            return None
        found = assignment_of(self.transform, small.value)
        if found is None or sum(node.value == fetched.value for node in load_names(function.body)) != 2:
            return None  # not an assignment, or its op is read other than by its run
        method, variable, value = found
        value_line = self._eager_value_line(function, value)
        if value_line is None and not self._is_constant_call(value):
            return None
        return EagerAssignment(line, method, variable, value, run_line, value_line)

    def _is_constant_call(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and self.transform.tf_name(value.func) in EAGER_VALUES

    def _eager_value_line(self, function: cst.FunctionDef, value: cst.BaseExpression) -> cst.SimpleStatementLine | None:
        """The line `value = tf.constant(...)`, when `value` is a name the helper binds only there and reads
        nowhere else."""
        if not isinstance(value, cst.Name) or sum(node.value == value.value for node in load_names(function.body)) != 2:
            return None
        lines = [line for line in walk(function.body) if isinstance(line, cst.SimpleStatementLine)
                 and any(mentions(target.target, value.value) for small in line.body if isinstance(small, cst.Assign)
                         for target in small.targets)]
        small = only_small_statement(lines[0]) if len(lines) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and self._is_constant_call(small.value):
            return lines[0]
        return None

    def _check_calls(self, function: cst.FunctionDef, helper: SessionHelper) -> None:
        """A helper builds no graph: its TensorFlow calls are Python utilities (and the eager assignments'
        constants), its fetches computed by none."""
        eager = {id(call) for assignment in helper.eager_assignments
                 for line in (assignment.line, assignment.value_line) if line is not None for call in calls_under(line)}
        for call in calls_under(function.body):
            name = self.transform.tf_name(call.func)
            if name and categorize(name)[0] not in HELPER_CALLS and id(call) not in eager:
                raise Refusal(call, f"`{function.name.value}()`, given the session, calls {name}(), which would "
                                    "build graph after the graph is built")
        for site in helper.sites:
            if next(calls_under(site.fetches), None) is not None:
                raise Refusal(site.call, f"the fetch `{code(site.fetches)}` is computed at the run")

    def _check_calls_of(self, helper: SessionHelper) -> None:
        """Every use of the helper calls it with the session at the same parameter."""
        name = helper.function.name.value
        calls = {id(call.func): call for call in calls_under(self.module)}
        for node in load_names(self.module):
            if node.value != name or node is helper.function.name:
                continue
            call = calls.get(id(node))
            if call is None:
                raise Refusal(node, f"`{name}`, given the session, is used other than by calling it")
            argument = _argument_for(helper.function, call, helper.parameter)
            if argument is None or not (isinstance(argument.value, cst.Name)
                                        and argument.value.value in self.session_names):
                raise Refusal(call, f"`{name}()` is called without the session")
            helper.arguments.append(argument)


def _functions(module: cst.Module, host: cst.CSTNode) -> dict[str, cst.FunctionDef]:
    """The functions defined at the top of the module and of the session's host, by name (once each)."""
    bodies = [module.body] + ([host.body.body] if host is not module else [])
    found: dict[str, list[cst.FunctionDef]] = {}
    for body in bodies:
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                found.setdefault(statement.name.value, []).append(statement)
    return {name: functions[0] for name, functions in found.items() if len(functions) == 1}


def _plain_parameters(function: cst.FunctionDef) -> list[cst.Param] | None:
    params = function.params
    if params.posonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return None
    return list(params.params)


def _parameter_given(function: cst.FunctionDef, call: cst.Call, argument: cst.Arg) -> cst.Param | None:
    """The parameter of `function` that `argument` of `call` binds."""
    params = _plain_parameters(function)
    if params is None or any(arg.star for arg in call.args):
        return None
    if argument.keyword is not None:
        return next((p for p in [*params, *function.params.kwonly_params]
                     if p.name.value == argument.keyword.value), None)
    index = [arg for arg in call.args if arg.keyword is None].index(argument)
    return params[index] if index < len(params) else None


def _argument_for(function: cst.FunctionDef, call: cst.Call, parameter: cst.Param) -> cst.Arg | None:
    for argument in call.args:
        if argument.keyword is None or argument.keyword.value == parameter.name.value:
            if _parameter_given(function, call, argument) is parameter:
                return argument
    return None


def _check_key(key: cst.BaseExpression, what: str) -> None:
    """A helper's fed values are read where it runs, no longer where its feed dict was built: they must
    compute nothing."""
    if next(calls_under(key), None) is not None:
        raise Refusal(key, f"the {what} `{code(key)}` of a function given the session is computed by a call")


def _written_feeds(feed_dict: cst.BaseExpression | None) -> list[cst.DictElement]:
    if feed_dict is None or (isinstance(feed_dict, cst.Name) and feed_dict.value == "None"):
        return []
    if not isinstance(feed_dict, cst.Dict) or not all(isinstance(e, cst.DictElement) for e in feed_dict.elements):
        raise Refusal(feed_dict, f"the feed dict `{code(feed_dict)}` of a function given the session is not written "
                                 "at the run")
    return list(feed_dict.elements)
