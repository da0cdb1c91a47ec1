"""The whole conversion of one TF1 graph program (see sessions_to_functions.py), step by step:
find the graph block, read it, read the run sites, check, plan the step functions, write them,
rewrite the run sites and reassemble the module."""
from __future__ import annotations

import libcst as cst

from transforms.graph.analysis.assigns import check_assignment_order
from transforms.graph.writing.assemble import assemble
from transforms.graph.sessions.callsites import CallSiteRewriter
from transforms.graph.outputs.checkpoint_code import CheckpointCode
from transforms.graph.analysis.checks import (check_batch_norm, check_bindings, check_captures, check_feed_dicts,
                                              check_helpers, check_placement, check_run_captures)
from transforms.graph.writing.constant_conds import cond_calls
from transforms.graph.writing.step_functions import FunctionWriter
from transforms.graph.analysis.helpers import graph_helpers, variable_factory
from transforms.graph.layers.keras_layers import NameAllocator
from transforms.graph.training.metrics import check_metric_runs, reset_replacements
from transforms.graph.training.optimizer_emulations import with_emulating_optimizers
from transforms.graph.rnn.cell_variables import with_cell_variable_functions
from transforms.graph.sessions.configs import CONFIG_GONE, session_config_replacements
from transforms.graph.sessions.reinit import check_initializer_runs
from transforms.graph.sessions.later_sessions import (REINITIALISED, check_later_sessions, reinitialisation_code,
                                                      reinitialisation_replacements, reopening_initialisations,
                                                      session_starts)
from transforms.graph.writing.finish import finish_module
from transforms.graph.writing.outside import outside_replacements
from transforms.graph.writing.plan import Planner
from transforms.graph.analysis.resolver import GraphResolver
from transforms.graph.sessions.runs import read_run_site
from transforms.graph.analysis.scan import GraphScanner
from transforms.graph.sessions.sessions import (check_session_uses, default_session_blocks, find_sessions,
                                               nested_session_replacements)
from transforms.common.syntax import Refusal, load_names, unwrapped_block, walk
from transforms.graph.layers.regularization import regularization_aliases
from transforms.graph.layers.variable_lists import (defer_layer_variable_lists, fetched_variables,
                                                    objects_built_at_first_call, variable_iteration_replacements,
                                                    variable_list_replacements)


class GraphProgram(GraphResolver):
    def convert(self) -> tuple[cst.Module, list[tuple[cst.Call, str]]]:
        """The converted module and (run-site call, step function name) pairs; raises Refusal."""
        self.owner, statements = self.graph_block()
        sessions = find_sessions(self)
        if not sessions:
            raise Refusal(None, "the session is not created beside the graph it runs")
        starts = session_starts(sessions, self)
        self.block_scope = self.scope(statements[0])
        names = NameAllocator({node.value for node in load_names(self.module, parameters=True)})
        scanner = self._scanner(statements, names)
        block, flattener = scanner.scan(statements, self.owner)
        sites = self._run_sites(scanner, flattener)
        check_bindings(block, flattener.context_headers, self)
        check_captures(block, self)
        check_run_captures(sites, self)
        helper_state = check_helpers(block, scanner.helper_uses, scanner.analyzer, self, scanner.converted_helpers,
                                     set(scanner.module_helpers))
        planner = Planner(block, helper_state, self._flag_placeholders(scanner), names)
        reopening = reopening_initialisations(block, sites, starts, self)
        check_initializer_runs(block, sites, self, reopening)
        runs = [site for site in sites if not site.is_init]
        if not runs:
            raise Refusal(None, "the session never runs anything but initialisers")
        functions = planner.plan(runs)
        check_later_sessions(functions, reopening, scanner.checkpoints, starts, block, self)
        regularization_aliases(block, scanner, functions)
        block.graph_code_replacements.update(variable_iteration_replacements(block, scanner, functions))
        deferred_lists = defer_layer_variable_lists(block, scanner)
        self._gather(functions)
        check_placement(functions, self)
        assignment_notes = check_assignment_order(functions, block, planner)
        check_metric_runs(functions, scanner.metrics.metrics)
        check_batch_norm(functions, scanner.layer_uses)
        rewriter = CallSiteRewriter(self)
        rewriter.choose_returns(functions)
        conds = cond_calls(self, [*(item.node for item in block.items if not item.keeps_original),
                                  *block.helpers.values()])
        writer = FunctionWriter(block, scanner.layer_uses, names, conds, objects_built_at_first_call(block, scanner))
        definitions: dict[int, list[cst.FunctionDef]] = {}
        order = sorted(functions, key=lambda f: (f.insert_at, min(self.line(s.call) for s in f.sites)))
        trainables = {id(function): planner.trainable(function) for function in order}
        builds = writer.optimizer_builds(order, trainables)
        for function in order:
            written = [writer.write(function, trainables[id(function)]), builds.get(id(function))]
            definitions.setdefault(function.insert_at, []).extend(s for s in written if s is not None)
        rewriter.replacements.update(outside_replacements(self, block, scanner))
        rewriter.replacements.update(nested_session_replacements(sessions, block, flattener))
        configs, config_lines = session_config_replacements(self, [call for call, _ in sessions])
        rewriter.replacements.update(configs)
        rewriter.replacements.update(variable_list_replacements(block, scanner))
        rewriter.replacements.update(deferred_lists)
        rewriter.replacements.update(block.graph_code_replacements)
        rewriter.replacements.update({id(b): unwrapped_block for b in scanner.helper_scope_blocks})
        rewriter.replacements.update(scanner.summaries.replacements(self))
        rewriter.replacements.update(scanner.queues.replacements(self))
        checkpoints = CheckpointCode(scanner.checkpoints, self, names) if scanner.checkpoints.saver else None
        rewriter.replacements.update(checkpoints.replacements() if checkpoints else {})
        init_sites = [site for site in sites if site.is_init and all(site.call is not r.call for r in reopening)]
        rewriter.rewrite(functions, init_sites, scanner.session_closes, scanner.feed_dicts, names.fresh)
        self._reinitialise(reopening, block, scanner, sites, names, definitions, rewriter.replacements)
        rewriter.replacements.update(reset_replacements(block, init_sites, scanner.metrics.metrics, self))
        written = {index for function in functions for index in function.items}
        new_statements = assemble(block, definitions, rewriter.replacements, 2 if self.owner is self.module else 1,
                                  written)
        module = finish_module(self, new_statements, rewriter.replacements)
        module = with_emulating_optimizers(self, module, scanner.state.training.emulated)
        module = with_cell_variable_functions(module, scanner.cell_variable_functions)
        module = checkpoints.finish(module) if checkpoints else module
        run_sites = [(site.call, f.name) for f in functions for site in f.sites]
        for site in reopening:
            self.transform.report(site.call, REINITIALISED, fixed=True)
        notes = scanner.rnn.notes + scanner.summaries.notes + assignment_notes
        for node, message in notes + [(line, CONFIG_GONE) for line in config_lines[:1]]:
            self.transform.report(node, message, fixed=True)
        return module, sorted(run_sites, key=lambda pair: self.line(pair[0]))

    def _reinitialise(self, reopening, block, scanner, sites, names, definitions, replacements) -> None:
        """Initializer runs beginning a later session assign the variables copies of their initial values."""
        if not reopening:
            return
        index, copying, loop = reinitialisation_code(block, scanner, sites, names)
        definitions.setdefault(index, []).append(copying)
        replacements.update(reinitialisation_replacements(reopening, loop, self))

    def _scanner(self, statements: list[cst.BaseStatement], names: NameAllocator) -> GraphScanner:
        """A scanner that knows the functions graph code may call (helpers, variable factories)."""
        scanner = GraphScanner(self, set(), names)
        functions = [s for s in [*self.module.body, *statements] if isinstance(s, cst.FunctionDef)]
        helpers = graph_helpers(functions, scanner.analyzer)
        scanner.analyzer.helpers.update(helpers)
        scanner.helper_defs = helpers
        scanner.block.helpers = helpers
        for name, helper in helpers.items():
            trainable = variable_factory(helper, scanner.analyzer)
            if trainable is not None:
                scanner.state.factories[name] = trainable
        return scanner

    def _run_sites(self, scanner: GraphScanner, flattener) -> list:
        feed_dicts = {id(assign.targets[0].target): assign for assign in scanner.feed_dicts}
        scanner.analyzer.fetched_variables = fetched_variables(scanner.block, scanner)
        sites = [read_run_site(scanner.analyzer, index, call, feed_dicts) for index, call in scanner.run_calls]
        check_feed_dicts(scanner.feed_dicts, sites, self)
        check_session_uses(self, sites, scanner.session_closes,
                           scanner.checkpoints.session_arguments() | scanner.summaries.session_arguments
                           | scanner.queues.session_arguments | default_session_blocks(flattener))
        for site in sites:
            site.reads = {scanner.block.aliases.get(name, name) for name in site.reads}
        return sites

    def _gather(self, functions) -> None:
        """Define all step functions at one place (after the last graph statement any of them needs)
        when no session run comes earlier; otherwise each goes where it first can."""
        common = max(function.insert_at for function in functions)
        executing = [site.item_index for f in functions for site in f.sites if not self.inside_function(site.call)]
        if all(index >= common for index in executing):
            for function in functions:
                function.insert_at = common

    def _flag_placeholders(self, scanner: GraphScanner) -> set[str]:
        """Placeholders passed as Keras `training=`: they must be Python values, not tensors."""
        placeholders = scanner.block.placeholders
        return {node.value for uses in scanner.layer_uses.values() for use in uses
                for value in use.check_arguments.values() for node in walk(value)
                if isinstance(node, cst.Name) and node.value in placeholders}
