"""TF1 code reuses Python names for different graph state (`weights` in every scope); the graph kept
each object, so the TF2 code needs a name for each: later bindings get a scoped name
(`output_weights`) and the graph statements that read them are renamed to match."""
from __future__ import annotations

from transforms.graph.analysis.model import GraphBlock, Item, Kind


def state_name(kinds: dict[str, Kind], names, item: Item, name: str) -> str:
    """The name state bound at `item` gets: its own, unless earlier state was bound to it."""
    if not kinds.get(name, Kind.PYTHON).is_state:
        return name
    scope = (item.scopes.variable or item.scopes.name or ("",))[-1]
    return names.fresh(f"{scope}_{name}" if scope else name)


def renamed_reads(block: GraphBlock, item: Item, reads: set[str]) -> set[str]:
    """`reads` with rebound state names replaced by their current names (noted on the item)."""
    item.renames.update({name: block.aliases[name] for name in reads if name in block.aliases})
    return {block.aliases.get(name, name) for name in reads}
