"""Build `manifest.json`: the corpus files, pinned by commit and blob sha, from the fetched mirrors.

    python benchmarks/corpus/build_manifest.py --mirrors /work/.mirror

Every repository of `/work/shared/dev-corpus/REPOS.md` (listed in REPOSITORIES) is pinned at the last
commit of its default branch dated before 2019-07-01. A `.py` or `.ipynb` file joins the corpus when
it imports TensorFlow and uses a TF1 API (TF1_API below). Its `kind` is `main` when it is a program
(an `if __name__ == "__main__"` block, a notebook, or top-level code that runs a session, a test
or a training loop), `module` otherwise. The runnable ones get their recipes from `recipes.py` (`runs`) and the
list of local modules they import (`support`), so that the materialiser writes those beside them.
Re-running it on the same mirrors gives the same manifest.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import posixpath
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "stand_ins")]
from corpus_stand_ins import REGISTRY  # noqa: E402
from materialise import MANIFEST  # noqa: E402
from mirrors import git_dir, pinned_commit, read_blob, tree_blobs  # noqa: E402
from recipes import RECIPES  # noqa: E402

REPOSITORIES = (
    "hwalsuklee/tensorflow-generative-model-collections", "awjuliani/DeepRL-Agents", "ibab/tensorflow-wavenet",
    "jakeret/tf_unet", "LantaoYu/SeqGAN", "Kyubyong/transformer", "Kyubyong/tacotron", "Kyubyong/dc_tts",
    "keithito/tacotron", "znxlwm/tensorflow-MNIST-GAN-DCGAN", "taki0112/Densenet-Tensorflow",
    "machrisaa/tensorflow-vgg", "kratzert/finetune_alexnet_with_tensorflow", "SullyChen/Autopilot-TensorFlow",
    "guillaume-chevalier/LSTM-Human-Activity-Recognition", "lilianweng/stock-rnn",
    "jiegzhan/multi-class-text-classification-cnn-rnn", "endernewton/tf-faster-rcnn",
    "yenchenlin/pix2pix-tensorflow", "wiseodd/generative-models", "sherjilozair/char-rnn-tensorflow",
    "williamleif/GraphSAGE", "PetarV-/GAT", "brightmart/text_classification", "hizhangp/yolo_tensorflow",
    "YunYang1994/tensorflow-yolov3", "tobegit3hub/tensorflow_template_application", "jmiller656/EDSR-Tensorflow",
    "Zehaos/MobileNet", "pannous/tensorflow-speech-recognition", "nivwusquorum/tensorflow-deepq",
    "dongjun-Lee/text-classification-models-tf", "vahidk/EffectiveTensorflow",
    "Hezi-Resheff/Oreilly-Learning-TensorFlow", "sjvasquez/handwriting-synthesis", "yunjey/show-attend-and-tell",
    "bamos/dcgan-completion.tensorflow",
)

MAX_FILE_BYTES = 400_000  # larger "source" files are generated or data, not programs
TF1_API = re.compile(
    r"tf\.Session|InteractiveSession|placeholder|tf\.contrib|import slim|slim\.|Saver\(|"
    r"summary\.(FileWriter|merge_all|scalar|histogram)|tf\.layers\.|variable_scope|get_variable|"
    r"feed_dict|app\.flags|QueueRunner|start_queue_runners|train_op|\.minimize\(")
RUNS_SOMETHING = re.compile(r"Session\(|\.run\(|tf\.test\.main|app\.run|next_batch|\btrain\(|\btest\(\)")


def is_tf1(text: str) -> bool:
    return "tensorflow" in text and TF1_API.search(text) is not None


def source_of(path: str, data: bytes) -> str:
    """The Python source of a file (a notebook's code cells joined)."""
    text = data.decode("utf-8", "replace")
    if not path.endswith(".ipynb"):
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return ""
    return "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")


def kind_of(path: str, text: str) -> str:
    """`main` for a program (main guard, notebook, or top-level code that runs something)."""
    if path.endswith(".ipynb") or re.search(r"__name__\s*==\s*['\"]__main__['\"]", text):
        return "main"
    try:
        body = ast.parse(text).body
    except SyntaxError:  # Python 2: judge the unindented lines
        top = "\n".join(line for line in text.splitlines() if line[:1] not in ("", " ", "\t", "#"))
        return "main" if RUNS_SOMETHING.search(top) else "module"
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    top = [ast.get_source_segment(text, node) or "" for node in body if not isinstance(node, definitions)]
    return "main" if any(RUNS_SOMETHING.search(segment) for segment in top) else "module"


def local_imports(text: str) -> list[str]:
    """Dotted module names a file imports (absolute and relative-to-its-folder alike)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def resolve(name: str, bases: list[str], blobs: dict) -> list[str]:
    """Repository files that make up module `name` from one of `bases` (package __init__ included)."""
    parts = name.split(".")
    for base in bases:
        found = []
        for depth in range(1, len(parts) + 1):
            stem = posixpath.normpath(posixpath.join(base, *parts[:depth]))
            for candidate in (stem + ".py", stem + "/__init__.py"):
                if candidate in blobs:
                    found.append(candidate)
        if found:
            return found
    return []


def support_files(entry_path: str, python_path: tuple[str, ...], blobs: dict, read) -> list[str]:
    """The local modules a program imports, transitively (not the program itself)."""
    bases = [posixpath.dirname(entry_path) or "."] + [posixpath.normpath(p) for p in python_path]
    seen, queue = {entry_path}, [entry_path]
    while queue:
        path = queue.pop()
        for name in local_imports(read(path)):
            for found in resolve(name, bases + [posixpath.dirname(path) or "."], blobs):
                if found not in seen:
                    seen.add(found)
                    queue.append(found)
    return sorted(seen - {entry_path})


def working_dir_files(stand_ins: tuple[str, ...]) -> list[str]:
    """Files the stand-in layer writes into the program's working directory before it starts."""
    return sorted(path for name in stand_ins for path in REGISTRY[name].files)


def repo_entries(repo: str, gitdir: str) -> list[dict]:
    """Manifest entries of one repository: its TF1 files, runnable ones with their recipes."""
    commit = pinned_commit(gitdir)
    blobs = tree_blobs(gitdir, commit)
    cache: dict[str, str] = {}

    def read(path: str) -> str:
        if path not in cache:
            cache[path] = source_of(path, read_blob(gitdir, blobs[path][0]))
        return cache[path]

    recipes: dict[str, list] = {}
    for recipe in RECIPES:
        if recipe.repo == repo:
            recipes.setdefault(recipe.path, []).append(recipe)
    entries = []
    for path, (sha, size) in sorted(blobs.items()):
        if not path.endswith((".py", ".ipynb")) or size > MAX_FILE_BYTES or not is_tf1(read(path)):
            continue
        entry = {"repo": repo, "commit": commit, "path": path, "blob": sha, "kind": kind_of(path, read(path))}
        if path in recipes:
            runs = recipes.pop(path)
            entry["runs"] = [dict(r.to_dict(), working_dir_files=working_dir_files(r.stand_ins)) for r in runs]
            entry["support"] = [{"path": p, "blob": blobs[p][0]}
                                for p in support_files(path, runs[0].python_path, blobs, read)]
        entries.append(entry)
    if recipes:
        raise SystemExit(f"recipes for files not selected from {repo}: {sorted(recipes)}")
    return entries


def build(mirrors: str) -> tuple[list[dict], list[str]]:
    """All entries, and the repositories whose mirror is missing."""
    entries, missing = [], []
    for repo in REPOSITORIES:
        gitdir = git_dir(mirrors, repo)
        if gitdir is None:
            missing.append(repo)
            continue
        entries += repo_entries(repo, gitdir)
    return entries, missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", default="/work/.mirror")
    parser.add_argument("--out", default=MANIFEST)
    args = parser.parse_args(argv)
    entries, missing = build(args.mirrors)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(entries, handle, indent=1)
        handle.write("\n")
    mains = sum(e["kind"] == "main" for e in entries)
    runnable = sum(len(e.get("runs", ())) for e in entries)
    repos = len({e["repo"] for e in entries})
    print(f"{len(entries)} files ({mains} main, {runnable} runnable programs) from {repos} repositories -> {args.out}")
    for repo in missing:
        print(f"missing mirror, skipped: {repo}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
