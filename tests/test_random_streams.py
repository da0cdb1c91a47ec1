"""Random streams aligned by creation site (migrate/harness/random_streams.py), and the judge counting
randomness-affected values only when all of them agreed (randomness.randomness_reproduced)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from migrate.harness.compare import compare_site
from migrate.harness.random_streams import RandomStreams, SiteLocator, migrated_to_legacy_lines
from migrate.harness.randomness import randomness_reproduced
from migrate.harness.result_lines import ResultComparison
from migrate.harness.tolerance import Tolerance
from tests.test_harness_units import site

ROOT = Path(__file__).resolve().parent.parent

LEGACY = textwrap.dedent("""\
    import tensorflow.compat.v1 as tf
    x = tf.placeholder(tf.float32, [None, 4])
    noisy = x + tf.random_normal(tf.shape(x), stddev=0.1)
    hidden = tf.nn.dropout(noisy, keep_prob=keep_prob)
    out = tf.nn.dropout(hidden, keep_prob=keep_prob)
    loss = tf.reduce_mean(out)
""")
MIGRATED = textwrap.dedent("""\
    import tensorflow as tf


    @tf.function
    def step(x, keep_prob):
        noisy = x + tf.random.normal(tf.shape(x), stddev=0.1)
        hidden = tf.nn.dropout(noisy, rate=1 - keep_prob)
        out = tf.nn.dropout(hidden, rate=1 - keep_prob)
        loss = tf.reduce_mean(out)
        return loss
""")


def test_moved_and_renamed_lines_map_back_to_their_legacy_line():
    lines = migrated_to_legacy_lines(LEGACY, MIGRATED)
    assert lines[1] == 1  # the line diff (one line replaced by one)
    assert lines[6] == 3  # moved into a function and renamed: the same words, API path words aside
    assert lines[7] == 4 and lines[8] == 5  # keep_prob= rewritten as rate=: the same assignment and call
    assert lines[9] == 6
    assert 4 not in lines and 5 not in lines  # `@tf.function` and `def step(...)` are new


def test_a_cond_reduced_to_its_branch_maps_back_to_the_cond_line():
    legacy = textwrap.dedent("""\
        hidden = dense(x, 24)
        hidden = tf.cond(is_train, lambda: tf.nn.dropout(hidden, keep_prob=0.8), lambda: hidden)
        logits = dense(hidden, 3)
    """)
    migrated = textwrap.dedent("""\
        def train_step(x):
            hidden = hidden_module(x)
            hidden = tf.nn.dropout(hidden, rate=1 - 0.8)
            logits = logits_module(hidden)
    """)
    assert migrated_to_legacy_lines(legacy, migrated) == {3: 2}


def test_a_line_part_of_several_legacy_lines_is_not_mapped():
    legacy = "h = tf.cond(t, lambda: tf.nn.dropout(h, 0.8), lambda: h)\nh = g(tf.nn.dropout(h, 0.5))\n"
    migrated = "@tf.function\ndef step():\n    h = tf.nn.dropout(h, rate=0.2)\n"
    assert migrated_to_legacy_lines(legacy, migrated) == {}


def test_ambiguous_moved_lines_are_not_mapped():
    legacy = "a = f(x)\nb = 1\na = f(x)\n"
    migrated = "def g():\n    a = f(x)\n"
    assert migrated_to_legacy_lines(legacy, migrated) == {}


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def frame_at(filename: str, line: int):
    """A real frame whose code claims `filename`, stopped at `line`."""
    code = compile("\n" * (line - 1) + "import sys; frame = sys._getframe()\n", filename, "exec")
    namespace = {}
    exec(code, namespace)
    return namespace["frame"]


def test_sites_are_legacy_lines_of_the_script_or_of_a_module(tmp_path):
    legacy = tmp_path / "legacy"
    migrated = tmp_path / "migrated"
    legacy_script = write(legacy / "train.py", LEGACY)
    write(legacy / "models" / "net.py", "a = 1\nnoise = tf.random_normal([2])\n")
    migrated_script = write(migrated / "train.py", MIGRATED)
    write(migrated / "models" / "net.py", "import tensorflow as tf\na = 1\nnoise = tf.random.normal([2])\n")

    on_legacy = SiteLocator(legacy_script, str(legacy), ["/nonexistent/"])
    assert on_legacy.site(frame_at(legacy_script, 3)) == "3"
    assert on_legacy.site(frame_at(str(legacy / "models" / "net.py"), 2)) == "2@models/net.py"
    assert on_legacy.site(frame_at(str(tmp_path / "elsewhere.py"), 2)) is None

    on_migrated = SiteLocator(migrated_script, str(migrated), ["/nonexistent/"], legacy_script)
    assert on_migrated.site(frame_at(migrated_script, 6)) == "3"
    assert on_migrated.site(frame_at(str(migrated / "models" / "net.py"), 3)) == "2@models/net.py"
    assert on_migrated.site(frame_at(migrated_script, 4)) == "migrated:4@"


def test_ops_created_in_a_graph_get_their_own_seeds_eager_calls_one_stream():
    streams = RandomStreams(locator=None)
    graph, other_graph = object.__new__(type("Graph", (), {})), object.__new__(type("Graph", (), {}))
    first, second = streams.op_seed("3", graph, None), streams.op_seed("3", graph, None)
    assert first != second  # two dropout layers made by one helper line draw different masks
    assert streams.op_seed("3", other_graph, None) == first  # a function traced once replays the graph's
    assert streams.op_seed("3", None, None) == streams.op_seed("3", None, None)  # eager: one kernel, one stream
    assert streams.op_seed("4", None, None) != streams.op_seed("3", None, None)
    assert streams.op_seed("3", None, 7) != streams.op_seed("3", None, None)  # an explicit seed counts


def test_both_sides_draw_the_same_numbers_from_a_graph_op_and_a_traced_function(tmp_path):
    """The legacy op run 3 times and the migrated function called 3 times give the same draws."""
    legacy_script = write(tmp_path / "legacy" / "prog.py", LEGACY)
    migrated_script = write(tmp_path / "migrated" / "prog.py", MIGRATED)
    harness = ROOT / "migrate" / "harness"
    program = textwrap.dedent(f"""
        import importlib.util, sys
        import numpy as np
        import tensorflow as tf
        spec = importlib.util.spec_from_file_location("random_streams", {str(harness / "random_streams.py")!r})
        random_streams = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(random_streams)
        legacy_side = sys.argv[1] == "legacy"
        script = {legacy_script!r} if legacy_side else {migrated_script!r}
        locator = random_streams.SiteLocator(script, script.rsplit("/", 1)[0], [tf.__file__.rsplit("/", 1)[0] + "/"],
                                             None if legacy_side else {legacy_script!r})
        random_streams.RandomStreams(locator).install(tf.compat.v1)
        x = np.ones([2, 4], np.float32)
        if legacy_side:
            tf.compat.v1.disable_eager_execution()
            namespace = {{"tf": tf.compat.v1, "keep_prob": 0.5}}
            exec(compile(open(script).read(), script, "exec"), namespace)
            with tf.compat.v1.Session() as session:
                draws = [session.run(namespace["loss"], {{namespace["x"]: x}}) for _ in range(3)]
        else:
            namespace = {{}}
            exec(compile(open(script).read(), script, "exec"), namespace)
            draws = [namespace["step"](x, 0.5).numpy() for _ in range(3)]
        print(repr([float(value) for value in draws]))
    """)
    runner = write(tmp_path / "runner.py", program)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1")
    outputs = [subprocess.run([sys.executable, runner, side], capture_output=True, text=True, env=env, timeout=300)
               for side in ("legacy", "migrated")]
    for done in outputs:
        assert done.returncode == 0, done.stderr[-2000:]
    legacy_draws, migrated_draws = (eval(done.stdout.strip().splitlines()[-1]) for done in outputs)
    assert legacy_draws == migrated_draws
    assert len(set(legacy_draws)) == 3  # a new draw each run, not one repeated value


def test_randomness_counts_only_when_every_affected_value_agreed():
    facts = {"random_ops": ["RandomUniform"]}
    legacy = site("line:7", [[np.float32(1)], [np.float32(2)]], facts=facts)
    agreeing = compare_site(legacy, site("fn:f", [[np.float32(1)], [np.float32(2)]]), "m", Tolerance(), None)
    differing = compare_site(legacy, site("fn:f", [[np.float32(1)], [np.float32(5)]]), "m", Tolerance(), None)
    assert agreeing.status == "advisory" and agreeing.fetches[0].random_advisory == 2
    assert randomness_reproduced([agreeing], []) is True
    assert randomness_reproduced([agreeing, differing], []) is False
    assert randomness_reproduced([agreeing], [ResultComparison("k", 1.0, 2.0, "advisory-mismatch")]) is False
    plain = compare_site(site("line:8", [[np.float32(1)]]), site("fn:g", [[np.float32(1)]]), "m", Tolerance(), None)
    assert randomness_reproduced([plain], []) is False  # nothing random to reproduce
    strict = compare_site(legacy, site("fn:f", [[np.float32(1)], [np.float32(2)]]), "m", Tolerance(), None,
                          reproduced=True)
    assert strict.status == "match" and strict.fetches[0].compared == 2


def test_values_read_from_racing_variables_stay_advisory_when_randomness_is_reproduced():
    legacy = site("line:7", [[np.float32(1)], [np.float32(2)]], facts={"random_ops": ["RandomUniform"]})
    migrated = site("fn:f", [[np.float32(1)], [np.float32(3)]])
    compared = compare_site(legacy, migrated, "m", Tolerance(), None, unsettled={0: (1, "w")}, reproduced=True)
    assert compared.status == "match" and compared.fetches[0].compared == 1
    assert compared.fetches[0].advisory_failures == 1 and compared.fetches[0].random_failures == 0
