"""TFM301 (fuse_step_loops) beyond its fixtures: the fused programs compute what the loops did, and
the rewrite keeps its promises on the migrated legacy examples."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migrate.runner import Options, migrate_code, migrate_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "fuse_step_loops"


def run_program(source: str, tmp_path: Path, name: str) -> str:
    script = tmp_path / name
    script.write_text(source)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False,
                          env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "-1"})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("case", ["basic", "batches", "in_function_dict", "schedule", "nested_epochs",
                                  "evaluation_mid_loop", "evaluation_outputs", "nested_helper", "method_loop",
                                  "defined_later", "invariant_binding", "invariant_binding_evaluation",
                                  "evaluation_reads_layers", "evaluation_layer_in_chunks"])
def test_fused_fixture_prints_what_the_loop_printed(case: str, tmp_path: Path) -> None:
    """Same per-step values, same order, same Python work: the printed output is identical."""
    before = run_program((FIXTURES / f"{case}.in.py").read_text(), tmp_path, "loop.py")
    after = run_program((FIXTURES / f"{case}.out.py").read_text(), tmp_path, "fused.py")
    assert "_loop" in (FIXTURES / f"{case}.out.py").read_text()
    assert before.strip() and after == before


def test_fusion_is_part_of_the_default_migration() -> None:
    result = migrate_path(str(ROOT / "legacy_examples" / "core_batch_norm.py"))
    assert result.status == "changed"
    assert "def train_step_loop(first, stop" in result.new_source
    assert any(f.code == "TFM301" and f.fixed for f in result.findings)


def test_critic_loop_whose_body_rebinds_its_throwaway_variable_is_fused() -> None:
    """`for _ in range(n_critic): X_mb, _ = mnist.train.next_batch(...)`: nothing reads `_`, so the
    fused loop numbers its steps by a name of its own and `_` still gets the labels, as before."""
    result = migrate_path(str(ROOT / "legacy_examples" / "mnist_wgan_gp_critic_loop.py"))
    assert result.level == "tf2" and "def D_solver_step_loop(first, stop" in result.new_source
    assert not [f for f in result.findings if f.code == "TFM301" and not f.fixed]
    assert "        X_mb, _ = mnist.train.next_batch(mb_size)\n" in result.new_source
    assert "\n    for _ in range(n_critic):\n" not in result.new_source


def test_batches_reshaped_after_their_draw_are_drawn_ahead_with_it() -> None:
    """`batch_x = batch_x.reshape((batch_size, timesteps, num_input))` after `next_batch`: the reshape
    runs with the draw, step by step, and the reshaped batches are what the steps are fed."""
    result = migrate_path(str(ROOT / "legacy_examples" / "mnist_rnn_reshaped_batches.py"))
    assert result.level == "tf2" and "def train_step_loop(first, stop" in result.new_source
    assert not [f for f in result.findings if f.code == "TFM301" and not f.fixed]
    draw = ("    batch_x = batch_x.reshape((batch_size, timesteps, num_input))\n"
            "    batch_x_values.append(batch_x)\n")
    assert draw in result.new_source


def test_ignoring_tfm301_keeps_the_python_loop() -> None:
    result = migrate_path(str(ROOT / "legacy_examples" / "core_batch_norm.py"), Options(ignore=("TFM301",)))
    assert "_loop(" not in result.new_source


def test_second_step_loop_of_the_same_function_is_refused_not_clobbered() -> None:
    source = (FIXTURES / "basic.in.py").read_text()
    twice = source + "for again in range(3):\n    train_step(x_data, y_data)\n"
    outcome = migrate_code(twice, Options(select=("TFM301",)))
    assert outcome.module.code.count("def train_step_loop(") == 1
    refused = [f for f in outcome.findings if not f.fixed]
    assert refused and "already used" in refused[0].message


def test_loops_that_could_change_what_the_steps_are_fed_are_refused_with_the_reason() -> None:
    source = (FIXTURES / "refused_fed_changes.in.py").read_text()
    outcome = migrate_code(source, Options(select=("TFM301",)))
    assert outcome.module.code == source
    reasons = [f.message for f in outcome.findings]
    assert len(reasons) == 4 and not any(f.fixed for f in outcome.findings)
    assert "`x_data`, which the step is fed, and might change it" in reasons[0]
    assert "`x_data`, which the step is fed, and might change it" in reasons[1]
    assert "`left` would be bound even if the loop ran no step" in reasons[2]
    assert "reads `left`, which the loop body changes" in reasons[3]


def test_invariant_binding_in_a_loop_of_unknown_length_is_hoisted_when_nothing_else_reads_it() -> None:
    source = (FIXTURES / "refused_fed_changes.in.py").read_text()
    source = source[:source.index("# the Python work")] + "for i in range(steps):\n    left, right = pairs\n" \
        "    train_step(left, right)\n"
    outcome = migrate_code(source, Options(select=("TFM301",)))
    assert "left, right = pairs\ntrain_step_outputs = train_step_loop(0, steps, left, right)\n" in outcome.module.code
    assert "for i in range(steps)" not in outcome.module.code
