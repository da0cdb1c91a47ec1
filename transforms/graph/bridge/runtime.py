"""The code TFM203 writes into a module whose graph stays TF1 code (importable for its tests).

`wrap_tf1_graph` builds the graph once, as a TF2 function graph (`tf.compat.v1.wrap_function`), and
`graph_function` turns one `Session.run` site into a TF2 function pruned from it (`run_graph` does
so on a site's first run, where its fetches or fed values are known only then). Variables keep TF1's
life cycle: each holds zeros until the graph's initializer op runs (`global_variables_initializer()`
and the like work inside the wrapped graph), and running it again draws new initial values, as a
second `sess.run(init)` did.
"""
import numpy
import tensorflow as tf


def wrap_tf1_graph(build_graph):
    """`build_graph()`, TF1 graph-building code, run once into a graph the returned
    `tf.compat.v1.WrappedFunction` prunes TF2 functions from (see graph_function)."""

    def build():
        graph = tf.compat.v1.get_default_graph()

        def create_variable(next_creator, **kwargs):
            # A variable of a function graph cannot take its initial value from that graph, so it
            # starts at zeros and an op of the graph assigns the initial value, as TF1's initializer
            # did (outside any control dependencies the variable was created under, as there).
            with graph.as_default(), tf.control_dependencies(None):
                initial_value = kwargs["initial_value"]
                if callable(initial_value):
                    initial_value = initial_value()
                initial_value = tf.convert_to_tensor(initial_value, dtype=kwargs.get("dtype"))
            kwargs["initial_value"] = lambda: tf.zeros(initial_value.shape, initial_value.dtype)
            kwargs.pop("caching_device", None)  # a placement hint (dynamic_rnn's) eager variables refuse
            name = kwargs.get("name") or "Variable"
            if tf.executing_eagerly() and not name.endswith("/"):
                # Made under tf.init_scope (an optimizer's beta1_power): named uniquely in the graph, as in TF1.
                kwargs["name"] = graph.unique_name(name)
            variable = next_creator(**kwargs)
            with graph.as_default(), tf.control_dependencies(None):
                variable._initializer_op = variable.assign(initial_value, read_value=False)
            return variable

        with tf.variable_creator_scope(create_variable):
            build_graph()

    return tf.compat.v1.wrap_function(build, signature=[])


def graph_function(graph, feeds, fetches, name):
    """`Session.run(fetches, feed_dict)` over the wrapped `graph` as a TF2 function named `name`:
    called with the values of `feeds`, in order (converted to their dtype as TF1 converted fed
    values), it returns the structure of `fetches` with NumPy values, None for an operation."""
    with graph.graph.as_default():  # a pruned function returns tensors: fetched variables are read
        fetches = tf.nest.map_structure(lambda f: tf.identity(f) if isinstance(f, tf.Variable) else f, fetches)
    pruned = graph.prune(feeds=list(feeds), fetches=fetches)

    def run_site(*values):
        return pruned(*values)

    run_site.__name__ = name  # the function's name in traces and profiles
    specs = [tf.TensorSpec.from_tensor(feed) for feed in feeds]
    # Called as a concrete function: one trace, and none of tf.function's per-call argument matching.
    function = tf.function(run_site, input_signature=specs).get_concrete_function()

    def run(*values):
        # As Session.run converted fed values: NumPy arrays of the placeholder's dtype (1 fed to a bool
        # placeholder is True, 2.7 fed to an int one is 2).
        tensors = [tf.constant(numpy.asarray(value, spec.dtype.as_numpy_dtype), spec.dtype)
                   for value, spec in zip(values, specs)]
        return tf.nest.map_structure(lambda value: None if value is None else value.numpy(), function(*tensors))

    return run


def run_graph(graph, name, fetches, feeds=(), values=()):
    """`Session.run(fetches, dict(zip(feeds, values)))` over the wrapped `graph`, for a run whose fetches or
    fed values are known only when it runs (a function given the session, a feed dict gaining keys): the
    function pruned for these fetches and feeds (see graph_function) is made on their first run and kept on
    the graph. `feeds` may also be the feed dict itself, keyed by the fed values' `.ref()`s."""
    if isinstance(feeds, dict):
        feeds, values = [key.deref() for key in feeds], list(feeds.values())
    flat_fetches = tf.nest.flatten(fetches)
    key = (name, tuple(map(id, flat_fetches)), tuple(map(id, feeds)))  # graph values live as long as the graph
    pruned = vars(graph).setdefault("pruned_runs", {})
    if key not in pruned:
        pruned[key] = graph_function(graph, list(feeds), flat_fetches, name)
    return tf.nest.pack_sequence_as(fetches, pruned[key](*values))


class TF1FileWriter:
    """`tf.summary.FileWriter` on a TF2 summary writer: the serialized `Summary` protos that v1 summary
    ops return are written as they are, at the step given (0 when none, as TF1 wrote them)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, filename_suffix=None):
        self._writer = tf.summary.create_file_writer(logdir, max_queue=max_queue, flush_millis=flush_secs * 1000,
                                                     filename_suffix=filename_suffix)
        if graph is not None:
            self.add_graph(graph)

    def add_summary(self, summary, global_step=None):
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        with self._writer.as_default():
            tf.summary.experimental.write_raw_pb(summary, step=0 if global_step is None else global_step)

    def add_graph(self, graph):
        with self._writer.as_default():
            tf.summary.graph(graph)

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()
