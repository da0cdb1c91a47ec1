"""TFM302 (compile_with_xla): `jit_compile=True` on step functions only when `--jit on` asks for it."""
from __future__ import annotations

import libcst as cst
from click.testing import CliRunner

from migrate.cli import cli
from transforms import transform_by_module_name
from transforms.base import FINDINGS_KEY, TransformContext

SOURCE = '''import tensorflow as tf

w = tf.Variable(1.0)


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def train_step(x):
    w.assign_add(x)
    return w.read_value()


@tf.function
def helper(x):
    return x


@tf.function(input_signature=[tf.TensorSpec([], tf.float32)], jit_compile=False)
def chosen(x):
    return x
'''


def run(jit: str, source: str = SOURCE) -> tuple[str, list]:
    context = TransformContext(scratch={"settings": {"jit": jit}})
    module = transform_by_module_name("compile_with_xla")(context).transform_module(cst.parse_module(source))
    return module.code, context.scratch[FINDINGS_KEY]


def test_on_compiles_step_functions_only() -> None:
    code, findings = run("on")
    assert "@tf.function(input_signature=[tf.TensorSpec([], tf.float32)], jit_compile=True)\ndef train_step" in code
    assert "@tf.function\ndef helper" in code  # no signature: shapes unknown, left alone
    assert "jit_compile=False)\ndef chosen" in code  # the author's choice stands
    assert [f.line for f in findings] == [6]
    assert run("on", code)[0] == code


def test_off_and_auto_change_nothing() -> None:
    assert run("off")[0] == SOURCE
    assert run("auto")[0] == SOURCE


def test_cli_jit_on_selects_the_unsafe_transform(tmp_path) -> None:
    program = tmp_path / "prog.py"
    program.write_text("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None])\n"
                       "with tf.Session() as sess:\n    print(sess.run(x * 2, feed_dict={x: [1.0]}))\n")
    plain = CliRunner().invoke(cli, ["diff", str(program)])
    jitted = CliRunner().invoke(cli, ["diff", "--jit", "on", str(program)])
    assert "jit_compile=True" not in plain.output
    assert "jit_compile=True" in jitted.output
