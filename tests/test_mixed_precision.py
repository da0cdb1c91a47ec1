"""TFM303 (use_mixed_precision) and the harness's mixed-precision tolerances.

Fixture pairs in tests/fixtures/use_mixed_precision cover the rewrite itself; here: which layers
keep float32 (the flow analysis), the CLI flag, and migrated examples judged by the harness."""
from __future__ import annotations

import tempfile
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from migrate.cli import cli
from migrate.harness.programs import Program, prepare
from migrate.harness.tolerance import Tolerance
from migrate.harness.tune import VARIANTS
from migrate.harness.verify import Settings, run_legacy, verify_migrated
from migrate.runner import Options
from transforms import transform_by_module_name
from transforms.base import TransformContext

EXAMPLES = Path(__file__).resolve().parent.parent / "legacy_examples"

LAYERS = '''import tensorflow as tf

conv = tf.keras.layers.Conv2D(4, 3)
pool = tf.keras.layers.MaxPooling2D(2)
dense = tf.keras.layers.Dense(8)
head = tf.keras.layers.Dense(2)
'''


def float32_layers(body: str) -> set[str]:
    context = TransformContext(scratch={"settings": {"mixed_precision": "on"}})
    module = transform_by_module_name("use_mixed_precision")(context).transform_module(
        cst.parse_module(LAYERS + body))
    return {line.split(" = ")[0] for line in module.code.splitlines() if 'dtype="float32"' in line}


def test_layers_feeding_only_layers_stay_mixed() -> None:
    body = "def model(x):\n    net = conv(x)\n    net = pool(net)\n    net = dense(tf.reshape(net, [-1, 4]))\n" \
           "    return head(net)\n"
    assert float32_layers(body) == {"pool", "head"}  # pool's output meets tf.reshape; head's is returned


def test_a_later_rebinding_does_not_hide_an_earlier_read() -> None:
    body = "def model(x):\n    net = conv(x)\n    total = tf.reduce_sum(net)\n    net = dense(net)\n" \
           "    return head(net), total\n"
    assert float32_layers(body) == {"conv", "head"}


def test_values_going_round_a_loop_are_followed() -> None:
    body = "def model(x):\n    net = x\n    for _ in range(2):\n        net = tf.nn.relu(net)\n" \
           "        net = dense(net)\n    return head(net)\n"
    assert float32_layers(body) == {"dense", "head"}  # dense's output reaches relu on the next iteration


def test_tolerances_widen_only_for_mixed_policies() -> None:
    base = Tolerance()
    assert base.for_policy("float32") is base and base.for_policy(None) is base
    half = base.for_policy("mixed_float16")
    assert half.atol == 1e-2 and half.at_step(0) == (1e-2, 1e-2) and half.rtol >= base.rtol
    assert base.for_policy("mixed_bfloat16").atol > half.atol  # bfloat16 keeps fewer mantissa bits


def test_cli_flag_selects_the_unsafe_transform(tmp_path: Path) -> None:
    source = (Path(__file__).parent / "fixtures/use_mixed_precision/auto_layers.in.py").read_text()
    (tmp_path / "train.py").write_text(source)
    plain = CliRunner().invoke(cli, ["diff", "--no-color", str(tmp_path / "train.py")])
    mixed = CliRunner().invoke(cli, ["diff", "--no-color", "--mixed-precision", "auto", str(tmp_path / "train.py")])
    assert "set_global_policy" not in plain.output
    assert "+tf.keras.mixed_precision.set_global_policy(mixed_precision_policy())" in mixed.output
    assert (tmp_path / "train.py").read_text() == source  # diff writes nothing


def _verify(name: str, options: Options) -> dict:
    program, work = Program(name, str(EXAMPLES / name)), tempfile.mkdtemp(prefix="mixed-")
    prepared = prepare(program, work, options)
    settings = Settings(device="cpu", timeout_s=300)
    return verify_migrated(program, prepared, run_legacy(program, settings, work), settings, work)


@pytest.mark.parametrize("name", ["core_tf_layers_cnn.py"])
def test_forced_mixed_float16_is_judged_with_widened_tolerances(name: str) -> None:
    report = _verify(name, VARIANTS["mixed"])
    assert report["precision_policy"] == "mixed_float16"
    assert report["verdict"] == "equivalent", report["reason"]
    assert any("tolerances widened" in note for note in report["notes"])
    errors = [fetch["max_abs"] for site in report["sites"] for fetch in site["fetches"] if fetch["compared"]]
    assert errors and max(errors) > 1e-5  # float16 really ran: float32 would agree far more closely


def test_auto_stays_float32_on_cpu() -> None:
    report = _verify("core_tf_layers_cnn.py", Options(unsafe=True, settings=(("mixed_precision", "auto"),)))
    assert report["precision_policy"] == "float32"
    assert report["verdict"] == "equivalent", report["reason"]
    assert not any("tolerances widened" in note for note in report["notes"])
