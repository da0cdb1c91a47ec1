"""The same random numbers on both sides of `tf-migrate verify`: every random op the program creates
gets its seeds from the place in the program that creates it.

Left alone, the two sides' random streams have nothing in common: TF1 gives an op the program left
unseeded fresh seeds on every run, and derives a seeded one's from a per-graph count of random ops, which
shifts as soon as the migration creates one op more, or in another order. Here `get_seed` is wrapped on
both sides so that an op's seeds come from its *creation site*: the innermost frame of the program's
own code (file and line of the legacy program; on the migrated side, the migrated line mapped back to
the legacy line it came from, through autograph's source map inside a `tf.function`), and how many
random ops that site created before in the same graph. An explicit op seed is part of the derivation,
so a migration that changes one is not hidden.

A graph op run k times, and an eager op called k times with the same seeds (its cached kernel keeps its
state), both give the k-th draw of one stream, so a compat program, a `tf.function` traced once and
eager code can all reproduce the legacy draws. Where they cannot (a function traced twice, one legacy op
answered by two functions), values differ and stay advisory: the judge counts randomness-affected values
only when all of them agreed (randomness.py).

Runs inside both side processes (the legacy one may be a user's TF 1.15 on Python 3.7): standard
library only, Python 3.7 syntax, TensorFlow modules passed in.
"""
from __future__ import absolute_import, division, print_function

import difflib
import gc
import os
import re
import sys
import weakref
import zlib

MAX_FRAMES = 64
AUTOGRAPH_FILE_MARK = "__autograph_generated_file"
# Helpers TFM203 writes into a migrated file (transforms/graph/bridge/runtime.py): an op they create
# (a variable's initial value, made again inside the wrapped graph) belongs to the program's frame
# that called them.
BRIDGE_HELPERS = ("wrap_tf1_graph", "graph_function", "run_graph")
# Module path words an API rename adds or drops (`tf.random_normal` -> `tf.random.normal`).
_API_PATH_WORDS = frozenset(["tf", "tensorflow", "compat", "v1", "v2"])


def line_map(old_source, new_source):
    """1-based old line -> new line, for lines kept by the edit (equal, or replaced one for one)."""
    old_lines, new_lines = old_source.splitlines(), new_source.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    mapping = {}
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and old_end - old_start == new_end - new_start):
            for offset in range(old_end - old_start):
                mapping[old_start + offset + 1] = new_start + offset + 1
    return mapping


def _words(line):
    """A line's words in order, API module path words left out: `tf.random_uniform([n, 1])` and
    `tf.compat.v1.random.uniform([n, 1])` read the same."""
    return tuple(word for word in re.findall(r"[A-Za-z0-9]+", line) if word not in _API_PATH_WORDS)


_ASSIGNED_CALL = re.compile(r"^\s*([\w\s,.\[\]]+?)\s*=\s*([\w.]+)\s*\(")


def _assigned_call(line):
    """What a line `h = tf.nn.dropout(...)` assigns and calls, its arguments aside (a migration
    rewrites `keep_prob=k` as `rate=1 - k`)."""
    match = _ASSIGNED_CALL.match(line)
    return (_words(match.group(1)), _words(match.group(2))) if match else ()


_CALLED = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def _assignment_calls(line):
    """What a line assigns, and every name it calls: `h = tf.cond(t, lambda: tf.nn.dropout(h, 0.8), ...)`
    assigns h and calls cond and nn.dropout."""
    match = _ASSIGNED_CALL.match(line)
    if not match:
        return None
    return _words(match.group(1)), frozenset(_words(name) for name in _CALLED.findall(line[match.end(1):]))


def _part_of_one(migrated_line, legacy_assignments):
    """The one legacy line that assigns what `migrated_line` assigns and makes every call it makes
    (a TF1 cond that became the branch it takes), or None. `legacy_assignments`: _assignment_calls of
    each legacy line, in order."""
    migrated = _assignment_calls(migrated_line)
    if migrated is None:
        return None
    candidates = [number for number, legacy in enumerate(legacy_assignments, 1)
                  if legacy is not None and legacy[0] == migrated[0] and migrated[1] <= legacy[1]]
    return candidates[0] if len(candidates) == 1 else None


def migrated_to_legacy_lines(legacy_source, migrated_source):
    """Migrated line -> legacy line: the line diff's pairs, then lines moved elsewhere (into a
    function, say) that match exactly one legacy line by their words, or else by what they assign
    and call, or else are part of one legacy line (a cond reduced to its branch)."""
    mapping = dict((new, old) for old, new in line_map(legacy_source, migrated_source).items())
    legacy_lines, migrated_lines = legacy_source.splitlines(), migrated_source.splitlines()
    for signature in (_words, _assigned_call):
        legacy_by_signature = {}
        for number, line in enumerate(legacy_lines, 1):
            legacy_by_signature.setdefault(signature(line), []).append(number)
        for number, line in enumerate(migrated_lines, 1):
            key = signature(line)
            candidates = legacy_by_signature.get(key, ())
            if number not in mapping and key and len(candidates) == 1:
                mapping[number] = candidates[0]
    legacy_assignments = [_assignment_calls(line) for line in legacy_lines]
    for number, line in enumerate(migrated_lines, 1):
        if number not in mapping:
            legacy = _part_of_one(line, legacy_assignments)
            if legacy is not None:
                mapping[number] = legacy
    return mapping


class SiteLocator(object):
    """Names the legacy creation site behind a frame: `N` (script line) or `N@module` (a module of the
    program, relative to the script's folder); None when no frame of the program's code is found.

    `script` and `program_dir`: this side's script and the folder its modules live in. On the
    migrated side, `legacy_script` (and its folder) give the legacy sources that its lines map back to."""

    def __init__(self, script, program_dir, library_roots, legacy_script=None):
        self.script = os.path.abspath(script)
        self.program_dir = os.path.abspath(program_dir) + os.sep
        self.library_roots = tuple(library_roots)
        self.legacy_script = legacy_script
        self._maps = {}
        self._autograph_origins = {}

    def site(self, frame):
        for _ in range(MAX_FRAMES):
            if frame is None:
                return None
            if _is_bridge_helper(frame.f_code):
                frame = frame.f_back
                continue
            place = self._program_place(frame.f_code, frame.f_lineno)
            if place is not None:
                return self._legacy_site(*place)
            frame = frame.f_back
        return None

    def _program_place(self, code, line):
        """(module or "" for the script, line) when the code is the program's own."""
        filename = code.co_filename
        if AUTOGRAPH_FILE_MARK in filename:
            origin = self._autograph_origin(code, line)
            if origin is None:
                return None
            filename, line = origin
        path = os.path.abspath(filename)
        if path == self.script:
            return "", line
        if path.startswith(self.program_dir) and path.endswith(".py") and not path.startswith(self.library_roots):
            return os.path.relpath(path, self.program_dir).replace(os.sep, "/"), line
        return None

    def _autograph_origin(self, code, line):
        """The user's file and line behind a line of code autograph generated (its source map hangs
        on the converted function, found through the code object once per code object)."""
        if code not in self._autograph_origins:
            functions = [item for item in gc.get_referrers(code) if hasattr(item, "ag_source_map")]
            source_map = functions[0].ag_source_map if functions else {}
            self._autograph_origins[code] = dict(
                (location.lineno, (origin.loc.filename, origin.loc.lineno)) for location, origin in source_map.items())
        return self._autograph_origins[code].get(line)

    def _legacy_site(self, module, line):
        if self.legacy_script is not None:
            mapped = self._line_map(module).get(line)
            if mapped is None:
                return "migrated:%d@%s" % (line, module)
            line = mapped
        return "%d@%s" % (line, module) if module else str(line)

    def _line_map(self, module):
        if module not in self._maps:
            legacy_dir = os.path.dirname(os.path.abspath(self.legacy_script))
            legacy = os.path.join(legacy_dir, module) if module else self.legacy_script
            migrated = os.path.join(self.program_dir, module) if module else self.script
            try:
                self._maps[module] = migrated_to_legacy_lines(_read(legacy), _read(migrated))
            except (IOError, OSError):
                self._maps[module] = {}
        return self._maps[module]


def _is_bridge_helper(code):
    qualified = getattr(code, "co_qualname", "")  # Python 3.11+, as the migrated side runs
    return qualified.split(".", 1)[0] in BRIDGE_HELPERS


def _read(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


class RandomStreams(object):
    """Wraps TensorFlow's `get_seed` so that ops created by the program are seeded by creation site."""

    def __init__(self, locator):
        self.locator = locator
        self.created = weakref.WeakKeyDictionary()  # graph -> {site: random ops created there so far}
        self.seeded = 0

    def install(self, tf1):
        """Wrap `get_seed` where TensorFlow's ops look it up (the module attribute) and where the
        program may (`tf.compat.v1.get_seed`, `tf.compat.v1.random.get_seed`)."""
        from tensorflow.python.eager import context
        from tensorflow.python.framework import ops, random_seed

        original = random_seed.get_seed
        streams = self
        default_seed = random_seed.DEFAULT_GRAPH_SEED

        def get_seed(op_seed):
            site = streams.locator.site(_caller_frame())
            if site is None:
                return original(op_seed)
            graph = None if context.executing_eagerly() else _counting_graph(ops.get_default_graph())
            return default_seed, streams.op_seed(site, graph, op_seed)

        get_seed.__doc__ = original.__doc__
        random_seed.get_seed = get_seed
        for namespace in (tf1, getattr(tf1, "random", None)):
            if namespace is not None and getattr(namespace, "get_seed", None) is original:
                namespace.get_seed = get_seed
        return self

    def op_seed(self, site, graph, op_seed):
        """The op-level seed of the next op created at `site`: in a graph, each op created there gets
        its own; eagerly, every call gets the same, so the cached kernel continues one stream."""
        ordinal = 0
        if graph is not None:
            counts = self.created.setdefault(graph, {})
            ordinal = counts.get(site, 0)
            counts[site] = ordinal + 1
        self.seeded += 1
        key = "%s#%d#%s" % (site, ordinal, op_seed)
        return (zlib.crc32(key.encode("utf-8")) & 0x7FFFFFFF) or 1


def _caller_frame():
    """The frame that called `get_seed` (past this function and the wrapper)."""
    return sys._getframe(2)


def _counting_graph(graph):
    """The graph whose random ops are counted: a `tf.cond` / `tf.while_loop` branch counts with the
    function it belongs to, as TF1's in-graph control flow did."""
    while getattr(graph, "is_control_flow_graph", False) and getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph
