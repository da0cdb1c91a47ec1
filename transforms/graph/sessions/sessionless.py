"""Why a file with placeholders but no session of its own is not converted.

TFM201 converts a graph together with the session runs that feed it. A file that creates
placeholders and opens no tf.Session keeps them (on tf.compat.v1): its graph is fed by a session it
does not open itself. The finding says which kind, so that the file's `compat` level has a reason.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import walk

MANAGED_SESSIONS = frozenset({
    "tf.train.Supervisor", "tf.train.MonitoredTrainingSession", "tf.train.MonitoredSession",
    "tf.train.SingularMonitoredSession",
})
TEST_CASE = "tf.test.TestCase"


def sessionless_placeholders(tf_name, module: cst.Module) -> tuple[cst.Call, str] | None:
    """The first placeholder of a module that opens no session, and why its graph is kept; None when
    the module creates no placeholder. `tf_name` resolves a node to its canonical TF name."""
    placeholder = None
    managed = test_case = False
    for node in walk(module):
        if isinstance(node, cst.Call):
            name = tf_name(node.func)
            if name is None:
                continue
            placeholder = placeholder or (node if categorize(name)[0] is Category.PLACEHOLDER else None)
            managed = managed or name in MANAGED_SESSIONS
        elif isinstance(node, cst.ClassDef):
            test_case = test_case or any(tf_name(base.value) == TEST_CASE for base in node.bases)
    if placeholder is None:
        return None
    if managed:
        reason = ("its sessions come from tf.train.Supervisor / MonitoredTrainingSession, which are not "
                  "modelled")
    elif test_case:
        reason = ("its sessions are tf.test.TestCase's (self.test_session(), self.cached_session()), which are "
                  "not modelled")
    else:
        reason = ("it creates placeholders but opens no session: the code that feeds them is in another file, "
                  "and graphs are converted one file at a time")
    return placeholder, reason
