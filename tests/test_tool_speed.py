"""Tool speed and scale: the result cache, the per-file budget, the progress line, the pool pipeline."""
from __future__ import annotations

import io
import threading
from pathlib import Path

import libcst as cst
import pytest

from migrate import pipeline, runner
from migrate.budget import BudgetExceeded, checkpoint, enforced
from migrate.cache import ResultCache, default_cache_dir
from migrate.findings import FileResult
from migrate.options import Budget, Options
from migrate.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
TF1 = "import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 3])\ny = tf.random_normal([3])\n"


def rename_only(lines: int) -> str:
    """A synthetic rename-only module of about `lines` lines."""
    body = [f"x{i} = tf.random_normal([3], name='x{i}')\ny{i} = tf.log(tf.abs(x{i}) + 1.0)" for i in range(lines // 2)]
    return "import tensorflow as tf\n" + "\n".join(body) + "\n"


def recorded_passes(monkeypatch) -> list[str]:
    """The codes of the transforms whose transformer pass (TFTransform.transform_wrapper) runs from now."""
    from transforms.base import TFTransform

    passes: list[str] = []
    original = TFTransform.transform_wrapper

    def recording(self, wrapper):
        passes.append(self.CODE)
        return original(self, wrapper)

    monkeypatch.setattr(TFTransform, "transform_wrapper", recording)
    return passes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text(TF1)
    (tmp_path / "b.py").write_text("print('hello')\n")
    return tmp_path


# -- cache ------------------------------------------------------------------------------------------

def test_cache_hit_returns_the_same_result_without_migrating(project: Path, tmp_path: Path, monkeypatch) -> None:
    cache = ResultCache(tmp_path / "cache")
    paths = [str(project / "a.py"), str(project / "b.py")]
    first = list(pipeline.migrate_files(paths, Options(), cache=cache))

    def no_migration(*_args, **_kwargs):
        raise AssertionError("a cache hit must not migrate")

    monkeypatch.setattr(runner, "migrate_bytes", no_migration)
    second = list(pipeline.migrate_files(paths, Options(), cache=cache))
    assert second == first
    assert first[0].status == "changed" and first[0].new_bytes


def test_cache_key_depends_on_bytes_options_and_kind(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    key = cache.key("a.py", b"x", Options())
    assert key == cache.key("elsewhere/b.py", b"x", Options())  # content-addressed
    assert key != cache.key("a.py", b"y", Options())
    assert key != cache.key("a.py", b"x", Options(select=("TFM101",)))
    assert key != cache.key("a.py", b"x", Options(settings=(("jit", "on"),)))
    assert key != cache.key("a.ipynb", b"x", Options())


def test_cache_hit_takes_the_path_it_is_asked_for(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    cache.put("k" * 64, FileResult("old.py", "unchanged"))
    assert cache.get("k" * 64, "new.py") == FileResult("new.py", "unchanged")


def test_cache_keeps_no_result_that_depends_on_more_than_the_bytes(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    for number, reason in enumerate(["internal error: boom; file left untouched",
                                     "took over 1 s (the per-file time budget, --file-timeout); left untouched"]):
        key = f"{number}" * 64
        cache.put(key, FileResult("a.py", "failed", reason=reason))
        assert cache.get(key, "a.py") is None


def test_cache_treats_a_damaged_entry_as_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    key = "ab" * 32
    cache.put(key, FileResult("a.py", "unchanged"))
    cache._entry(key).write_bytes(b"not a pickle")
    assert cache.get(key, "a.py") is None


def test_cache_dir_from_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TF_MIGRATE_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.setenv("TF_MIGRATE_CACHE_DIR", "off")
    assert default_cache_dir() is None
    monkeypatch.delenv("TF_MIGRATE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "tf-migrate"


def test_cli_rerun_reads_the_cache_and_no_cache_bypasses_it(project: Path, tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from migrate.cli import cli

    cache_dir = tmp_path / "cache"
    monkeypatch.chdir(project)
    first = CliRunner().invoke(cli, ["diff", "a.py", "b.py", "--cache-dir", str(cache_dir)])
    assert first.exit_code == 1 and list(cache_dir.rglob("*.pickle"))

    def no_migration(*_args, **_kwargs):
        raise AssertionError("a cache hit must not migrate")

    monkeypatch.setattr(runner, "migrate_bytes", no_migration)
    second = CliRunner().invoke(cli, ["diff", "a.py", "b.py", "--cache-dir", str(cache_dir)])
    assert second.exit_code == 1 and second.output == first.output
    bypassed = CliRunner().invoke(cli, ["diff", "a.py", "--cache-dir", str(cache_dir), "--no-cache"])
    assert isinstance(bypassed.exception, AssertionError)  # it migrated: the patched runner raised


# -- budget -----------------------------------------------------------------------------------------

def test_file_over_the_time_budget_is_skipped_with_the_reason() -> None:
    result = runner.migrate_bytes("big.py", rename_only(3000).encode(), Options(), Budget(seconds=0.3))
    assert result.status == "skipped", result.reason
    assert "per-file time budget" in result.reason and "--file-timeout" in result.reason


def test_file_over_the_memory_budget_is_skipped_with_the_reason() -> None:
    result = runner.migrate_bytes("big.py", rename_only(3000).encode(), Options(), Budget(None, memory_mb=5))
    assert result.status == "skipped"
    assert "per-file memory budget" in result.reason


def test_file_within_budget_migrates_as_without_one() -> None:
    source = (ROOT / "legacy_examples" / "batch_loop.py").read_bytes()
    assert runner.migrate_bytes("x.py", source, Options(), Budget()) == runner.migrate_bytes("x.py", source)


def test_budget_off_the_main_thread_stops_between_transforms() -> None:
    results = []
    worker = threading.Thread(target=lambda: results.append(
        runner.migrate_bytes("big.py", rename_only(3000).encode(), Options(), Budget(seconds=0.3))))
    worker.start()
    worker.join()
    assert results[0].status == "skipped" and "time budget" in results[0].reason


def test_checkpoint_outside_a_budget_does_nothing() -> None:
    checkpoint()
    with enforced(None) as watchdog:
        assert watchdog is None
        checkpoint()


def test_budget_exceeded_is_not_an_exception_transforms_could_swallow() -> None:
    assert not issubclass(BudgetExceeded, Exception)


def test_file_over_budget_whose_interrupt_was_lost_is_still_skipped(monkeypatch) -> None:
    """An interrupt landing in a weakref callback run by the garbage collector is dropped by Python:
    whatever the file's migration returns after that, the file was over budget and is skipped."""
    import time

    from migrate import budget

    monkeypatch.setattr(budget, "_make_handler", lambda watchdog: lambda signum, frame: None)  # every interrupt lost

    def overrunning(path, data, options):
        time.sleep(0.5)
        return FileResult(path, "failed", reason="what an interrupted step left")

    monkeypatch.setattr(runner, "_migrate_bytes", overrunning)
    result = runner.migrate_bytes("x.py", b"import tensorflow as tf\n", Options(), Budget(seconds=0.2))
    assert result.status == "skipped" and "per-file time budget" in result.reason


def test_pool_run_skips_the_runaway_file_and_migrates_the_others(project: Path) -> None:
    (project / "huge.py").write_text(rename_only(3000))
    paths = [str(project / name) for name in ("a.py", "b.py", "huge.py")]
    seen = []
    results = list(pipeline.migrate_files(paths, Options(), jobs=2, budget=Budget(seconds=3),
                                          on_result=seen.append))
    assert [r.path for r in results] == paths
    assert [r.status for r in results] == ["changed", "skipped", "skipped"]
    assert "time budget" in results[2].reason
    assert sorted(r.path for r in seen) == sorted(paths)


def test_pool_results_match_in_process_results(project: Path) -> None:
    (project / "c.py").write_text((ROOT / "legacy_examples" / "batch_loop.py").read_text())
    (project / "link.py").symlink_to(project / "a.py")
    paths = sorted(str(p) for p in project.glob("*.py"))
    assert list(pipeline.migrate_files(paths, Options(), jobs=2)) == list(pipeline.migrate_files(paths, Options()))


# -- progress ---------------------------------------------------------------------------------------

def test_progress_draws_done_total_elapsed_and_file_then_erases_itself() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream, enabled=True)
    assert list(progress.track([FileResult("a.py", "unchanged"), FileResult("b.py", "unchanged")]))
    text = stream.getvalue()
    assert "[2/2] 0:00  b.py" in text and text.endswith("\r\x1b[K")


def test_progress_is_off_when_stderr_is_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(1, stream)
    progress.advance("a.py")
    progress.close()
    assert stream.getvalue() == ""


def test_progress_shortens_long_paths_from_the_left() -> None:
    progress = Progress(10, io.StringIO(), enabled=True)
    line = progress.line("x/" * 200 + "model.py", 75)
    assert line.startswith("[ 0/10] 1:15  ...") and line.endswith("model.py") and len(line) < 200


# -- on-demand metadata -----------------------------------------------------------------------------

def _all_nodes(module):
    import libcst as cst

    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            found.append(node)
            return True

    module.visit(Collect())
    return found


SOURCES = sorted((ROOT / "tests" / "fixtures").glob("*/*.py")) + sorted((ROOT / "legacy_examples").glob("*.py"))


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_on_demand_metadata_equals_libcsts_for_every_node(path: Path) -> None:
    """Qualified names, positions and parents looked up node by node are exactly libcst's providers' answers."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider

    from transforms.common.lazy_metadata import LazyMetadataWrapper

    module = cst.parse_module(path.read_text(encoding="utf-8"))
    reference = MetadataWrapper(module, unsafe_skip_copy=True)
    expected_names = reference.resolve(QualifiedNameProvider)
    expected_positions = reference.resolve(PositionProvider)
    expected_parents = reference.resolve(ParentNodeProvider)
    providers = [QualifiedNameProvider, PositionProvider, ParentNodeProvider]
    lazy = LazyMetadataWrapper(module, unsafe_skip_copy=True).resolve_many(providers)
    assert len(lazy[ParentNodeProvider]) == len(expected_parents)
    for node in _all_nodes(module):
        names = expected_names.get(node, set())
        names = names() if callable(names) else names
        assert lazy[QualifiedNameProvider].get(node, set()) == names
        assert lazy[PositionProvider].get(node) == expected_positions.get(node)
        assert lazy[ParentNodeProvider].get(node) is expected_parents.get(node)


def test_on_demand_metadata_resolves_nothing_until_asked() -> None:
    import libcst as cst
    from libcst.metadata import PositionProvider, QualifiedNameProvider, ScopeProvider

    from transforms.common.lazy_metadata import LazyMetadataWrapper

    wrapper = LazyMetadataWrapper(cst.parse_module(TF1), unsafe_skip_copy=True)
    wrapper.resolve_many([QualifiedNameProvider, PositionProvider])
    assert ScopeProvider not in wrapper._metadata
    assert wrapper._metadata[PositionProvider]._mapping is None


# -- visitor dispatch -------------------------------------------------------------------------------

def test_fast_dispatch_calls_the_hooks_libcst_calls_in_the_same_order() -> None:
    import libcst as cst

    from transforms.common.dispatch import FastDispatch

    class Recorder:
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []

        def visit_Call(self, node) -> bool:
            self.calls.append("visit_Call")
            return node.func.value != "skip" if isinstance(node.func, cst.Name) else True

        def leave_Call(self, original_node, updated_node=None):
            self.calls.append("leave_Call")
            return updated_node

        def visit_Call_args(self, node) -> None:
            self.calls.append("visit_Call_args")

        def leave_Attribute_attr(self, node) -> None:
            self.calls.append("leave_Attribute_attr")

        def leave_Name(self, original_node, updated_node=None):
            self.calls.append("leave_Name")
            return updated_node.with_changes(value=updated_node.value.upper()) if updated_node else None

    class SlowTransformer(Recorder, cst.CSTTransformer):
        pass

    class FastTransformer(Recorder, FastDispatch, cst.CSTTransformer):
        pass

    class SlowVisitor(Recorder, cst.CSTVisitor):
        pass

    class FastVisitor(Recorder, FastDispatch, cst.CSTVisitor):
        pass

    module = cst.parse_module("a.b(c, skip(d))\nx = f(g.h)\n")
    for slow, fast in ((SlowTransformer(), FastTransformer()), (SlowVisitor(), FastVisitor())):
        assert module.visit(fast).code == module.visit(slow).code
        assert fast.calls == slow.calls and "leave_Attribute_attr" in slow.calls


def test_file_whose_parse_alone_is_over_the_memory_budget_is_skipped_before_parsing(monkeypatch) -> None:
    import libcst as cst

    def no_parse(*_args, **_kwargs):
        raise AssertionError("must not parse")

    monkeypatch.setattr(cst, "parse_module", no_parse)
    source = rename_only(20_000).encode()  # ~0.7 MB: about 900 MB to parse
    result = runner.migrate_bytes("huge.py", source, Options(), Budget(None, memory_mb=512))
    assert result.status == "skipped"
    assert "parsing its" in result.reason and "--file-memory" in result.reason


# -- cheaper checks that change no output -----------------------------------------------------------

def _libcst_visit(node, visitor):
    """libcst's own visit all the way down (install() makes every child's `visit` the read-only walk)."""
    from libcst._nodes.base import CSTNode

    from transforms.common.read_only_visit import LIBCST_VISIT

    installed, CSTNode.visit = CSTNode.visit, LIBCST_VISIT
    try:
        return node.visit(visitor)
    finally:
        CSTNode.visit = installed


def test_scan_calls_the_hooks_libcsts_visit_calls_in_the_same_order() -> None:
    import libcst as cst

    from transforms.common.syntax import scan

    class Recorder(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, int]] = []

        def visit_Call(self, node) -> bool:
            self.calls.append(("visit_Call", id(node)))
            return not (isinstance(node.func, cst.Name) and node.func.value == "skip")

        def leave_Call(self, node) -> None:
            self.calls.append(("leave_Call", id(node)))

        def visit_Name(self, node) -> None:
            self.calls.append((node.value, id(node)))

    class Subclass(Recorder):  # hooks found on the base class; one more of its own
        def visit_Attribute(self, node) -> bool:
            self.calls.append(("visit_Attribute", id(node)))
            return False

    class OwnDispatch(Recorder):  # an on_visit of its own: asked for every node
        def on_visit(self, node) -> bool:
            self.calls.append((type(node).__name__, id(node)))
            return super().on_visit(node)

    module = cst.parse_module("a.b(c, skip(d))\nx = f(g.h)\nclass K:\n    def m(self):\n        return [y for y in z]\n")
    for visitor_class in (Recorder, Subclass, OwnDispatch):
        visited, scanned = visitor_class(), visitor_class()
        _libcst_visit(module, visited)
        scan(module, scanned)
        assert scanned.calls == visited.calls
    assert ("d", id(module)) not in scanned.calls


def test_code_identifiers_ignore_strings_and_comments() -> None:
    from transforms.common.syntax import code_identifiers

    names = code_identifiers('"""A Session."""\nimport tensorflow.compat.v1 as tf  # a Session\nx = tf.app.run\n')
    assert {"tensorflow", "compat", "v1", "tf", "x", "app", "run"} <= names and "Session" not in names
    assert code_identifiers("def (:\n") is None


def test_code_names_tell_attributes_and_imports_apart() -> None:
    from transforms.common.syntax import code_names

    names = code_names("import tensorflow.compat.v1 as tf\nfrom numpy import float32\nfrom . import local\n"
                       "x = float(tf.float32)\n")
    assert names.attributes == {"float32"} and "float" in names.identifiers
    assert names.imports == {"tensorflow.compat.v1", "numpy.float32"}
    assert code_names("def (:\n") is None


def test_stricter_pre_checks_skip_code_the_transforms_cannot_touch() -> None:
    from transforms import transform_by_module_name

    compat = transform_by_module_name("normalize_compat_imports")
    assert compat.applies_to("import tensorflow.compat.v1 as tf\n")
    assert compat.applies_to("from tensorflow.compat import v1 as tf\n")
    assert not compat.applies_to("import tensorflow as tf\nx = tf.compat.v1.placeholder(tf.float32)\n")
    numpy_aliases = transform_by_module_name("replace_removed_numpy_aliases")
    assert numpy_aliases.applies_to("import numpy as np\nx = np.float(3)\n")
    assert not numpy_aliases.applies_to("import numpy as np\nx = float(np.float32(3))\n")
    slim_batch_norm = transform_by_module_name("emulate_slim_batch_norm")
    assert slim_batch_norm.applies_to("import tensorflow as tf\nslim = tf.contrib.slim\ny = slim.batch_norm(x)\n")
    assert not slim_batch_norm.applies_to("import tensorflow as tf\ny = tf.layers.batch_normalization(x)\n")
    steps = transform_by_module_name("fuse_step_loops")
    assert steps.applies_to("import tensorflow as tf\n@tf.function\ndef step(): pass\n")
    assert not steps.applies_to("import tensorflow as tf\n# a function\nrelu = tf.nn.relu\n")


EPOCH_HELPER = """import tensorflow as tf
@tf.function
def step(x): return x
def train_epoch(x):
    for i in range(3):
        step(x)
for epoch in range(2):
    train_epoch(1)
"""


def test_epoch_fusions_look_first_for_the_loops_they_rewrite() -> None:
    from transforms import transform_by_module_name

    helpers = transform_by_module_name("inline_epoch_helpers")
    assert helpers.applies_to(EPOCH_HELPER)
    assert helpers.applies_to(EPOCH_HELPER.replace("    train_epoch(1)", "    loss = 2 * train_epoch(1)"))
    assert not helpers.applies_to(EPOCH_HELPER.replace("for i in range(3):", "if True:"))  # no loop of its own
    assert not helpers.applies_to(EPOCH_HELPER.replace("    train_epoch(1)", "    if epoch:\n        train_epoch(1)"))
    assert not helpers.applies_to("import tensorflow as tf\n@tf.function\ndef step(): pass\n")
    assert helpers.applies_to(EPOCH_HELPER + "def (:\n")  # CPython cannot tell: it runs
    epochs = transform_by_module_name("fuse_epoch_loops")
    fused = EPOCH_HELPER.replace("def train_epoch(x):", "def step_loop(x):").replace("train_epoch(1)", "step_loop(1)")
    assert epochs.applies_to(fused)
    assert not epochs.applies_to(fused.replace("for epoch in range(2):\n    step_loop(1)", "step_loop(1)"))
    assert not epochs.applies_to(EPOCH_HELPER + "x = step_loop(1)\n")  # defined nowhere in the module


def test_step_fusion_leaves_graph_loops_without_gathering_the_modules_facts(monkeypatch) -> None:
    """TFM301's first look: in its own output, the only loop calling a step is the multi-step
    function's graph loop, so a second run gathers no facts; a step loop still gets them."""
    from transforms import transform_by_module_name
    from transforms.base import FINDINGS_KEY, TransformContext
    from transforms.speed import fuse_step_loops

    def facts_asked(*_):
        raise AssertionError("facts gathered")

    source = (ROOT / "legacy_examples" / "mlp_feed_dict.py").read_text()
    migrated = runner.migrate_code(source).module.code
    fuse = transform_by_module_name("fuse_step_loops")
    monkeypatch.setattr(fuse_step_loops, "shared_facts", facts_asked)
    context = TransformContext(scratch={"settings": {}})
    assert fuse(context).transform_module(cst.parse_module(migrated)).code == migrated
    assert context.scratch[FINDINGS_KEY] == []
    unfused = migrated.replace("train_step_outputs = train_step_loop(0, STEPS, train_x, train_y)",
                               "for step in range(STEPS):\n    train_step(train_x, train_y)")
    with pytest.raises(AssertionError, match="facts gathered"):
        fuse(TransformContext(scratch={"settings": {}})).transform_module(cst.parse_module(unfused))


def test_stability_check_reuses_the_first_runs_parse_and_agrees_with_a_fresh_one() -> None:
    source = (ROOT / "legacy_examples" / "mlp_feed_dict.py").read_text()
    first = runner.migrate_code(source)
    new_code = first.module.code
    assert first.settled_from is not None and new_code != source
    problem, reused = runner.check_rewrite(new_code, Options(), "x.py", first.settled_from, first.wrapper)
    fresh_problem, fresh = runner.check_rewrite(new_code, Options(), "x.py", first.settled_from)
    assert problem is fresh_problem is None and reused.wrapper is first.wrapper
    assert reused.module.code == fresh.module.code == new_code
    assert runner.classify(reused.wrapper) == runner.classify(fresh.wrapper)


def test_transforms_off_under_the_settings_do_not_run() -> None:
    from transforms import transform_by_module_name

    pipeline = transform_by_module_name("feed_batches_from_datasets")
    assert not pipeline.enabled({}) and pipeline.enabled({"input_pipeline": "tf.data"})
    assert transform_by_module_name("rename_symbols").enabled({})


def test_stability_check_stops_where_the_first_run_settled_and_agrees_with_a_full_second_run(monkeypatch) -> None:
    from transforms import selected_transforms

    source = (ROOT / "legacy_examples" / "core_tf_layers_cnn.py").read_text()
    first = runner.migrate_code(source)
    codes = [t.CODE for t in selected_transforms()]
    assert 0 < first.settled_from < len(codes)
    new_code = first.module.code
    ran = recorded_passes(monkeypatch)
    problem, short = runner.check_rewrite(new_code, Options(), "x.py", first.settled_from)
    monkeypatch.undo()
    assert problem is None and ran
    assert all(codes.index(code) < first.settled_from for code in ran)
    full = runner.migrate_code(new_code)
    assert full.module.code == short.module.code == new_code
    assert runner.classify(full.wrapper) == runner.classify(short.wrapper)


# -- traversals that rebuild nothing ----------------------------------------------------------------

class _EveryHook:
    """A visitor recording every hook libcst calls, with the node's identity."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int, str]] = []

    def on_visit(self, node) -> bool:
        self.calls.append(("visit", id(node), ""))
        return not (type(node).__name__ == "Call" and getattr(node.func, "value", None) == "skip")

    def on_leave(self, original_node, updated_node=None):
        self.calls.append(("leave", id(original_node), ""))
        return updated_node

    def on_visit_attribute(self, node, attribute: str) -> None:
        self.calls.append(("visit_attribute", id(node), attribute))

    def on_leave_attribute(self, node, attribute: str) -> None:
        self.calls.append(("leave_attribute", id(node), attribute))


@pytest.mark.parametrize("path", SOURCES[::4], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_read_only_visit_calls_every_hook_libcst_calls_and_children_match(path: Path) -> None:
    import libcst as cst

    from transforms.common.syntax import children

    class Recorder(_EveryHook, cst.CSTVisitor):
        pass

    class NodeHooks(cst.CSTVisitor):  # no field hooks: walked without asking for them
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, int]] = []

        def visit_Name(self, node) -> None:
            self.calls.append(("visit_Name", id(node)))

        def visit_Call(self, node) -> bool:
            self.calls.append(("visit_Call", id(node)))
            return getattr(node.func, "value", None) != "skip"

        def leave_Attribute(self, node) -> None:
            self.calls.append(("leave_Attribute", id(node)))

    module = cst.parse_module(path.read_text(encoding="utf-8") + "skip(a.b)\n")
    for visitor_class in (Recorder, NodeHooks):
        ours, libcsts = visitor_class(), visitor_class()
        assert module.visit(ours) is module
        assert _libcst_visit(module, libcsts) is module
        assert ours.calls == libcsts.calls
    for node in _all_nodes(module):
        assert [id(child) for child in children(node)] == [id(child) for child in node.children]


def test_children_of_nodes_a_transform_built_with_lists_match_libcst() -> None:
    """Transforms build nodes with lists where the parser puts tuples, and leave optional fields
    None or MaybeSentinel.DEFAULT: children() reads them all as libcst does."""
    import libcst as cst

    from transforms.common.syntax import children

    call = cst.Call(func=cst.Attribute(value=cst.Name("tf"), attr=cst.Name("group")),
                    args=[cst.Arg(cst.Name("a")), cst.Arg(cst.Name("b"), keyword=cst.Name("name"))])
    built = cst.Module(body=[cst.SimpleStatementLine(body=[cst.Expr(call)]),
                             cst.FunctionDef(name=cst.Name("f"), params=cst.Parameters(params=[cst.Param(cst.Name("x"))]),
                                             body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])]))])
    for node in _all_nodes(built):
        assert [id(child) for child in children(node)] == [id(child) for child in node.children]


def test_pruned_pass_skips_unhooked_subtrees_and_returns_the_module_when_nothing_changed() -> None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from transforms.base import TFTransform, TransformContext

    class UpperCaseCalls(TFTransform):
        CODE = "TFM999"

        def __init__(self, context) -> None:
            super().__init__(context)
            self.seen: list[str] = []

        def visit_Name(self, node) -> None:
            self.seen.append(node.value)

        def leave_Call(self, original_node, updated_node):
            if getattr(updated_node.func, "value", "") == "f":
                return updated_node.with_changes(func=cst.Name("F"))
            return updated_node

    source = "import os\nx = [a, b]\ny = f(c)\nz = g(d)\n"
    module = cst.parse_module(source)
    transform = UpperCaseCalls(TransformContext())
    assert transform.transform_module(module).code == source.replace("f(c)", "F(c)")
    assert transform.seen == ["os", "x", "a", "b", "y", "f", "c", "z", "g", "d"]  # libcst's order
    unchanged = cst.parse_module("x = g(d)\n")
    wrapper = MetadataWrapper(unchanged, unsafe_skip_copy=True)
    assert UpperCaseCalls(TransformContext()).transform_wrapper(wrapper) is unchanged


@pytest.mark.parametrize("module_name", ["rewrite_changed_arguments", "rename_keywords", "rename_symbols"])
def test_reference_transforms_run_no_pass_when_their_visit_hooks_decide_no_rewrite(module_name, monkeypatch) -> None:
    import libcst as cst

    from transforms import transform_by_module_name
    from transforms.base import FINDINGS_KEY, TransformContext
    from transforms.common.lazy_metadata import LazyMetadataWrapper

    passes = recorded_passes(monkeypatch)
    transform = transform_by_module_name(module_name)
    tf2 = cst.parse_module("import tensorflow as tf\ny = tf.nn.relu(tf.matmul(x, w))\n")
    assert transform(TransformContext()).transform_wrapper(LazyMetadataWrapper(tf2, unsafe_skip_copy=True)) is tf2
    assert passes == []

    tf1 = {"rewrite_changed_arguments": "y = tf.to_float(x)\n", "rename_keywords": "y = tf.reduce_sum(x, keep_dims=True)\n",
           "rename_symbols": "y = tf.log(x)\n"}[module_name]
    context = TransformContext()
    module = cst.parse_module("import tensorflow as tf\n" + tf1)
    rewritten = transform(context).transform_wrapper(LazyMetadataWrapper(module, unsafe_skip_copy=True))
    # TFM101 applies its claims without a transformer pass (REPLACES_CLAIMS_ONLY)
    assert rewritten.code != module.code and passes == ([] if transform.REPLACES_CLAIMS_ONLY else [transform.CODE])
    assert len(context.scratch[FINDINGS_KEY]) == 1  # reported once, not once per walk


def test_leave_hooks_run_dry_report_what_the_pass_reports_without_running_it(monkeypatch) -> None:
    """Calls TFM102 keeps on tf.compat.v1 as they are are reported at leave time: the dry walk reports
    them, in the pass's order (inner call first), and no transformer pass runs."""
    import libcst as cst

    from transforms import transform_by_module_name
    from transforms.api._references import ReferenceTransform
    from transforms.base import FINDINGS_KEY, TransformContext
    from transforms.common.lazy_metadata import LazyMetadataWrapper

    source = ("import tensorflow as tf\n"
              "y = tf.compat.v1.reduce_sum(tf.compat.v1.nn.dropout(x, keep_prob=k, noise_shape=s), *axes)\n"
              "z = tf.compat.v1.argmax(y, 1, dimension=None)\n")
    transform = transform_by_module_name("rename_keywords")

    def findings(decide: bool) -> tuple[list[str], list[str]]:
        passes = recorded_passes(monkeypatch)
        if not decide:
            monkeypatch.setattr(ReferenceTransform, "_decides_a_rewrite", lambda self, wrapper: True)
        context = TransformContext()
        module = cst.parse_module(source)
        result = transform(context).transform_wrapper(LazyMetadataWrapper(module, unsafe_skip_copy=True))
        assert result.code == source
        monkeypatch.undo()
        return [f.message.split(":")[0] for f in context.scratch[FINDINGS_KEY]], passes

    dry, dry_passes = findings(decide=True)
    full, full_passes = findings(decide=False)
    assert dry == full == ["tf.nn.dropout", "tf.reduce_sum", "tf.argmax"]
    assert dry_passes == [] and full_passes == ["TFM102"]


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scopes_resolved_without_the_batched_walk_equal_libcsts(path: Path) -> None:
    """Every node's scope and expression context, and every scope's assignments and accesses, are
    what libcst's own resolution computes (see lazy_metadata._run_directly)."""
    import libcst as cst
    from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ScopeProvider

    from transforms.common.lazy_metadata import LazyMetadataWrapper

    module = cst.parse_module(path.read_text(encoding="utf-8"))
    ours = LazyMetadataWrapper(module, unsafe_skip_copy=True).resolve_many([ScopeProvider, ExpressionContextProvider])
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve_many([ScopeProvider, ExpressionContextProvider])
    assert dict(ours[ExpressionContextProvider]) == dict(theirs[ExpressionContextProvider])
    assert _scopes_described(ours[ScopeProvider]) == _scopes_described(theirs[ScopeProvider])


def _scopes_described(scopes) -> tuple[list, list]:
    """Which numbered scope each node is in, and each scope's kind, name, parent, assignments and
    accesses (nodes by identity: both resolutions ran on the same tree)."""
    numbers: dict[int, int] = {}

    def number(scope) -> int:
        return numbers.setdefault(id(scope), len(numbers))

    placed = sorted((id(node), number(scope)) for node, scope in scopes.items() if scope is not None)
    unique = {id(scope): scope for scope in scopes.values() if scope is not None}
    described = []
    for scope in unique.values():
        assignments = sorted((a.name, type(a).__name__, id(getattr(a, "node", None)), a._index,
                              sorted(id(access.node) for access in a.references)) for a in scope.assignments)
        accesses = sorted((name, sorted((id(access.node), access._index,
                                         sorted((r.name, id(getattr(r, "node", None))) for r in access.referents))
                                        for access in found))
                          for name, found in scope._accesses_by_name.items())
        parent = -1 if scope.parent is scope else number(scope.parent)
        described.append((number(scope), type(scope).__name__, scope._name_prefix, parent, assignments, accesses))
    return placed, sorted(described, key=repr)


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_positions_of_a_few_nodes_equal_the_position_providers(path: Path) -> None:
    """The ranges computed for a few nodes alone are PositionProvider's (hoisted starts and ends
    included), also when the code generation stops after the last of them; a node not in the module
    gets none."""
    import random

    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from transforms.common.positions import positions_of
    from transforms.common.syntax import walk

    module = cst.parse_module(path.read_text(encoding="utf-8"))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = list(walk(module))
    rng = random.Random(path.name)
    for size in (1, 5, 40):
        wanted = rng.sample(nodes, min(size, len(nodes)))
        stranger = cst.Name("elsewhere")
        found = positions_of(module, [*wanted, stranger])
        assert stranger not in found
        assert {node: found[node] for node in wanted} == {node: expected[node] for node in wanted}
        # all of them in the module: the code after the last one is not generated
        assert positions_of(module, wanted) == {node: expected[node] for node in wanted}


def test_findings_get_their_positions_when_the_pass_ends_without_positioning_the_whole_module() -> None:
    import libcst as cst
    from libcst.metadata import PositionProvider

    from transforms import transform_by_module_name
    from transforms.base import FINDINGS_KEY, TransformContext
    from transforms.common.lazy_metadata import LazyMetadataWrapper

    source = "import tensorflow as tf\n\n\ndef f(x):\n    return tf.log(x) + tf.random_normal([3])\n"
    context = TransformContext()
    wrapper = LazyMetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    transform_by_module_name("rename_symbols")(context).transform_wrapper(wrapper)
    assert [(f.line, f.col) for f in context.scratch[FINDINGS_KEY]] == [(5, 12), (5, 24)]
    assert not wrapper._metadata[PositionProvider].resolved


# -- qualified names from the imports ----------------------------------------------------------------

def _libcst_names(wrapper, node):
    from libcst.metadata import QualifiedNameProvider

    names = wrapper.resolve(QualifiedNameProvider).get(node, set())
    return names() if callable(names) else names


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_import_names_answer_as_libcst_and_skip_only_what_cannot_name_tensorflow(path: Path) -> None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, ParentNodeProvider

    from transforms.common.import_names import NO_SCOPE, ImportNames
    from transforms.common.qualnames import canonical_tf_name, module_aliases
    from transforms.common.syntax import walk

    code = path.read_text(encoding="utf-8")
    module = cst.parse_module(code)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    names = ImportNames(module, code, wrapper.resolve(ParentNodeProvider))

    def canonical(value):
        found = {canonical_tf_name(q.name) for q in _libcst_names(wrapper, value)} - {None}
        return next(iter(found)) if len(found) == 1 else None

    alias_heads = set(module_aliases(module, canonical))
    for node in walk(module):
        if not isinstance(node, cst.BaseExpression):
            continue
        expected = _libcst_names(wrapper, node)
        answer = names.qualified_names(node)
        if answer is not None:
            assert (set() if answer is NO_SCOPE else answer) == expected, cst.Module([]).code_for_node(node)
        if not names.may_name_tensorflow(node):
            assert not any(q.name.startswith(("tensorflow", "tf_slim")) or canonical_tf_name(q.name)
                           or q.name.split(".")[0] in alias_heads for q in expected)


def _answers(source: str) -> dict[str, object]:
    """`ImportNames.qualified_names` of each Name in `source`, by `name@line`."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

    from transforms.common.import_names import NO_SCOPE, ImportNames
    from transforms.common.syntax import walk

    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    names = ImportNames(module, source, wrapper.resolve(ParentNodeProvider))
    lines = wrapper.resolve(PositionProvider)
    answers = {}
    for node in walk(module):
        if isinstance(node, cst.Name):
            answer = names.qualified_names(node)
            shown = answer if answer is None or answer is NO_SCOPE else sorted(q.name for q in answer)
            answers[f"{node.value}@{lines[node].start.line}"] = "no scope" if answer is NO_SCOPE else shown
    return answers


def test_import_names_leave_to_libcst_what_depends_on_order_or_on_other_bindings() -> None:
    answers = _answers("print(tf)\n"                           # 1: before the import: libcst says builtins
                       "import tensorflow as tf\n"             # 2
                       "x = tf.zeros([1]).shape\n"             # 3
                       "def f(tf2=tf):\n"                      # 4
                       "    y = tf.ones([1])\n"                # 5
                       "    return y, len\n")                  # 6
    assert answers["tf@1"] is None
    assert answers["tf@3"] == ["tensorflow"] and answers["zeros@3"] == "no scope" and answers["x@3"] == ["x"]
    assert answers["tf@4"] == ["tensorflow"] and answers["tf@5"] == ["tensorflow"]
    assert answers["tf2@4"] is None and answers["y@5"] is None and answers["f@4"] is None
    assert answers["len@6"] == ["builtins.len"] and answers["print@1"] == ["builtins.print"]
    assert all(answer is None for answer in _answers("from typing import cast\nimport tensorflow as tf\n"
                                                     "x = cast(int, tf.zeros([1]))\n").values())


def test_transforms_on_code_with_only_imported_tensorflow_names_resolve_no_scopes() -> None:
    import libcst as cst
    from libcst.metadata import ScopeProvider

    from transforms import transform_by_module_name
    from transforms.base import TransformContext
    from transforms.common.lazy_metadata import LazyMetadataWrapper

    source = ("import tensorflow as tf\n\n\n@tf.function\ndef step(x, w):\n    y = tf.nn.relu(tf.matmul(x, w))\n"
              "    return tf.reduce_sum(y, axis=1, keepdims=True)\n")
    wrapper = LazyMetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    for name in ("rewrite_changed_arguments", "rename_keywords", "rename_symbols", "report_missing_symbols"):
        assert transform_by_module_name(name)(TransformContext()).transform_wrapper(wrapper) is wrapper.module
    assert not wrapper._metadata[ScopeProvider].resolved


def test_claims_replaced_on_their_paths_give_the_transformer_passs_module_and_findings(monkeypatch) -> None:
    """TFM101 applies its walk's claims by rebuilding only the nodes above them: the same code, findings
    and import edits as its transformer pass (forced here), which rebuilds the whole tree."""
    import libcst as cst

    from transforms import transform_by_module_name
    from transforms.base import FINDINGS_KEY, TransformContext
    from transforms.common.lazy_metadata import LazyMetadataWrapper

    source = ("from tensorflow import log\nimport tensorflow.compat.v1 as tf\nfrom tensorflow.contrib import rnn\n\n\n"
              "def f(x, keep):\n    cell = rnn.GRUCell(3)\n    return log(tf.random_normal([3])) + tf.nn.relu(x), cell\n")
    transform = transform_by_module_name("rename_symbols")

    def run() -> tuple[str, list]:
        context = TransformContext()
        result = transform(context).transform_wrapper(LazyMetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True))
        return result.code, context.scratch[FINDINGS_KEY]

    on_paths = run()
    monkeypatch.setattr(transform, "REPLACES_CLAIMS_ONLY", False)
    assert run() == on_paths
    assert on_paths[0] != source and len(on_paths[1]) >= 3


def test_replaced_on_paths_rebuilds_only_the_nodes_above_the_replaced_ones() -> None:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, ParentNodeProvider

    from transforms.common.syntax import replaced_on_paths

    module = cst.parse_module("a = f(x, y)\nb = [x, z]\nc = 1\n")
    parents = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
    call = module.body[0].body[0].value
    listed = module.body[1].body[0].value
    replacements = {call.args[1].value: cst.Name("Y"), listed.elements[0].value: cst.Integer("0")}
    result = replaced_on_paths(module, replacements, parents)
    assert result.code == "a = f(x, Y)\nb = [0, z]\nc = 1\n"
    assert result.body[2] is module.body[2] and result.body[0].body[0].value.args[0] is call.args[0]
    assert replaced_on_paths(module, {}, parents) is module


def test_engine_floor_benchmark_measures_each_step_on_the_given_files(tmp_path: Path) -> None:
    import re
    import shutil
    import subprocess
    import sys

    for name in ("mlp_feed_dict.py", "core_scoped_adam.py"):
        shutil.copyfile(ROOT / "legacy_examples" / name, tmp_path / name)
    (tmp_path / "python2.py").write_text("print 'skipped by both tools'\n")
    output = tmp_path / "floor.txt"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "engine_floor.py"), "--corpus", str(tmp_path),
                           "--repeats", "1", "--output", str(output)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = output.read_text()
    assert report.startswith("engine floor: 2 .py files")
    for step in ("parse", "positions", "codegen", "check parse", "tf_upgrade_v2", "tf-migrate"):
        assert re.search(rf"^  {step} +\d+\.\d\d s +\d+\.\d ms/file$", report, re.M), step
    assert re.search(r"libcst floor alone: \d+\.\d\dx; without positions: \d+\.\d\dx; tf-migrate: \d+\.\d\dx", report)
