"""Where a TF1 program builds its graph and where it opens sessions over it.

Both happen in one host: the module, a top-level function (`main()`, `train()`) or the
`if __name__ == "__main__":` block. The graph region runs from the first statement of the host that
uses TensorFlow or calls the program's own code (after imports, definitions and a leading
`tf.reset_default_graph()`) to the statement before the first session (a session line is read where
it is first used: session_lines.py), and takes in the statements that build graph without the session
after it: those a first `with tf.Session() as sess:` block begins with (`model = Model(...)`), and
later lines of that block, or of the host after a session line, binding only what TensorFlow calls
make. Every session must be opened directly in the host after it: `with tf.Session(...) as sess:` or
`sess = tf.Session(...)`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.qualnames import dotted_name
from transforms.common.syntax import (Refusal, calls_under, children, is_docstring, leftmost_name, load_names,
                                      only_small_statement, walk)
from transforms.graph.bridge.bindings import bound_names, mentions

SESSIONS = frozenset({"tf.Session", "tf.InteractiveSession"})
GRAPH_RESETS = frozenset({"tf.reset_default_graph"})
V2_DISABLERS = frozenset({"tf.disable_v2_behavior", "tf.disable_eager_execution"})
NO_SESSION = "the module creates no session"
# Libraries whose calls never build TensorFlow graph (tensorflow itself is judged by its names).
NOT_GRAPH_LIBRARIES = frozenset({"tensorflow", "numpy", "scipy", "pandas", "sklearn", "PIL", "cv2", "matplotlib",
                                 "h5py", "tqdm", "six", "absl", "imageio", "skimage", "gym", "nltk", "jieba",
                                 "gensim", "pickle", "yaml", "requests", "tf_slim"})


@dataclass
class Session:
    statement: cst.BaseStatement  # the `with` block or the assignment line
    name: str
    call: cst.Call
    interactive: bool

    @property
    def block(self) -> cst.With | None:
        return self.statement if isinstance(self.statement, cst.With) else None


@dataclass
class Layout:
    host: cst.Module | cst.FunctionDef | cst.If  # whose statements hold the region and the sessions
    start: int  # index of the region's first statement in the host's body
    end: int  # index of the first session statement
    sessions: list[Session]
    dropped: list[cst.BaseStatement] = field(default_factory=list)  # `tf.disable_v2_behavior()` lines, `resets`
    region_end: int = 0  # where the region stops (the statements up to `end` stay where they are)
    hoisted: list[cst.BaseStatement] = field(default_factory=list)  # graph built in the first session block
    resets: list[cst.BaseStatement] = field(default_factory=list)  # `tf.reset_default_graph()` before the graph

    @property
    def body(self) -> list[cst.BaseStatement]:
        return host_body(self.host)

    @property
    def in_function(self) -> bool:
        return isinstance(self.host, cst.FunctionDef)


def host_body(host: cst.Module | cst.FunctionDef | cst.If) -> list[cst.BaseStatement]:
    return list(host.body if isinstance(host, cst.Module) else host.body.body)


def read_layout(transform, module: cst.Module) -> Layout:
    """The region and sessions of `module`; raises Refusal when its program has another shape."""
    host, sessions, first = None, [], None
    for candidate in hosts(module):
        body = host_body(candidate)
        found = [(index, _session(transform, statement)) for index, statement in enumerate(body)]
        found = [(index, session) for index, session in found if session is not None]
        if found and host is not None:
            raise Refusal(found[0][1].call, "sessions are opened in more than one function")
        if found:
            host, first, sessions = candidate, found[0][0], [session for _, session in found]
    _check_no_other_sessions(transform, module, sessions)
    if host is None:
        raise Refusal(None, NO_SESSION)
    body = host_body(host)
    builders = _program_callables(transform, module)
    start = _region_start(transform, body[:first], builders)
    hoisted = _graph_built_after_session(transform, sessions[0], body[first + 1:], builders)
    if start == first and not hoisted:
        raise Refusal(sessions[0].call, "no graph is built before the session")
    dropped = [statement for statement in [*module.body, *body] if calls_only(transform, statement, V2_DISABLERS)]
    preamble = [*body[:start], *(module.body if host is not module else [])]
    resets = [statement for statement in preamble if calls_only(transform, statement, GRAPH_RESETS)]
    return Layout(host, start, first, sessions, dropped + resets, region_end=first, hoisted=hoisted, resets=resets)


def _graph_built_after_session(transform, session: Session, following: list[cst.BaseStatement],
                               builders: set[str]) -> list[cst.BaseStatement]:
    """The statements that build graph without using the session, in the first session's block (or, for
    a session line, in the host after it): those the block begins with (`model = Model(...)`), and later
    lines binding only what TensorFlow calls make (`merged = tf.summary.merge_all()` after a
    restore-or-initialise branch, an accuracy built after training) from nothing computed before them
    there. They join the region."""
    block = session.block
    if block is not None and not isinstance(block.body, cst.IndentedBlock):
        return []
    statements = list(block.body.body) if block is not None else following
    leading = []
    for statement in statements:
        if mentions(statement, session.name) or runs_a_default_session(statement) \
                or opens_session(transform, statement):
            break
        leading.append(statement)
    if len(leading) == len(statements):
        return []
    if _region_start(transform, leading, builders) == len(leading):
        leading = []
    later, computed = [], set()  # names the other statements bind
    for statement in statements[len(leading):]:
        if not mentions(statement, session.name) and _binds_graph_calls(transform, statement) \
                and not _reads(statement) & computed:
            later.append(statement)
        else:
            computed |= bound_names([statement])
    return leading + later


def runs_a_default_session(statement: cst.BaseStatement) -> bool:
    """`tensor.eval(...)` / `op.run(...)`, run by the default session an InteractiveSession or a session
    block makes."""
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in ("eval", "run")
               for call in calls_under(statement))


def _reads(statement: cst.BaseStatement) -> set[str]:
    return {node.value for node in load_names(statement)}


def _binds_graph_calls(transform, statement: cst.BaseStatement) -> bool:
    """`name = tf.<graph-building call>(...)`: every call in the value a TensorFlow call that is not a
    plain Python utility."""
    small = only_small_statement(statement)
    if not isinstance(small, cst.Assign) or not all(isinstance(t.target, cst.Name) for t in small.targets):
        return False
    calls = list(calls_under(small.value))
    return bool(calls) and all(_builds_graph(transform, call) for call in calls)


def _builds_graph(transform, call: cst.Call) -> bool:
    name = transform.tf_name(call.func)
    return name is not None and categorize(name)[0] not in (Category.PYTHON, Category.SESSION)


def hosts(module: cst.Module):
    """Where a program may build its graph and open its session: the module, its top-level functions
    and its `if __name__ == "__main__":` block."""
    yield module
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and isinstance(statement.body, cst.IndentedBlock):
            yield statement
        elif isinstance(statement, cst.If) and _is_main_guard(statement.test) \
                and isinstance(statement.body, cst.IndentedBlock):
            yield statement


def with_host_bodies(module: cst.Module, rewrite) -> cst.Module:
    """`module` with each host's body replaced by `rewrite(host, body)` (the same list: unchanged)."""
    replaced = {}
    for host in hosts(module):
        body = host_body(host)
        rewritten = rewrite(host, body)
        if rewritten is not body:
            replaced[id(host)] = rewritten
    if not replaced:
        return module
    if id(module) in replaced:
        module = module.with_changes(body=replaced.pop(id(module)))
    return module.with_changes(body=[
        statement.with_changes(body=statement.body.with_changes(body=replaced[id(statement)]))
        if id(statement) in replaced else statement for statement in module.body])


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__" \
        and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)


def _session(transform, statement: cst.BaseStatement) -> Session | None:
    if isinstance(statement, cst.With) and len(statement.items) == 1:
        item = statement.items[0]
        call = item.item
        if is_session_call(transform, call) and item.asname and isinstance(item.asname.name, cst.Name):
            return Session(statement, item.asname.name.value, call, _interactive(transform, call))
        return None
    small = only_small_statement(statement)
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and is_session_call(transform, small.value):
        return Session(statement, small.targets[0].target.value, small.value, _interactive(transform, small.value))
    return None


def is_cell_boundary(transform, statement: cst.BaseStatement) -> bool:
    """Whether `statement` marks where a notebook's cell ends: the runner migrates a notebook's cells as
    one module, each opened by a bare string statement, and code must stay in its cell."""
    return transform.context.filename.endswith(".ipynb") and is_docstring(statement)


def session_name(transform, statement: cst.BaseStatement) -> str | None:
    """The name a session statement binds its session to."""
    session = _session(transform, statement)
    return session.name if session is not None else None


def opens_session(transform, statement: cst.BaseStatement) -> bool:
    """Whether `statement` is `with tf.Session(...) as sess:` or `sess = tf.Session(...)`."""
    return _session(transform, statement) is not None


def is_session_call(transform, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and transform.tf_name(node.func) in SESSIONS


def _interactive(transform, call: cst.Call) -> bool:
    return transform.tf_name(call.func) == "tf.InteractiveSession"


def _check_no_other_sessions(transform, module: cst.Module, sessions: list[Session]) -> None:
    known = {id(session.call) for session in sessions}
    for call in calls_under(module):
        if id(call) in known:
            continue
        name = transform.tf_name(call.func)
        if name and categorize(name)[0] is Category.SESSION:
            raise Refusal(call, f"a session is opened inside a function or block ({name}()), not at the top level")


def _region_start(transform, statements: list[cst.BaseStatement], builders: set[str]) -> int:
    """The first statement that builds graph: not an import, a definition, a docstring, a leading
    graph reset or a `disable_v2_behavior()` call, and using TensorFlow for more than its Python
    utilities (flags, logging, file access), or calling the program's own code (`Model(...)`)."""
    for index, statement in enumerate(statements):
        if not _is_preamble(transform, statement) and _may_build(transform, statement, builders):
            return index
    return len(statements)


def _leftmost_value(node: cst.BaseExpression) -> str | None:
    name = leftmost_name(node)
    return name.value if name is not None else None


def _program_callables(transform, module: cst.Module) -> set[str]:
    """Names that may build graph when called: the module's classes, its functions that use TensorFlow
    beyond its Python utilities or call such names, and what it imports from modules that are neither
    the standard library nor a known data library (its own modules)."""
    names = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)} | program_imports(module)
    functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    while building := [f for f in functions if f.name.value not in names and _may_build(transform, f, names)]:
        names |= {function.name.value for function in building}
    return names


def program_imports(module: cst.Module) -> set[str]:
    """The names `module` imports from modules that are neither the standard library nor a known data
    library (its own modules, whose code may build graph)."""
    names = set()
    for node in walk(module):
        if isinstance(node, cst.ImportFrom) and node.relative:
            names |= _imported_names(node)
        elif isinstance(node, cst.ImportFrom) and node.module is not None:
            if _is_program_module(dotted_name(node.module)):
                names |= _imported_names(node)
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if _is_program_module(dotted_name(alias.name)):
                    names.add(alias.asname.name.value if alias.asname else dotted_name(alias.name).split(".")[0])
    return names


def _may_build(transform, node: cst.CSTNode, builders: set[str]) -> bool:
    """Whether `node` uses TensorFlow beyond its Python utilities or calls one of `builders`."""
    return any(categorize(name)[0] is not Category.PYTHON
               for outer in _outermost_names(node) for name in transform.tf_names(outer)) \
        or any(_leftmost_value(call.func) in builders for call in calls_under(node))


def _imported_names(node: cst.ImportFrom) -> set[str]:
    if isinstance(node.names, cst.ImportStar):
        return set()
    return {(alias.asname.name.value if alias.asname else dotted_name(alias.name)) for alias in node.names}


def _is_program_module(name: str) -> bool:
    top = name.split(".")[0]
    return top not in sys.stdlib_module_names and top not in NOT_GRAPH_LIBRARIES


def _outermost_names(node: cst.CSTNode):
    """The names and attribute chains under `node` that are not part of a longer chain (`tf.app.flags`,
    not `tf.app` or `tf`)."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        yield node
        if isinstance(node, cst.Attribute):
            yield from _inner_nodes(node.value)
        return
    for child in children(node):
        yield from _outermost_names(child)


def _inner_nodes(node: cst.BaseExpression):
    """What an attribute chain's base holds besides the chain itself (`f(x).y`: f's call arguments)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    if not isinstance(node, cst.Name):
        yield from _outermost_names(node)


def _is_preamble(transform, statement: cst.BaseStatement) -> bool:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or is_docstring(statement):
        return True
    small = only_small_statement(statement)
    if isinstance(small, (cst.Import, cst.ImportFrom)):
        return True
    return calls_only(transform, statement, GRAPH_RESETS | V2_DISABLERS)


def calls_only(transform, statement: cst.BaseStatement, names: frozenset[str]) -> bool:
    """Whether `statement` is a line calling one of the TF functions `names`, and nothing else."""
    small = only_small_statement(statement)
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
        and transform.tf_name(small.value.func) in names
