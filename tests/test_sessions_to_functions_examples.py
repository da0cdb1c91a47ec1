"""The core legacy examples (legacy_examples/core_*.py) through the whole pipeline, end to end.

Each is migrated with `migrate_path`; the result must be TF2 code without `tf.compat.v1`, `Session`,
`placeholder` or `feed_dict` (in code: comments and strings may still tell the story) and must run on
plain TF 2.21 without retracing warnings. The examples whose initial weights are seeded NumPy arrays
must print the same RESULT values as the legacy program run by migrate.legacy_runtime (within 1e-5);
the others start from random initializers, so for them only running is checked here (equality after
weight alignment is the harness's job).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tokenize
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from migrate.runner import migrate_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "legacy_examples"
# The first two cover the most ground (Session + GradientDescent; tf.layers + Adam); the others are
# slower to add up and run with -m slow.
SEEDED = ["core_session_mlp", "core_tf_layers_cnn", "core_class_graph_methods", "core_saver_resume", "data_one_shot_iterator",
          "data_epochs_layers", "queue_tfrecords", "gan_shared_discriminator", "gan_python_batches",
          "gan_layers_clipped_gradients", "gan_two_domains_shared_adam", "rl_policy_gradient_buffer",
          "mixed_flags_data_summaries_saver", "core_layer_helper_activation",
          "core_class_kept_session", "core_layer_helper_input_shapes", "gan_scope_reuse_variables",
          "mnist_conv_tutorial_schedule", "gan_ops_linear_layers", "tutorial_fully_connected_feed",
          "text_cnn_default_session",
          pytest.param("core_interactive_momentum", marks=pytest.mark.slow),
          pytest.param("core_scoped_adam", marks=pytest.mark.slow),
          pytest.param("core_multi_fetch", marks=pytest.mark.slow),
          pytest.param("core_batch_norm", marks=pytest.mark.slow),
          pytest.param("core_metrics_eval", marks=pytest.mark.slow),
          pytest.param("core_contrib_layers", marks=pytest.mark.slow),
          pytest.param("core_plain_import", marks=pytest.mark.slow),
          pytest.param("core_builder_dict", marks=pytest.mark.slow),
          pytest.param("core_class_model", marks=pytest.mark.slow),
          pytest.param("core_rmsprop_decay", marks=pytest.mark.slow),
          pytest.param("core_target_network_assign", marks=pytest.mark.slow),
          pytest.param("saver_predict_session", marks=pytest.mark.slow)]
RANDOM_INIT = ["core_graph_helpers", "core_layers_dropout", "tutorial_cnn_dicts_dropout"]
FORBIDDEN = ("compat", "Session", "InteractiveSession", "placeholder", "placeholder_with_default", "feed_dict")


def code_names(source: str) -> set[str]:
    """The identifiers the code uses (not the words in its comments or strings)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.string for token in tokens if token.type == tokenize.NAME}


def migrated(name: str, tmp_path: Path) -> Path:
    result = migrate_path(str(EXAMPLES / f"{name}.py"))
    assert result.status == "changed", result.reason
    assert result.level == "tf2"
    assert not [f for f in result.findings if f.code == "TFM201" and not f.fixed], result.findings
    assert result.run_sites, "no run site recorded for the harness"
    assert not code_names(result.new_source) & set(FORBIDDEN)
    path = tmp_path / f"{name}.py"
    path.write_text(result.new_source, encoding="utf-8")
    return path


def run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
    env["PYTHONPATH"] = str(ROOT)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


def results(process: subprocess.CompletedProcess) -> dict[str, list[float]]:
    assert process.returncode == 0, process.stderr[-3000:]
    found = {}
    for line in process.stdout.splitlines():
        if line.startswith("RESULT "):
            _, key, value = line.split(" ", 2)
            parsed = json.loads(value)
            found[key] = [float(v) for v in (parsed if isinstance(parsed, list) else [parsed])]
    assert found, process.stdout
    return found


def close(legacy: list[float], new: list[float]) -> bool:
    return len(legacy) == len(new) and all(abs(a - b) <= 1e-5 * max(1.0, abs(a)) for a, b in zip(legacy, new))


@pytest.mark.parametrize("name", SEEDED)
def test_seeded_example_gives_the_legacy_results(name: str, tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        legacy = pool.submit(run, ["-m", "migrate.legacy_runtime", str(EXAMPLES / f"{name}.py")], tmp_path)
        new_process = run([str(migrated(name, tmp_path))], tmp_path)  # while the legacy side runs
        legacy_results = results(legacy.result())
    new_results = results(new_process)
    assert "retracing" not in new_process.stderr.lower()
    assert legacy_results.keys() == new_results.keys()
    differing = {key: (legacy_results[key], new_results[key]) for key in legacy_results
                 if not close(legacy_results[key], new_results[key])}
    assert not differing


def test_wasserstein_example_clips_the_critic_before_each_of_its_steps(tmp_path: Path) -> None:
    """gan_wasserstein_clipping.py fetches the critic's clipping with its train op: TF1 ran them in no
    fixed order (the legacy program's losses vary from run to run). The migrated step clips first, then
    computes the loss and applies the gradients: the legacy program made deterministic by clipping in
    a run of its own before each step gives the same numbers."""
    source = (EXAMPLES / "gan_wasserstein_clipping.py").read_text()
    racing = "        _, D_loss_curr, _ = sess.run(\n            [D_solver, D_loss, clip_D],\n"
    assert racing in source
    ordered = tmp_path / "clip_first.py"
    ordered.write_text(source.replace(racing, "        sess.run(clip_D)\n        _, D_loss_curr = sess.run(\n"
                                              "            [D_solver, D_loss],\n"))
    with ThreadPoolExecutor(max_workers=1) as pool:
        legacy = pool.submit(run, ["-m", "migrate.legacy_runtime", str(ordered)], tmp_path)
        new_process = run([str(migrated("gan_wasserstein_clipping", tmp_path))], tmp_path)
        legacy_results = results(legacy.result())
    new_results = results(new_process)
    assert legacy_results.keys() == new_results.keys() == {"d_losses", "g_losses", "critic_max_weight", "sample_mean"}
    assert all(close(legacy_results[key], new_results[key]) for key in legacy_results), (legacy_results, new_results)


@pytest.mark.slow
@pytest.mark.parametrize("name", RANDOM_INIT)
def test_random_init_example_runs_on_plain_tf2(name: str, tmp_path: Path) -> None:
    process = run([str(migrated(name, tmp_path))], tmp_path)
    assert results(process)
    assert "retracing" not in process.stderr.lower()


@pytest.mark.slow
def test_variable_scope_reuse_example_runs_with_one_shared_tower(tmp_path: Path) -> None:
    """TF1 shared the tower's variables through reuse=True; TF2 has one module called twice (equality
    with the legacy numbers needs the harness's weight alignment: its initializers are TF1's)."""
    path = migrated("variable_scope_reuse", tmp_path)
    assert path.read_text().count("Tower()") == 1
    process = run([str(path)], tmp_path)
    assert results(process)["num_trainable_variables"] == [3.0]
    assert "retracing" not in process.stderr.lower()
