"""TF1 summaries (v1 ops, `merge_all`, `FileWriter.add_summary`) -> the tf.summary v2 API.

TF1 built summary ops in the graph; a run fetching them got a serialized Summary proto, which
`writer.add_summary(summary, step)` wrote. In TF2 the step function returns the values the summary
ops read, as a dict keyed by the TF1 tag (name scopes included: `summaries/loss`), and the
`add_summary` call becomes `write_summaries(writer, summary, step)`, which writes each value with
the v2 op of the same kind at that step:

    SUMMARY_KINDS = {"summaries/loss": tf.summary.scalar, "summaries/weights": tf.summary.histogram}

    def write_summaries(writer, values, step):
        with writer.as_default(step=step):
            for tag, value in values.items():
                SUMMARY_KINDS[tag](tag, value)

A summary op assigned to a name is `{tag: value}`; `merge([a, b])` is `{**a, **b}`; `merge_all()`
joins every summary op created before it. `tf.summary.FileWriter(logdir, graph)` becomes
`tf.summary.create_file_writer(logdir)` (the graph is not written: TF2 traces graphs with
`tf.summary.trace_on`). Tags, steps and values are kept; the event encoding is v2's (scalars as
tensors, histograms as bucket tensors, images under one tag instead of `<tag>/image/<k>`), which
TensorBoard reads. Refused: `collections=` / `family=`, names that are not string literals, two
summaries with one tag (TF1 renamed the second), a writer used other than by `add_summary`,
`flush` and `close`.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.graph_symbols import Category, summary_kind
from transforms.graph.analysis.model import Item, Kind
from transforms.common.syntax import Refusal, bind_arguments, code, expr, statement, walk

_SIGNATURES = {
    "scalar": ["name", "tensor", "collections", "family"],
    "histogram": ["name", "values", "collections", "family"],
    "image": ["name", "tensor", "max_outputs", "collections", "family"],
    "text": ["name", "tensor", "collections"],
}
_WRITER_METHODS = ("add_summary", "add_graph", "flush", "close")
GRAPH_NOT_WRITTEN = ("FileWriter.add_graph(...) removed: TF2 writes no graph of the program to TensorBoard unless "
                     "traced (tf.summary.trace_on / trace_export around a step function's first call)")
WRITE_FUNCTION = "write_summaries"
#: The tf.function running write_summaries' ops: eagerly each op costs a call of its own (28 summaries,
#: 20 ms a step on a CPU; in one graph 1.2 ms).
OPS_FUNCTION = "write_summary_ops"
KINDS_TABLE = "SUMMARY_KINDS"


@dataclass
class Summary:
    tag: str
    kind: str           # scalar / histogram / image / text: the tf.summary v2 op writing it
    max_outputs: str | None  # images: how many of the batch TF1 wrote
    value: str          # the graph name holding its value in the step functions
    assigned_to: str | None


class SummaryConverter:
    def __init__(self, scanner) -> None:
        self.scanner = scanner
        self.collected: list[Summary] = []  # TF1's SUMMARIES collection, in creation order
        self.writers: dict[str, Item] = {}  # FileWriter names -> the item creating them
        self.session_arguments: set[int] = set()  # `sess` in `FileWriter(logdir, sess.graph)`: dropped
        self.notes: list[tuple[cst.CSTNode, str]] = []  # findings of what was dropped, for a conversion done

    @property
    def found(self) -> bool:
        return bool(self.collected)

    def category(self, call: cst.Call):
        return self.scanner.analyzer.category(call.func)

    def statement(self, item: Item, call: cst.Call) -> bool:
        """`tf.summary.scalar("loss", loss)` on a line of its own: collected for merge_all;
        `writer.add_graph(graph)`: gone (see GRAPH_NOT_WRITTEN)."""
        if self._adds_graph(call):
            item.kind = Kind.INIT_OP  # emits nothing, as a dropped call
            self.notes.append((call, GRAPH_NOT_WRITTEN))
            return True
        name, category, _ = self.category(call)
        if category is not Category.SUMMARY:
            return False
        value = self._value_name(item, call, name)
        self._collect(item, call, name, value, None)
        return True

    def assign(self, item: Item, target: cst.BaseExpression, call: cst.BaseExpression) -> bool:
        """`s = tf.summary.scalar(...)`, `merged = tf.summary.merge_all()` / `merge([...])`,
        `writer = tf.summary.FileWriter(logdir, graph)`."""
        if not isinstance(call, cst.Call):
            return False
        name, category, _ = self.category(call)
        if category not in (Category.SUMMARY, Category.SUMMARY_MERGE, Category.SUMMARY_WRITER):
            return False
        if not isinstance(target, cst.Name):
            raise Refusal(target, f"{name} assigned to something other than a name")
        if category is Category.SUMMARY_WRITER:
            self._writer(item, target.value, call)
        elif category is Category.SUMMARY:
            self._assigned_op(item, target.value, call, name)
        else:
            self._merge(item, target.value, call, name)
        return True

    def _adds_graph(self, call: cst.Call) -> bool:
        """`writer.add_graph(tf.get_default_graph())` / `writer.add_graph(sess.graph)` on a FileWriter
        made beside the graph."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_graph" and isinstance(func.value, cst.Name)
                and func.value.value in self.writers and len(call.args) == 1 and not call.args[0].keyword):
            return False
        graph = call.args[0].value
        if isinstance(graph, cst.Call) and not graph.args and self.category(graph)[0] == "tf.get_default_graph":
            return True
        if isinstance(graph, cst.Attribute) and graph.attr.value == "graph" and isinstance(graph.value, cst.Name) \
                and self.scanner.kinds.get(graph.value.value) is Kind.SESSION:
            self.session_arguments.add(id(graph.value))
            return True
        return False

    # -- summary ops ---------------------------------------------------------------------------------

    def _arguments(self, call: cst.Call, name: str) -> dict[str, cst.BaseExpression]:
        bound = bind_arguments(call, _SIGNATURES[summary_kind(name)], name)
        for option in ("collections", "family"):
            if option in bound and code(bound[option]) != "None":
                raise Refusal(bound[option], f"{name} with {option}= is not modelled")
        if not isinstance(bound.get("name"), cst.SimpleString):
            raise Refusal(call, f"{name} with a name that is not a string literal")
        return bound

    def _tag(self, item: Item, call: cst.Call, name: str) -> str:
        tag = item.scopes.prefix(False) + self._arguments(call, name)["name"].evaluated_value
        if any(summary.tag == tag for summary in self.collected):
            raise Refusal(call, f"a second summary tagged '{tag}' (TF1 renamed it with a suffix)")
        return tag

    def _value_node(self, call: cst.Call, name: str) -> cst.BaseExpression:
        bound = self._arguments(call, name)
        value = bound.get("tensor", bound.get("values"))
        if value is None:
            raise Refusal(call, f"{name} without a value")
        return value

    def _value_name(self, item: Item, call: cst.Call, name: str) -> str:
        """The graph name the step functions read the value from: the value itself when it is a graph
        tensor's name, else a new name bound to it (this statement then computes it)."""
        value = self._value_node(call, name)
        if isinstance(value, cst.Name) and self.scanner.kinds.get(value.value) is Kind.TENSOR:
            self.scanner.analyzer.analyze(value)
            item.kind = Kind.SUMMARY
            return value.value
        leaf = self._arguments(call, name)["name"].evaluated_value.split("/")[-1]
        fresh = self.scanner.names.fresh(f"{_identifier(leaf)}_summary")
        self.scanner.graph_statement(item, (fresh,), value)
        if isinstance(value, cst.Name):  # a variable: its value here, not at the end of the step
            value = cst.Call(expr("tf.identity"), [cst.Arg(value)])
        item.body = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(fresh))], value)])
        return fresh

    def _collect(self, item: Item, call: cst.Call, name: str, value: str, assigned_to: str | None) -> None:
        self.collected.append(self._summary(item, call, name, value, assigned_to))

    def _summary(self, item: Item, call: cst.Call, name: str, value: str, assigned_to: str | None) -> Summary:
        max_outputs = self._arguments(call, name).get("max_outputs")
        return Summary(self._tag(item, call, name), summary_kind(name),
                       code(max_outputs) if max_outputs is not None else None, value, assigned_to)

    def _assigned_op(self, item: Item, target: str, call: cst.Call, name: str) -> None:
        """`loss_summary = tf.summary.scalar("loss", loss)`: a graph dict {tag: value}."""
        value = self._value_node(call, name)
        summary = self._summary(item, call, name, target, target)
        self.scanner.graph_statement(item, (target,), value)
        entry = cst.DictElement(cst.SimpleString(_quoted(summary.tag)), value)
        item.body = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], cst.Dict([entry]))])
        self.collected.append(summary)
        self.scanner.block.summaries.add(target)

    def _merge(self, item: Item, target: str, call: cst.Call, name: str) -> None:
        if name.endswith("merge_all"):
            if call.args:
                raise Refusal(call, "merge_all of a collection other than the default one")
            parts, reads = self._merge_all_parts(item)
        else:
            parts, reads = self._merge_parts(call)
        if not parts:
            raise Refusal(call, f"{name} of no summaries")
        item.body = statement(f"{target} = {{{', '.join(parts)}}}")
        item.reads = frozenset(reads)
        self.scanner.bind(item, (target,), Kind.TENSOR)
        self.scanner.block.summaries.add(target)

    def _merge_all_parts(self, item: Item) -> tuple[list[str], set[str]]:
        parts, reads, merged = [], set(), set()
        for summary in self.collected:
            self._check_unchanged(summary.value, item)
            if summary.assigned_to is None:
                parts.append(f"{_quoted(summary.tag)}: {summary.value}")
                reads.add(summary.value)
            elif summary.assigned_to not in merged:
                parts.append(f"**{summary.assigned_to}")
                reads.add(summary.assigned_to)
                merged.add(summary.assigned_to)
        return parts, reads

    def _merge_parts(self, call: cst.Call) -> tuple[list[str], set[str]]:
        inputs = bind_arguments(call, ["inputs", "collections", "name"], "tf.summary.merge")
        listed = inputs.get("inputs")
        if not isinstance(listed, (cst.List, cst.Tuple)) or set(inputs) != {"inputs"} or not all(
                isinstance(e.value, cst.Name) and e.value.value in self.scanner.block.summaries
                for e in listed.elements):
            raise Refusal(call, "tf.summary.merge of something other than a list of summary names")
        names = [e.value.value for e in listed.elements]
        return [f"**{name}" for name in names], set(names)

    def _check_unchanged(self, name: str, merge: Item) -> None:
        definitions = self.scanner.block.definitions.get(name, [])
        if len(definitions) > 1:
            raise Refusal(merge.node, f"'{name}' is rebound between its summary and the merge")

    # -- the writer ----------------------------------------------------------------------------------

    def _writer(self, item: Item, target: str, call: cst.Call) -> None:
        bound = bind_arguments(call, ["logdir", "graph", "max_queue", "flush_secs", "graph_def",
                                      "filename_suffix", "session"], "tf.summary.FileWriter")
        unsupported = set(bound) - {"logdir", "graph", "graph_def"}
        if unsupported or "logdir" not in bound:
            raise Refusal(call, f"tf.summary.FileWriter with {', '.join(sorted(unsupported)) or 'no logdir'}")
        facts = self.scanner.analyzer.analyze(bound["logdir"])
        if facts.reads or facts.builds_ops:
            raise Refusal(bound["logdir"], "a FileWriter log dir computed from graph values")
        graph = bound.get("graph", bound.get("graph_def"))
        if graph is not None:
            self.session_arguments |= {id(node) for node in walk(graph) if isinstance(node, cst.Name)}
        item.kind = Kind.SUMMARY_WRITER
        item.emit = [statement(f"{target} = tf.summary.create_file_writer({code(bound['logdir'])})")]
        self.writers[target] = item
        self.scanner.bind(item, (target,), Kind.SUMMARY_WRITER)

    def _write_code(self) -> list[cst.BaseStatement]:
        """SUMMARY_KINDS (tag -> kind) and write_summaries(), with one v2 call per kind used."""
        kinds = list(dict.fromkeys(summary.kind for summary in self.collected))
        entries = ", ".join(f"{_quoted(s.tag)}: {_quoted(s.kind)}" for s in self.collected)
        calls = [f"tf.summary.{kind}(tag, value, step=step{self._extra(kind)})" for kind in kinds]
        if len(calls) == 1:
            loop_body = f"            {calls[0]}\n"
        else:
            loop_body = "".join(f"            {'if' if i == 0 else 'elif'} {KINDS_TABLE}[tag] == {_quoted(kind)}:\n"
                                f"                {call}\n" for i, (kind, call) in enumerate(zip(kinds, calls)))
        ops = cst.parse_statement(
            "@tf.function(autograph=False, reduce_retracing=True)\n"
            f"def {OPS_FUNCTION}(writer, values, step):\n"
            f'    """The summary ops of {WRITE_FUNCTION}, in one graph."""\n'
            f"    with writer.as_default():\n"
            f"        for tag, value in values.items():\n" + loop_body)
        function = cst.parse_statement(
            f"def {WRITE_FUNCTION}(writer, values, step):\n"
            f'    """What FileWriter.add_summary(values, step) wrote, with the v2 summary ops."""\n'
            f"    {OPS_FUNCTION}(writer, values, tf.cast(step, tf.int64))  # a tensor step: traced once, not per step\n")
        blank = [cst.EmptyLine(indent=False)] * (2 if self.scanner.resolver.owner is self.scanner.resolver.module else 1)
        table = [statement(f"{KINDS_TABLE} = {{{entries}}}")] if len(calls) > 1 else []
        return table + [ops.with_changes(leading_lines=blank), function.with_changes(leading_lines=blank)]

    def _extra(self, kind: str) -> str:
        if kind != "image":
            return ""
        counts = {s.max_outputs for s in self.collected if s.kind == "image"}
        if len(counts) > 1:
            raise Refusal(None, "image summaries with different max_outputs")
        count = counts.pop()
        return f", max_outputs={count}" if count is not None else ""

    def replacements(self, resolver) -> dict:
        """`writer.add_summary(summary, step)` -> `write_summaries(writer, summary, step)`."""
        first = next(iter(self.writers.values()), None)
        if first is not None and self.collected:  # every tag is known now
            _check_names_free(resolver.module)
            blank = [cst.EmptyLine(indent=False)] * (2 if resolver.owner is resolver.module else 1)
            first.emit = self._write_code() + [first.emit[-1].with_changes(leading_lines=blank)]
        replacements = {}
        for name in self.writers:
            for assignment in resolver.block_assignments(name):
                for access in assignment.references:
                    replacements.update(self._writer_use(access.node, resolver))
        for node in walk(resolver.module):
            if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value == "add_summary" and id(node) not in replacements):
                raise Refusal(node, "add_summary on a writer not created beside the graph")
        return replacements

    def _writer_use(self, node: cst.Name, resolver) -> dict:
        attribute = resolver.parent(node)
        call = resolver.parent(attribute) if isinstance(attribute, cst.Attribute) else None
        if not (isinstance(call, cst.Call) and attribute.value is node
                and attribute.attr.value in _WRITER_METHODS and call.func is attribute):
            raise Refusal(node, f"FileWriter '{node.value}' is used other than by add_summary / flush / close")
        if attribute.attr.value != "add_summary":
            return {}
        if not self.collected:
            raise Refusal(call, "add_summary on a FileWriter, with no summary ops to write")
        bind_arguments(call, ["summary", "global_step"], "FileWriter.add_summary")  # refuses odd calls

        def write(updated: cst.Call) -> cst.BaseExpression:
            bound = bind_arguments(updated, ["summary", "global_step"], "FileWriter.add_summary")
            step = code(bound["global_step"]) if "global_step" in bound else "0"  # TF1 wrote step 0 then
            return expr(f"{WRITE_FUNCTION}({node.value}, {code(bound['summary'])}, {step})")
        return {id(call): write}


def _check_names_free(module: cst.Module) -> None:
    taken = next((n for n in walk(module) if isinstance(n, cst.Name)
                  and n.value in (WRITE_FUNCTION, OPS_FUNCTION, KINDS_TABLE)), None)
    if taken is not None:
        raise Refusal(taken, f"the program already uses the name `{taken.value}`, which the migrated "
                             "summary writing would define")


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _identifier(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_") or "value"
    return cleaned if not cleaned[0].isdigit() else "v_" + cleaned
