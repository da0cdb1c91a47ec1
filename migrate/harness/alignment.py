"""Pairing migrated variables with the legacy variables whose initial values they must start from.

TF's own equivalence procedure: load the same initial weights into both programs. The legacy side
saves every global variable right after initialisation (name, shape, trainable, value); the migrated
side asks a `Matcher` about each variable it creates, in creation order. Rules, first that applies:

1. **name**: the same TF1 scope path (`hidden/W` == `hidden/W`), same shape. The same name with
   another shape is reported as a shape mismatch and never paired by any other rule: it is how a
   transposed or resized weight shows up.
2. **name suffix**: one path is the other plus outer scopes (`sequential/hidden/kernel` vs
   `hidden/kernel`), with exactly one unused legacy candidate of the same shape.
3. **order + shape** (trainable variables only): the next unused trainable legacy variable in
   creation order, if its shape is the same. Non-trainable variables (optimizer state, counters) are
   never paired by position: a learning rate must not receive an Adam power.

Every decision, including "left at its own initial value", is recorded with its reason, so the report
shows exactly how the weights were aligned. Standard library only: it runs inside the migrated-side
subprocess.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LegacyVariable:
    name: str
    key: str
    shape: tuple
    dtype: str
    trainable: bool
    used_by: str | None = None


@dataclass(frozen=True)
class Decision:
    """The legacy variable a migrated one is paired with (None: left alone) and why. A converted
    value (a Keras RNN weight from a TF1 cell's) comes from `convert` applied to the `sources`' values."""

    legacy: LegacyVariable | None
    how: str
    reason: str = ""
    sources: tuple = ()
    convert: object = None


@dataclass
class Matcher:
    legacy: list
    pairs: list = field(default_factory=list)
    unaligned: list = field(default_factory=list)

    @classmethod
    def from_manifest(cls, manifest):
        """Build from the legacy side's variable manifest (a list of dicts, creation order)."""
        return cls([LegacyVariable(item["name"], item["key"], tuple(item["shape"]), item["dtype"],
                                   bool(item["trainable"])) for item in manifest])

    def match(self, name: str, shape: tuple, trainable: bool) -> Decision:
        """Decide for one migrated variable, record the decision, and mark its legacy twin used."""
        name = strip_output_index(name)
        decision = self._decide(name, tuple(shape), trainable)
        if decision.legacy is not None:
            decision.legacy.used_by = name
            self.pairs.append({"migrated": name, "legacy": decision.legacy.name, "how": decision.how,
                               "shape": list(shape), "trainable": trainable, "note": decision.reason})
        else:
            self.unaligned.append({"migrated": name, "shape": list(shape), "trainable": trainable,
                                   "reason": decision.reason})
        return decision

    def match_converted(self, name: str, shape: tuple, trainable: bool, sources: list, convert, how: str) -> Decision:
        """Pair a migrated variable computed from several legacy ones (rnn_weights.py), all by name."""
        legacy = [next(var for var in self.legacy if var.name == source) for source in sources]
        for var in legacy:
            var.used_by = var.used_by or name
        self.pairs.append({"migrated": name, "legacy": ", ".join(sources), "how": how, "shape": list(shape),
                           "trainable": trainable, "note": "values converted to the Keras layout"})
        return Decision(legacy[0], how, "", tuple(legacy), convert)

    def _decide(self, name, shape, trainable):
        notes = []
        exact = [var for var in self.legacy if var.name == name]
        if exact:
            twin = exact[0]
            if twin.used_by is not None:  # eager TF2 does not uniquify names: `Variable`, `Variable`...
                notes.append(f"legacy {twin.name} is already paired with {twin.used_by}")
            elif twin.shape != shape:
                return Decision(None, "none", f"legacy {twin.name} has shape {list(twin.shape)}, "
                                              f"this one {list(shape)}: not aligned (transposed or resized?)")
            else:
                return Decision(twin, "name")
        else:
            suffix = [var for var in self.legacy if var.used_by is None and var.shape == shape
                      and _same_path_tail(var.name, name)]
            if len(suffix) == 1:
                return Decision(suffix[0], "name suffix")
            if suffix:
                notes.append("names ambiguous: " + ", ".join(var.name for var in suffix))
        return self._by_order(shape, trainable, notes)

    def _by_order(self, shape, trainable, notes):
        if not trainable:
            notes.append("non-trainable and no legacy variable of that name: keeps its own initial value")
            return Decision(None, "none", "; ".join(notes))
        following = next((var for var in self.legacy if var.trainable and var.used_by is None), None)
        if following is None:
            notes.append("no unused trainable legacy variable left: keeps its own initial value")
            return Decision(None, "none", "; ".join(notes))
        if following.shape != shape:
            notes.append(f"next unused trainable legacy variable {following.name} has shape "
                         f"{list(following.shape)}: keeps its own initial value")
            return Decision(None, "none", "; ".join(notes))
        notes.append("paired by creation order and shape")
        return Decision(following, "order+shape", "; ".join(notes))

    def unused(self) -> list:
        """Legacy variables no migrated variable took (trainable ones usually mean a problem)."""
        return [{"legacy": var.name, "shape": list(var.shape), "trainable": var.trainable}
                for var in self.legacy if var.used_by is None]

    def summary(self) -> dict:
        return {"pairs": self.pairs, "unaligned_migrated": self.unaligned, "unused_legacy": self.unused()}


def strip_output_index(name: str) -> str:
    """`dense/kernel:0` -> `dense/kernel`."""
    base, _, index = name.rpartition(":")
    return base if base and index.isdigit() else name


def _same_path_tail(first: str, second: str) -> bool:
    """Whether one scope path is the other with more outer scopes in front."""
    shorter, longer = sorted((first, second), key=len)
    return longer != shorter and longer.endswith("/" + shorter)
