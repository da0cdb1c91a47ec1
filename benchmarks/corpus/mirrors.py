"""Reading the bare git mirrors that the `fetch` tool brings (`<mirrors>/<owner>+<name>/repo[/.git]`).

Shared by the manifest builder and the materialiser; plain `git` subprocesses, no work tree.
"""
from __future__ import annotations

import os
import subprocess

PIN_BEFORE = "2019-07-01"  # TF 2.0 beta: the last commit before it is pure TF1 code


def mirror_name(repo: str) -> str:
    """`owner/name` -> the mirror folder name `owner+name`."""
    return repo.replace("/", "+")


def git_dir(mirrors: str, repo: str) -> str | None:
    """The git directory of `repo` under `mirrors`, or None when it was not fetched."""
    base = os.path.join(mirrors, mirror_name(repo), "repo")
    for candidate in (os.path.join(base, ".git"), base):
        if os.path.isfile(os.path.join(candidate, "HEAD")):
            return candidate
    return None


def git(gitdir: str, *args: str) -> bytes:
    """Output of a git command on a bare mirror (raises CalledProcessError on failure)."""
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def pinned_commit(gitdir: str) -> str:
    """Last commit of the default branch (the mirror's HEAD) dated before PIN_BEFORE."""
    return git(gitdir, "log", "-1", "--format=%H", f"--before={PIN_BEFORE}", "HEAD").decode().strip()


def tree_blobs(gitdir: str, commit: str) -> dict[str, tuple[str, int]]:
    """path -> (blob sha, size) of every file at `commit` whose content the mirror holds."""
    blobs = {}
    for line in git(gitdir, "ls-tree", "-r", "-l", commit).decode("utf-8", "replace").splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        if kind == "blob" and size.isdigit():
            blobs[path] = (sha, int(size))
    return blobs


def read_blob(gitdir: str, sha: str) -> bytes:
    return git(gitdir, "cat-file", "blob", sha)
