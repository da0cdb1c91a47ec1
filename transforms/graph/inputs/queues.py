"""TF1 queue-runner input pipelines -> tf.data.

    filename_queue = tf.train.string_input_producer(["train.tfrecords"], num_epochs=N)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(serialized, features={...})     # per-example graph code
    image, label = ..., ...
    images, labels = tf.train.batch([image, label], batch_size=32)
    coord = tf.train.Coordinator(); threads = tf.train.start_queue_runners(sess, coord)

becomes a function of one record holding the per-example statements, a dataset and its iterator:

    def read_example(serialized):
        features = tf.parse_single_example(serialized, features={...})
        ...
        return image, label

    dataset = (tf.data.TFRecordDataset(["train.tfrecords"]).repeat(N)
               .map(read_example, num_parallel_calls=tf.data.AUTOTUNE)
               .batch(32, drop_remainder=True).prefetch(tf.data.AUTOTUNE))
    iterator = iter(dataset)

and `images, labels = iterator.get_next()` moves into the step functions (see transforms/graph/inputs/datasets.py):
each run depending on the batch takes the next one, as each run dequeued one from TF1's queue, and
the end of the data raises OutOfRangeError as before. The queue-runner threads and their Coordinator
go. The examples come in the same order: one reader thread read the records in file order and
`tf.train.batch` with one thread kept it; `map` is deterministic. Refused where the order cannot be
kept: `shuffle_batch` (TF1's RandomShuffleQueue), several batching threads, filename shuffling
over several files; also `enqueue_many`, other readers, and per-example code reading other graph
values.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category
from transforms.graph.analysis.model import Item, Kind
from transforms.common.syntax import Refusal, bind_arguments, code, expr, statement, walk, with_value

_PRODUCER = ["string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name", "cancel_op"]
_BATCH = ["tensors", "batch_size", "num_threads", "capacity", "enqueue_many", "shapes", "dynamic_pad",
          "allow_smaller_final_batch", "shared_name", "name"]
_COORDINATOR_METHODS = ("request_stop", "join")


class QueueReader:
    def __init__(self, scanner) -> None:
        self.scanner = scanner
        self.producers: dict[str, cst.Call] = {}      # filename queue name -> its producer call
        self.readers: set[str] = set()
        self.records: dict[str, str] = {}             # record tensor name -> filename queue name
        self.example_items: list[Item] = []           # per-example statements, in order
        self.coordinators: set[str] = set()          # Coordinator and queue-runner thread names
        self.session_arguments: set[int] = set()      # names in start_queue_runners(sess, coord): it goes
        self.batched = False

    @property
    def kinds(self) -> dict[str, Kind]:
        return self.scanner.kinds

    def category(self, call: cst.Call) -> Category | None:
        return self.scanner.analyzer.category(call.func)[1]

    def assign(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return self._example_statement(item, target, value)
        category = self.category(value)
        if category is Category.QUEUE_PRODUCER:
            self._producer(item, target, value)
        elif category is Category.QUEUE_READER:
            self._reader(item, target, value)
        elif category is Category.QUEUE_BATCH:
            self._batch(item, target, value)
        elif category is Category.QUEUE_RUNNERS:
            self._runners(item, target, value)
        elif category is Category.QUEUE_COORDINATOR:
            self._coordinator(item, target)
        elif self._is_read(value):
            self._record(item, target, value)
        else:
            return self._example_statement(item, target, value)
        return True

    def statement(self, item: Item, call: cst.Call) -> bool:
        """`tf.train.start_queue_runners(sess, coord)` as a statement: the threads go."""
        if self.category(call) is not Category.QUEUE_RUNNERS:
            return False
        self._runners(item, None, call)
        return True

    # -- the pipeline's parts ------------------------------------------------------------------------

    def _single_name(self, target: cst.BaseExpression, what: str) -> str:
        if not isinstance(target, cst.Name):
            raise Refusal(target, f"{what} assigned to something other than a name")
        return target.value

    def _producer(self, item: Item, target: cst.BaseExpression, call: cst.Call) -> None:
        name = self._single_name(target, "a filename queue")
        bound = bind_arguments(call, _PRODUCER, "tf.train.string_input_producer")
        if set(bound) - {"string_tensor", "num_epochs", "shuffle", "seed", "capacity", "name"}:
            raise Refusal(call, "string_input_producer with shared_name / cancel_op is not modelled")
        files = bound["string_tensor"]
        shuffled = code(bound.get("shuffle", expr("True"))) != "False"
        if shuffled and not (isinstance(files, (cst.List, cst.Tuple)) and len(files.elements) == 1):
            raise Refusal(call, "string_input_producer shuffling several files: TF1's file order cannot be kept "
                                "(pass shuffle=False to keep the order)")
        self._check_python(bound.values(), call)
        self.producers[name] = call
        self._vanish(item, (name,))

    def _reader(self, item: Item, target: cst.BaseExpression, call: cst.Call) -> None:
        if call.args:
            raise Refusal(call, "a TFRecordReader with options is not modelled")
        self.readers.add(self._single_name(target, "a reader"))
        self._vanish(item, (target.value,))

    def _is_read(self, call: cst.Call) -> bool:
        func = call.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "read" and isinstance(func.value, cst.Name)
                and func.value.value in self.readers)

    def _record(self, item: Item, target: cst.BaseExpression, call: cst.Call) -> None:
        """`key, record = reader.read(filename_queue)`: `record` is one serialized example."""
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2
                and all(isinstance(e.value, cst.Name) for e in target.elements)):
            raise Refusal(call, "reader.read must be unpacked into (key, value) names")
        queue = call.args[0].value if len(call.args) == 1 else None
        if not (isinstance(queue, cst.Name) and queue.value in self.producers):
            raise Refusal(call, "reader.read of something other than a string_input_producer queue")
        key, record = (e.value.value for e in target.elements)
        self.records[record] = queue.value
        names = (record,) if key == "_" else (key, record)  # the key is not read by the reader function
        item.kind, item.defines = Kind.EXAMPLE, names
        for name in names:
            self.kinds[name] = Kind.EXAMPLE
        self.example_items.append(item)

    def _example_statement(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """A statement computing per-example values from the record: it moves into read_example()."""
        if not any(isinstance(node, cst.Name) and self.kinds.get(node.value) is Kind.EXAMPLE for node in walk(value)):
            return False
        facts = self.scanner.analyzer.analyze(value)
        examples = {name for name in facts.reads if self.kinds[name] is Kind.EXAMPLE}
        if not examples:
            return False
        if self.batched:
            raise Refusal(value, "a per-example input value used after tf.train.batch")
        others = facts.reads - examples
        if others or facts.layer_calls or facts.run_calls or facts.helper_calls:
            raise Refusal(value, "per-example input code that also reads "
                                 f"{', '.join(sorted(others)) or 'layers or helpers'}: not modelled")
        names = [n.value for n in walk(target) if isinstance(n, cst.Name)] if not isinstance(target, cst.Name) \
            else [target.value]
        item.kind, item.defines = Kind.EXAMPLE, tuple(names)
        for name in names:
            self.kinds[name] = Kind.EXAMPLE
        self.example_items.append(item)
        return True

    def _batch(self, item: Item, target: cst.BaseExpression, call: cst.Call) -> None:
        name = self.scanner.analyzer.category(call.func)[0]
        if not name.endswith(".batch"):
            raise Refusal(call, f"{name}: TF1's shuffling queue order cannot be reproduced by tf.data; "
                                "not converted")
        bound = bind_arguments(call, _BATCH, "tf.train.batch")
        if set(bound) - {"tensors", "batch_size", "num_threads", "capacity", "allow_smaller_final_batch", "name"}:
            raise Refusal(call, "tf.train.batch with enqueue_many / shapes / dynamic_pad is not modelled")
        if code(bound.get("num_threads", expr("1"))) != "1":
            raise Refusal(call, "tf.train.batch with several threads: TF1's example order is not deterministic")
        if self.batched:
            raise Refusal(call, "a second tf.train.batch is not modelled")
        self.batched = True
        outputs = self._batched_names(bound["tensors"])
        record = self._record_of(outputs, call)
        iterator = self.scanner.names.fresh("iterator")
        reader = self.scanner.names.fresh("read_example")
        blank = [cst.EmptyLine(indent=False)] * self._blank_lines()
        item.emit = [self._reader_function(reader, record, outputs).with_changes(leading_lines=blank),
                     statement(f"dataset = {self._pipeline(record, reader, bound)}").with_changes(leading_lines=blank),
                     statement(f"{iterator} = iter(dataset)")]
        self.scanner.analyzer.datasets.inline_iterators.add(iterator)
        self.kinds[iterator] = Kind.ITERATOR
        item.body = with_value(item.node, f"{iterator}.get_next()")
        self.scanner.graph_statement(item, _target_names(target), expr(f"{iterator}.get_next()"))

    def _batched_names(self, tensors: cst.BaseExpression) -> str:
        """The per-example values batched, as the function returning them writes them."""
        if isinstance(tensors, (cst.List, cst.Tuple)) and all(
                isinstance(e.value, cst.Name) and self.kinds.get(e.value.value) is Kind.EXAMPLE for e in tensors.elements):
            return ", ".join(e.value.value for e in tensors.elements)
        if isinstance(tensors, cst.Dict) and all(
                isinstance(e, cst.DictElement) and isinstance(e.value, cst.Name)
                and self.kinds.get(e.value.value) is Kind.EXAMPLE for e in tensors.elements):
            return code(tensors)
        raise Refusal(tensors, "tf.train.batch of something other than a list or dict of per-example names")

    def _record_of(self, outputs: str, call: cst.Call) -> str:
        if len(self.records) != 1:
            raise Refusal(call, "several readers feeding one batch are not modelled")
        return next(iter(self.records))

    def _reader_function(self, name: str, record: str, outputs: str) -> cst.FunctionDef:
        body = [example.node for example in self.example_items if record not in example.defines]
        function = cst.parse_statement(f"def {name}({record}):\n    return {outputs}\n")
        return function.with_changes(body=function.body.with_changes(body=[*body, *function.body.body]))

    def _blank_lines(self) -> int:
        resolver = self.scanner.resolver
        return 2 if resolver.owner is resolver.module else 1

    def _pipeline(self, record: str, reader: str, batch: dict) -> str:
        producer = bind_arguments(self.producers[self.records[record]], _PRODUCER, "tf.train.string_input_producer")
        epochs = code(producer["num_epochs"]) if "num_epochs" in producer else "None"
        repeat = "" if epochs == "1" else f".repeat({'' if epochs == 'None' else epochs})"
        smaller = code(batch.get("allow_smaller_final_batch", expr("False"))) != "False"
        drop = "" if smaller or epochs == "None" else ", drop_remainder=True"
        return (f"(tf.data.TFRecordDataset({code(producer['string_tensor'])}){repeat}\n"
                f"           .map({reader}, num_parallel_calls=tf.data.AUTOTUNE)\n"
                f"           .batch({code(batch['batch_size'])}{drop})\n"
                f"           .prefetch(tf.data.AUTOTUNE))")

    # -- threads ---------------------------------------------------------------------------------------

    def _coordinator(self, item: Item, target: cst.BaseExpression) -> None:
        """`coord = tf.train.Coordinator()`: TF2 has no queue-runner threads to coordinate."""
        self.coordinators.add(self._single_name(target, "a Coordinator"))
        self._vanish(item, (target.value,))

    def _runners(self, item: Item, target: cst.BaseExpression | None, call: cst.Call) -> None:
        bound = bind_arguments(call, ["sess", "coord", "daemon", "start", "collection"], "start_queue_runners")
        for value in bound.values():
            self.session_arguments |= {id(node) for node in walk(value) if isinstance(node, cst.Name)}
        names = (self._single_name(target, "queue-runner threads"),) if target is not None else ()
        self.coordinators.update(names)
        self._vanish(item, names)

    def _vanish(self, item: Item, names: tuple[str, ...]) -> None:
        item.kind, item.defines, item.emit = Kind.QUEUE, names, []
        for name in names:
            self.kinds[name] = Kind.QUEUE

    def _check_python(self, values, call: cst.Call) -> None:
        for value in values:
            facts = self.scanner.analyzer.analyze(value)
            if facts.reads or facts.builds_ops:
                raise Refusal(call, "input file names computed from graph values")

    def replacements(self, resolver) -> dict:
        """`coord.request_stop()` / `coord.join(threads)` go (a `finally:` holding only them goes too)."""
        if self.records and not self.example_items:
            raise Refusal(None, "a reader whose records are never batched")
        removed: set[int] = set()
        for name in self.coordinators:
            for assignment in resolver.block_assignments(name):
                for access in assignment.references:
                    if id(access.node) not in self.session_arguments:  # start_queue_runners(coord=coord) goes
                        removed.add(id(self._coordinator_statement(access.node, resolver)))
        replacements = {key: (lambda _: cst.RemovalSentinel.REMOVE) for key in removed}
        for node in walk(resolver.module):
            if isinstance(node, cst.Try) and node.finalbody and node.finalbody.body.body and all(
                    id(s) in removed for s in node.finalbody.body.body):
                if node.handlers or node.orelse:
                    replacements[id(node.finalbody)] = lambda _: cst.RemovalSentinel.REMOVE
                else:
                    replacements[id(node)] = lambda updated: cst.FlattenSentinel(updated.body.body)
        return replacements

    def _coordinator_statement(self, node: cst.Name, resolver) -> cst.CSTNode:
        """The statement `coord.request_stop()` / `coord.join(threads)` a reference sits in."""
        current = resolver.parent(node)
        while current is not None and not isinstance(current, cst.SimpleStatementLine):
            current = resolver.parent(current)
        small = current.body[0] if current is not None and len(current.body) == 1 else None
        call = small.value if isinstance(small, cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name) and call.func.value.value in self.coordinators
                and call.func.attr.value in _COORDINATOR_METHODS):
            raise Refusal(node, f"'{node.value}' (queue runners) is used other than by request_stop() / join()")
        return current


def _target_names(target: cst.BaseExpression) -> tuple[str, ...]:
    if isinstance(target, cst.Name):
        return (target.value,)
    return tuple(e.value.value for e in target.elements if isinstance(e.value, cst.Name))
