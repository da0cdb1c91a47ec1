

def test_run_budget_ends_the_program_at_the_same_step(tmp_path: Path, monkeypatch):
    (tmp_path / "fake_tf_session_corpus.py").write_text(
        "class BaseSession:\n    def run(self, fetches):\n        return fetches\n")
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    budget = run_budget.Budget(2)
    sys.meta_path.insert(0, run_budget.PostImportPatcher(
        {"fake_tf_session_corpus": lambda module: run_budget.patch_session(module, budget)}))
    session = importlib.import_module("fake_tf_session_corpus").BaseSession()
    assert session.run(1) == 1 and session.run(2) == 2
    with pytest.raises(SystemExit) as stop:
        session.run(3)
    assert stop.value.code == 0 and budget.taken == 2
    sys.modules.pop("fake_tf_session_corpus", None)
