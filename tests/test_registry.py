import re

from transforms import all_transforms, selected_transforms


def test_codes_unique_and_well_formed():
    codes = [t.CODE for t in all_transforms()]
    assert len(codes) == len(set(codes))
    for transform in all_transforms():
        assert re.fullmatch(r"TFM\d{3}", transform.CODE), transform
        assert transform.DESCRIPTION and "\n" not in transform.DESCRIPTION
        assert transform.SAFETY in ("safe", "unsafe")


def test_select_and_ignore_by_prefix():
    everything = selected_transforms()
    if not everything:
        return
    first = everything[0].CODE
    assert all(t.CODE.startswith(first) for t in selected_transforms(select=(first,)))
    assert first not in [t.CODE for t in selected_transforms(ignore=(first,))]
