"""sessions_to_functions (TFM201) on small programs: what it records, how results stay NumPy, when it
refuses. Exact outputs of whole programs are in tests/fixtures/sessions_to_functions/; programs run
end to end in test_sessions_to_functions_examples.py."""
from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

from migrate.runner import Options, migrate_code
from transforms.base import TransformContext

ONLY_THIS = Options(select=("TFM201",))
FIXTURES = Path(__file__).parent / "fixtures" / "sessions_to_functions"
DATA = Path(__file__).resolve().parent.parent / "transforms" / "data"

GRAPH = """\
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(np.zeros((2, 1), np.float32))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
"""


def convert(source: str):
    outcome = migrate_code(source, ONLY_THIS)
    return outcome.module.code, outcome.findings, outcome.run_sites


def test_run_sites_are_recorded_with_their_legacy_lines_and_shared_functions():
    source = GRAPH + (
        "first = sess.run(loss, {x: a, y: b})\n"
        "sess.run(train_op, {x: a, y: b})\n"
        "second = loss.eval({x: a, y: b}, session=sess)\n")
    code, _, run_sites = convert(source)
    assert run_sites == ((11, "compute_loss"), (12, "train_step"), (13, "compute_loss"))
    assert code.count("def compute_loss(") == 1 and code.count("def train_step(") == 1


def test_results_are_converted_where_they_are_read():
    code, _, _ = convert(GRAPH + "value = sess.run(loss, {x: a, y: b})\nprint(value, float(value))\n")
    assert "print(value.numpy(), float(value))" in code
    assert "value = compute_loss(a, b)\n" in code


def test_a_refused_queue_is_refused_again_under_its_tf2_name():
    """The stability run sees `tf.queue.FIFOQueue` where the first run refused `tf.FIFOQueue`."""
    source = GRAPH + "queue = tf.FIFOQueue(3, tf.float32)\nprint(sess.run(loss, {x: a, y: b}))\n"
    first = migrate_code(source)
    assert any("queues is not modelled" in finding.message for finding in first.findings)
    again = migrate_code(first.module.code)
    assert again.module.code == first.module.code


@pytest.mark.parametrize("rest, reason", [
    ("", "opens no session: the code that feeds them is in another file"),
    ("sv = tf.train.Supervisor(logdir='/tmp/x')\n", "sessions come from tf.train.Supervisor"),
    ("class NetTest(tf.test.TestCase):\n    pass\n", "sessions are tf.test.TestCase's"),
])
def test_placeholders_kept_without_a_session_of_the_file_say_why(rest: str, reason: str):
    source = "import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 2])\n" + rest
    code, findings, _ = convert(source)
    assert code == source
    assert [(f.code, f.line, f.fixed) for f in findings] == [("TFM201", 3, False)]
    assert reason in findings[0].message


def test_a_name_that_also_holds_other_values_is_converted_where_it_is_bound():
    loop = "for _ in range(3):\n    value = sess.run(loss, {x: a, y: b})\n"
    code, _, _ = convert(GRAPH + "value = 0.0\n" + loop + "print(value)\n")
    assert "value = compute_loss(a, b).numpy()" in code
    assert "print(value)" in code


def test_unpacked_results_skip_the_train_op_and_convert_the_tensors():
    code, _, _ = convert(GRAPH + "total = 0\n_, total = sess.run([train_op, loss], {x: a, y: b})\nprint(total)\n")
    assert "total = train_step(a, b)\ntotal = total.numpy()" in code
    assert "return loss\n" in code and "[None, loss]" not in code


def test_the_fetched_structure_stays_where_a_caller_reads_the_train_ops_place():
    read_whole = GRAPH + "results = sess.run([train_op, loss], {x: a, y: b})\nprint(results[1])\n"
    read_op = GRAPH + "done, total = sess.run([train_op, loss], {x: a, y: b})\nprint(done, total)\n"
    for program in (read_whole, read_op):
        code, _, _ = convert(program)
        assert "return [None, loss]" in code


def test_results_used_inside_expressions_are_converted_in_place():
    code, _, _ = convert(GRAPH + "print(sess.run([loss, loss * 2], {x: a, y: b}))\n")
    assert "print([value.numpy() for value in compute_loss(a, b)])" in code


def test_only_the_needed_placeholders_become_arguments():
    code, _, _ = convert(GRAPH + "print(sess.run(tf.matmul(x, w), {x: a, y: b}))\n")
    assert "def compute_matmul(x):" in code
    assert "compute_matmul(a).numpy()" in code


def test_the_output_has_no_session_and_no_placeholder_left():
    code, findings, _ = convert(GRAPH + "print(sess.run(loss, {x: a, y: b}))\nsess.close()\n")
    for word in ("Session", "placeholder", "feed_dict", "global_variables_initializer", "sess"):
        assert word not in code
    assert all(f.fixed for f in findings)
    cst.parse_module(code)


def test_a_feed_dict_changed_after_it_was_built_is_refused():
    source = GRAPH + "a = 1\nfeed = {x: a, y: b}\na = 2\nprint(sess.run(loss, feed_dict=feed))\n"
    code, findings, run_sites = convert(source)
    assert code == source and not run_sites
    assert [(f.line, f.severity, f.fixed) for f in findings] == [(13, "warning", False)]


REFUSALS = sorted(FIXTURES.glob("refuse_*.in.py"))


@pytest.mark.parametrize("case", REFUSALS, ids=[c.name for c in REFUSALS])
def test_refusals_leave_the_file_and_say_why_where(case: Path):
    source = case.read_text()
    code, findings, run_sites = convert(source)
    assert code == source and not run_sites
    assert len(findings) == 1
    finding = findings[0]
    assert finding.severity == "warning" and not finding.fixed and finding.line > 0
    assert "not converted" in finding.message


def test_the_rewrite_is_a_registered_safe_structural_transform():
    from transforms import transform_by_module_name
    transform = transform_by_module_name("sessions_to_functions")
    assert transform.CODE == "TFM201" and transform.SAFETY == "safe" and 10 <= transform.PHASE < 50
    transform(TransformContext())  # constructible with a bare context


def test_keras_counterparts_in_the_tables_exist():
    keras = pytest.importorskip("keras")
    layers = json.loads((DATA / "layers.json").read_text())
    optimizers = json.loads((DATA / "optimizers.json").read_text())
    initializers = json.loads((DATA / "initializers.json").read_text())
    for name, entry in layers.items():
        if name != "about":
            assert hasattr(keras.layers, entry["keras"]), name
    emulations = _emulating_optimizer_classes()
    for entry in optimizers["optimizers"].values():
        if "emulation" not in entry:
            optimizer_class = getattr(keras.optimizers, entry["keras"])
            keywords = {entry["renames"].get(p, p) for p in entry["signature"] if p not in entry["drop"]}
            keywords |= {key for key in entry["defaults"] if key not in entry["signature"]}
            optimizer_class(**{key: 0.5 if key != "nesterov" else True for key in keywords})
        emulation = entry.get("emulation") or entry.get("varying_rate_emulation")
        if emulation:  # called with the TF1 keywords
            keywords = {p for p in entry["signature"] if p not in entry["drop"]}
            assert isinstance(emulations[emulation](**{key: 0.5 for key in keywords}), keras.optimizers.Optimizer)
    for entry in optimizers["schedules"].values():
        assert hasattr(keras.optimizers.schedules, entry["keras"])
    for name, entry in initializers.items():
        if name != "about":  # initializers, and regularizers converted the same way
            module = getattr(keras, entry.get("module", "initializers"))
            keywords = {entry.get("renames", {}).get(p, p) for p in entry["signature"] if p not in entry["drop"]}
            getattr(module, entry["keras"])(**{key: 0.5 for key in keywords if key not in ("seed", "value")})


def _emulating_optimizer_classes() -> dict:
    """The classes TFM201 writes into files, defined as a migrated file defines them."""
    import tensorflow as tf
    from transforms.graph.training.tf1_optimizer_classes import CLASSES, class_sources
    namespace = {"tf": tf}
    exec("\n".join(class_sources(list(CLASSES))), namespace)
    return {name: namespace[name] for name in CLASSES}


CLASS_GRAPH = """\
import numpy as np
import tensorflow as tf


class Model:
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 2])
        w = tf.Variable(np.zeros((2, 1), np.float32))
        self.out = tf.matmul(self.x, w)

    def predict(self, sess, data):
        return sess.run(self.out, {self.x: data})


model = Model()
sess = tf.Session()
sess.run(tf.global_variables_initializer())
print(model.predict(sess, [[1.0, 2.0]]))
print(sess.run(model.out, {model.x: [[3.0, 4.0]]}))
"""


def test_a_class_holding_the_graph_keeps_the_run_site_lines_as_written():
    code, _, run_sites = convert(CLASS_GRAPH)
    assert run_sites == ((12, "compute_out"), (19, "compute_out"))
    assert "class Model" not in code and "model" not in code.replace("model_", "")
    assert "def predict(data):" in code


def test_a_tower_built_twice_under_variable_scope_reuse_becomes_one_module():
    source = (Path(__file__).resolve().parent.parent / "legacy_examples" / "variable_scope_reuse.py").read_text()
    code, findings, _ = convert(source)
    assert not [f for f in findings if not f.fixed], findings
    assert code.count("Tower()") == 1 and "reuse=" not in code.split("class Tower")[1]
    assert 'name="w"' in code and 'tf.name_scope("tower")' in code  # still tower/layer1/w
    assert "float(len([tower_module.w1, tower_module.b1, tower_module.w2]))" in code


def _assignments_by_function(code: str) -> dict[str, set[str]]:
    """Step function name -> the `variable.method` assignments its body makes."""
    found = {}
    for node in cst.parse_module(code).body:
        if isinstance(node, cst.FunctionDef):
            calls = [n for n in _walk(node) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                     and n.func.attr.value in ("assign", "assign_add", "assign_sub")]
            found[node.name.value] = {f"{c.func.value.value}.{c.func.attr.value}" for c in calls}
    return found


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def test_an_assignment_runs_only_in_the_functions_of_the_runs_that_need_it():
    code, findings, run_sites = convert((FIXTURES / "assign_not_run_by_other_sites.in.py").read_text())
    assert not [f for f in findings if not f.fixed]
    by_site = dict(run_sites)
    assignments = _assignments_by_function(code)
    assert assignments[by_site[14]] == set()  # y alone: no assignment
    assert assignments[by_site[15]] == {"calls.assign_add"}  # fetched beside y
    assert assignments[by_site[16]] == {"w.assign_sub"}  # `doubled` reads the assignment's value
    assert assignments[by_site[17]] == set()
    assert "tf.zeros([2, 1])" not in code  # reset_w is built but never run


def test_tf_assign_functions_become_the_variable_methods_with_their_keywords():
    source = GRAPH + ("step = tf.Variable(0, trainable=False)\n"
                      "bump = tf.assign_add(step, 2, use_locking=True)\n"
                      "clip = w.assign(tf.clip_by_value(w, -0.01, 0.01))\n"
                      "print(sess.run(bump))\nprint(sess.run(clip))\n")
    code, findings, _ = convert(source)
    assert not [f for f in findings if not f.fixed], findings
    assert "bump = step.assign_add(2, use_locking=True)" in code
    assert "clip = w.assign(tf.clip_by_value(w, -0.01, 0.01))" in code
    assert "tf.assign" not in code


@pytest.mark.parametrize("case, reason", [
    ("refuse_assign_fetched_beside_its_variable", "'w' is fetched in the same session run as its assignment 'shrink'"),
    ("refuse_assign_reads_trained_variable", "'copy_weights' runs in the same session run as train op 'train_op', "
                                             "which updates 'w'"),
    ("refuse_assign_in_comprehension", "assignments in a comprehension are modelled only as one per variable of a list"),
    ("refuse_assign_each_with_condition", "(one loop variable, no condition or other loop)"),
])
def test_assignments_that_cannot_keep_their_tf1_order_are_refused_with_the_reason(case: str, reason: str):
    _, findings, _ = convert((FIXTURES / f"{case}.in.py").read_text())
    assert [f.fixed for f in findings] == [False] and reason in findings[0].message


@pytest.mark.parametrize("statement, reason", [
    ("halved = tf.assign(w, w * 0.5) * 2.0", "tf.assign: assignments are converted only as graph statements"),
    ("both = tf.assign(w, w * 0.5) + w", "tf.assign: assignments are converted only as graph statements"),
    ("loose = tf.assign(w, w * 0.5, validate_shape=False)", "other than (ref, value, use_locking, name)"),
])
def test_assignments_in_other_shapes_are_refused(statement: str, reason: str):
    _, findings, _ = convert(GRAPH + statement + "\nprint(sess.run(" + statement.split(" = ")[0] + "))\n")
    assert [f.fixed for f in findings] == [False] and reason in findings[0].message


def test_a_value_reading_the_variable_beside_its_assignment_is_refused():
    source = GRAPH + ("shrink = tf.assign(w, w * 0.5)\nout = tf.matmul(x, w)\n"
                      "print(sess.run([shrink, out], {x: [[1.0, 2.0]]}))\n")
    _, findings, _ = convert(source)
    assert [f.fixed for f in findings] == [False]
    assert "'out' reads 'w' in the same session run as its assignment 'shrink'" in findings[0].message
