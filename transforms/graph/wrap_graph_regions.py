"""TFM203: a session program TFM201 left as it was -> its TF1 graph built once by
`tf.compat.v1.wrap_function`, each run site a TF2 function pruned from that graph.

When TFM201 refuses a program (a construct its analysis does not model), the graph-building code is
kept as it is, but no longer the whole file: the program runs eagerly, without sessions.

    x = tf.placeholder(tf.float32, [None, 784])         def build_graph():
    ...                                                     global x, ..., train_op, loss
    train_op = optimizer.minimize(loss)                     x = tf.placeholder(tf.float32, [None, 784])
    init = tf.global_variables_initializer()     ->         ...
    with tf.Session() as sess:                          graph = wrap_tf1_graph(build_graph)
        sess.run(init)                                  run_init = graph_function(graph, [], init, "run_init")
        for batch_x, batch_y in batches:                run_train_op_loss = graph_function(graph, [x, y], ...)
            _, l = sess.run([train_op, loss],           run_init()
                            {x: batch_x, y: batch_y})   for batch_x, batch_y in batches:
                                                            _, l = run_train_op_loss(batch_x, batch_y)

`wrap_tf1_graph` and `graph_function` are written into the file (transforms/graph/bridge/runtime.py):
variables keep TF1's life cycle (zeros until the initializer op runs; running it again draws new
values), fed values convert to their placeholder's dtype, results come back as NumPy. Savers are
built after the graph over the same variables and keep TF1's checkpoint format
(transforms/graph/bridge/savers.py); FileWriters become `TF1FileWriter` (writers.py); the sessions'
ConfigProto goes with them (configs.py), and so do a `with tf.Graph().as_default():` block around them,
a `with sess.as_default():` block after a session line (contexts.py) and a `tf.reset_default_graph()`
before the graph; a `with tf.device(...):` block around them is kept around the graph code built in it.
A feed dict bound to a name before the run becomes the tuple of its values (feeds.py); a function of
the program given the session is given the graph instead, its runs pruned on their first run by
`run_graph` (helpers.py). The program's shape is read in transforms/graph/bridge/: the region and
sessions (region.py), run sites (sites.py), other session uses (uses.py), all checked in plan.py and
written by writer.py.

Refused, with the reason in an info finding, so the file stays on compat.v1 sessions: sessions opened
other than directly in one host (the module, a top-level function, the `if __name__ == "__main__":`
block), a session passed to code of other modules or used for more than running the graph, one-shot
iterators and queues (a pruned function would restart their state on every call; initializable and
reinitializable iterators are shared by name instead, bridge/iterators.py), fetches or feed keys computed
after the graph, a feed dict that is changed or read other than by runs, graph built after the session
opened (except lines binding what TensorFlow calls make, which join the graph), `import
tensorflow.compat.v1 as tf`.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from transforms.base import RUN_SITES_KEY, TFTransform
from transforms.common.qualnames import dotted_name, tensorflow_alias
from transforms.common.syntax import Refusal, code
from transforms.graph.bridge.contexts import without_graph_contexts
from transforms.graph.bridge.plan import read_plan
from transforms.graph.bridge.region import NO_SESSION
from transforms.graph.bridge.session_lines import with_session_lines_moved_down
from transforms.graph.bridge.writer import HELPERS, BridgeWriter
from transforms.graph.bridge.tracing import RUN_METADATA_GONE
from transforms.graph.sessions.configs import CONFIG_GONE


# TF1's session keeps one kernel per stateful op across all its runs; each pruned function has its own.
_STREAMS = ("; a random op (dropout, tf.random_*) run by several of them draws from a stream per function, "
            "where TF1's runs shared one: its draws differ once a second function has run it")


class WrapGraphRegions(TFTransform):
    CODE = "TFM203"
    DESCRIPTION = ("Session programs TFM201 left as they were -> the TF1 graph built once by "
                   "tf.compat.v1.wrap_function, each run site a pruned TF2 function")
    SAFETY = "safe"
    PHASE = 21  # after TFM201, on what it refused; before the speed rewrites and the renames
    TRIGGERS = ("Session",)
    IDENTIFIERS = frozenset({"Session", "InteractiveSession"})

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ParentNodeProvider)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        tf = tensorflow_alias(original_node)
        if tf is None:
            return updated_node
        try:
            self._check_module(original_node)
            unwrapped = without_graph_contexts(self, original_node)
            program = with_session_lines_moved_down(self, unwrapped.module)
            plan = read_plan(self, program)
            module, site_names = BridgeWriter(self, program, plan, tf, unwrapped.freed_names,
                                              unwrapped.devices).write()
        except Refusal as refusal:
            if refusal.message != NO_SESSION:
                self.report(refusal.node or original_node, f"graph not wrapped for TF2 either: {refusal.message}",
                            fixed=False, severity="info")
            return updated_node
        functions = sorted({name for _, name in site_names})
        self.report(plan.layout.sessions[0].call,
                    f"graph kept as TF1 code, built once by tf.compat.v1.wrap_function; its session runs are "
                    f"TF2 functions pruned from it ({', '.join(f + '()' for f in functions)}); random initial "
                    f"values are drawn with other op seeds than TF1 gave them{_STREAMS if len(functions) > 1 else ''}",
                    fixed=True, severity="warning")
        run_graph_calls = {id(site.call) for site in plan.uses.run_graph_sites()}
        for call, name in site_names:
            line = self.get_metadata(PositionProvider, call).start.line
            self.context.scratch.setdefault(RUN_SITES_KEY, []).append((line, name))
            if id(call) in run_graph_calls:
                self.report(call, f'session run -> run_graph(..., "{name}"), pruned from the wrapped graph on its '
                                  "first run with these fetches and fed values", fixed=True)
            else:
                self.report(call, f"session run -> {name}(), pruned from the wrapped graph", fixed=True)
        for line in plan.config_lines[:1]:
            self.report(line, CONFIG_GONE, fixed=True)
        for site in plan.uses.sites:
            if site.traced:
                self.report(site.call, "Session.run(options=..., run_metadata=...): the pruned function runs the "
                            "same ops, but untraced (TF2 profiles with tf.profiler.experimental)", fixed=True)
        for line in plan.run_metadata_lines:
            self.report(line, RUN_METADATA_GONE, fixed=True)
        for helper in plan.uses.helpers:
            name = helper.function.name.value
            runs = "; its runs are functions pruned from the graph on their first run (run_graph)" \
                if helper.sites else ""
            self.report(helper.function, f"{name}() is given the wrapped graph where it was given the session{runs}",
                        fixed=True)
        assignments = [*plan.uses.assignments, *(a for helper in plan.uses.helpers for a in helper.eager_assignments)]
        for assignment in assignments:
            self.report(assignment.line, assignment.finding(), fixed=True)
        for line in plan.layout.resets[:1]:
            self.report(line, "tf.reset_default_graph() removed: the wrapped graph is built in a graph of its own",
                        fixed=True)
        for block in {id(block): block for block in unwrapped.devices.values()}.values():
            self.report(block, f"{code(block.items[0].item)} kept around the graph code built in it; the code "
                        "after the graph runs eagerly outside it", fixed=True)
        for block in unwrapped.blocks:
            self.report(block, "graph context removed: the wrapped graph is a graph of its own, and its "
                        "statements now run where the block was", fixed=True)
        for block in unwrapped.default_sessions:
            self.report(block, f"{code(block.items[0].item)} removed: the session's runs are pruned functions, "
                        "and the block's statements now run where it was", fixed=True)
        for saver in plan.savers:
            self.report(saver.call, "tf.train.Saver built after the wrapped graph over the same variables: "
                        "TF1 checkpoints, names and format kept", fixed=True)
        return module

    def _check_module(self, module: cst.Module) -> None:
        for statement in module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Import) and any(
                        dotted_name(alias.name) == "tensorflow.compat.v1" for alias in small.names):
                    raise Refusal(small, "TensorFlow is imported as its v1 API")
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value in HELPERS:
                raise Refusal(statement, f"the file already defines {statement.name.value}")

