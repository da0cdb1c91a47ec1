"""Write the corpus files out of the git mirrors, checking each blob's hash.

    python benchmarks/corpus/materialise.py --mirrors /work/.mirror --into .corpus

Each manifest entry (and each support file a runnable entry needs beside it: its own local
modules) lands at `<into>/<owner>+<name>/<path>`. A file whose content does not hash to the
manifest's blob sha is not written and is reported. Mirrors that are missing are named, and their
files skipped; the exit status is 1 when anything is missing or wrong, 0 otherwise.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mirrors import git_dir, mirror_name, read_blob  # noqa: E402

MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "manifest.json")


@dataclass
class Outcome:
    written: int = 0
    missing_mirrors: list[str] = field(default_factory=list)
    bad_files: list[str] = field(default_factory=list)  # "repo:path (why)"

    @property
    def ok(self) -> bool:
        return not self.missing_mirrors and not self.bad_files


def git_blob_sha(data: bytes) -> str:
    """The sha git gives a blob with this content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def load_manifest(path: str = MANIFEST) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def files_to_write(entry: dict) -> list[tuple[str, str]]:
    """(path, blob) of the entry itself and of the files it needs beside it."""
    return [(entry["path"], entry["blob"])] + [(s["path"], s["blob"]) for s in entry.get("support", ())]


def materialise(entries: list[dict], mirrors: str, into: str) -> Outcome:
    """Write every entry's files under `into`; never overwrite a file with different content."""
    outcome = Outcome()
    done: set[tuple[str, str]] = set()
    for entry in entries:
        repo = entry["repo"]
        gitdir = git_dir(mirrors, repo)
        if gitdir is None:
            if repo not in outcome.missing_mirrors:
                outcome.missing_mirrors.append(repo)
            continue
        for path, blob in files_to_write(entry):
            if (repo, path) in done:
                continue
            done.add((repo, path))
            problem = write_checked(gitdir, blob, os.path.join(into, mirror_name(repo), path))
            if problem:
                outcome.bad_files.append(f"{repo}:{path} ({problem})")
            else:
                outcome.written += 1
    return outcome


def write_checked(gitdir: str, blob: str, target: str) -> str | None:
    """Write the blob to `target` after checking its hash; the problem, or None."""
    try:
        data = read_blob(gitdir, blob)
    except Exception as error:  # a blob the mirror lacks (files over the snapshot's size limit)
        return f"blob not in the mirror: {type(error).__name__}"
    if git_blob_sha(data) != blob:
        return "content does not match the blob sha"
    if os.path.isfile(target):
        with open(target, "rb") as handle:
            if handle.read() == data:
                return None
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(data)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", default="/work/.mirror", help="folder of the fetched mirrors")
    parser.add_argument("--into", default=".corpus", help="where to write the files")
    parser.add_argument("--manifest", default=MANIFEST)
    args = parser.parse_args(argv)
    entries = load_manifest(args.manifest)
    outcome = materialise(entries, args.mirrors, args.into)
    print(f"{outcome.written} files written under {args.into} from {len(entries)} manifest entries")
    for repo in outcome.missing_mirrors:
        print(f"missing mirror: {repo} (bring it with the fetch tool: fetch github:{repo}); its files were skipped")
    for bad in outcome.bad_files:
        print(f"not written: {bad}")
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
