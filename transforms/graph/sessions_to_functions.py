"""TFM201: TF1 Session / placeholder / feed_dict programs -> idiomatic TF2.

The graph-building code of a program (the module body, or a top-level function such as `main()`,
with `variable_scope` / `name_scope` / `Graph().as_default()` / `Session()` blocks flattened) is read
as data flow (the subpackages of transforms/graph/): which names are placeholders, variables,
optimizers, graph tensors, train and init ops, sessions, plain Python. Then:

- each distinct `sess.run(fetches, feed_dict)` (also `tensor.eval(...)`, `tf.<op>(...).eval()`,
  `op.run(...)`) becomes a
  `@tf.function` holding the backward slice from its fetches, in source order with its comments. Its
  arguments are the placeholders that slice needs (graph pruning: others are not passed), with an
  input signature from their dtype and shape (NumPy feeds convert as TF1 converted them, nothing
  retraces); placeholders fed the same literal everywhere (`keep_prob: 1.0`, `is_training: False`)
  become that Python value; `placeholder_with_default` becomes an argument with a default. It returns
  the fetches' structure (list, tuple, dict; None for a fetched operation, as `sess.run` gives).
  Sites with the same fetches share one function. Each site is recorded for the harness.
- state is created once, where the graph created it: `tf.Variable` / `tf.get_variable` keep their
  TF1 scope path as name (`layer1/weights`); `tf.layers.*` / `tf.losses.*` become Keras objects;
  functions that create variables become `tf.Module` classes; `weight_variable(shape)` factories stay.
- `optimizer.minimize(loss, global_step, var_list)` becomes a GradientTape step on the Keras
  optimizer (TF1 defaults kept where Keras differs, decays as Keras schedules, a fed learning rate
  set on the optimizer each step, batch-norm updates only where TF1 ran UPDATE_OPS); so does
  `compute_gradients` / `tf.gradients` of variables, the statements transforming the gradients
  (clipping), and `apply_gradients` (transforms/graph/training/gradients.py).
- initializer runs, sessions, `sess.close()` and `tf.disable_v2_behavior()` disappear. Sessions opened
  one after another over the graph share the state: the initializer run that begins a later session
  assigns every variable its initial value again, its `saver.restore` restores the checkpoint
  (transforms/graph/sessions/later_sessions.py).
- a graph built by a function returning its placeholders and tensors in a dict or tuple
  (`model = build_model()`, `model["loss"]`), or a function called once to build the training ops
  (`train_op = training(loss, rate)`), is read as if built at the call; helpers the session is passed to
  (`evaluate(sess, model, ...)`) lose that parameter, and the graph values every call passes them
  (`do_eval(sess, eval_correct, images_placeholder, data)`); a function returning a feed dict
  (`fill_feed_dict(data, images_pl, labels_pl)`) is written out at its calls
  (transforms/graph/structure/builders.py, transforms/graph/sessions/session_helpers.py,
  transforms/graph/structure/feed_functions.py, transforms/graph/structure/inline.py); so is a class holding the graph, its `__init__` read as
  such a builder and its methods that run the session as such helpers (transforms/graph/structure/classes.py).
  A class instantiated several times (a DQN's `mainQN` and `targetQN`) is written out once per
  instance, `mainQN.Qout` read as `mainQN_Qout` (transforms/graph/structure/class_instances.py).
- a function creating its variables under `variable_scope(name, reuse=reuse)`, called again with
  reuse=True / tf.AUTO_REUSE, becomes one tf.Module instance called twice (transforms/graph/structure/modules.py),
  and a model function building its layers in such a scope calls the same Keras layers again
  (transforms/graph/layers/model_functions.py);
  `tf.trainable_variables()` in plain code becomes the list of the variables made so far
  (transforms/graph/layers/variable_lists.py).

Results: `sess.run` gave NumPy values, the functions give tensors. A name bound to a result gets
`.numpy()` where it is read (or right where it is bound, when the name may hold other things too or
the program may write into the array), so formatting, NumPy calls, `.shape`, comparisons and writes
behave as before (see transforms/graph/sessions/callsites.py).

The rewrite is all or nothing per file: when any part of the program is outside what the analysis
models (collections, savers, summaries, feeding tensors, graph editing, a session stored or passed
to code that does more than run it, ...)
the file is left for the rename transforms and a warning names the construct and its line.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider

from transforms.common.graph_symbols import Category, calls_category
from transforms.graph.sessions.sessionless import sessionless_placeholders
from transforms.graph.structure.classes import class_program
from transforms.graph.structure.inline import inlined_program
from transforms.graph._pipeline import GraphProgram
from transforms.common.syntax import Refusal
from transforms.base import RUN_SITES_KEY, TFTransform


class SessionsToFunctions(TFTransform):
    CODE = "TFM201"
    DESCRIPTION = "Session/placeholder/feed_dict programs -> tf.function steps, Keras layers and GradientTape"
    SAFETY = "safe"
    PHASE = 20
    # A session to convert, or placeholders kept for want of one (said in a finding).
    TRIGGERS = ("Session", "placeholder")
    IDENTIFIERS = frozenset({"Session", "InteractiveSession", "placeholder"})  # not only in a docstring

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider, ParentNodeProvider)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._creates_session(original_node):
            self._explain_sessionless(original_node)
            return updated_node
        try:
            module, run_sites = self._convert(original_node)
        except Refusal as refusal:
            self.report(refusal.node or original_node, f"not converted to TF2 functions: {refusal.message}; "
                        "the file is left to the renames (compat.v1)", fixed=False, severity="warning")
            return updated_node
        except Exception as error:  # a bug here must not cost the file its renames
            self.report(original_node, f"not converted to TF2 functions: internal error in the analysis "
                        f"({type(error).__name__}: {error}); the file is left to the renames", fixed=False,
                        severity="error")
            return updated_node
        for call, name in run_sites:
            line = self.get_metadata(PositionProvider, call).start.line
            self.context.scratch.setdefault(RUN_SITES_KEY, []).append((line, name))
            self.report(call, f"session run -> {name}()", fixed=True)
        return module

    def _convert(self, module: cst.Module) -> tuple[cst.Module, list[tuple[cst.Call, str]]]:
        program = class_program(self, module) or inlined_program(self, module)  # classes, builders, helpers first
        return program.convert() if program else GraphProgram(self, module).convert()

    def _explain_sessionless(self, module: cst.Module) -> None:
        kept = sessionless_placeholders(self.tf_name, module)
        if kept is not None:
            placeholder, reason = kept
            self.report(placeholder, f"not converted to TF2 functions: {reason}; the file is left to the "
                        "renames (compat.v1)", fixed=False, severity="warning")

    def _creates_session(self, module: cst.Module) -> bool:
        return calls_category(self.tf_name, module, Category.SESSION)
