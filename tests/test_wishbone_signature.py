"""The Wishbone bus signature: its members, with and without the optional ``err`` line."""

import pytest
from amaranth.lib.wiring import In, Out

from cipher_cores.cores.bus.wishbone import WishboneSignature


def test_members_without_features_are_the_classic_bus():
    signature = WishboneSignature(addr_width=30)
    assert dict(signature.members) == {
        "cyc": Out(1), "stb": Out(1), "we": Out(1), "adr": Out(30), "dat_w": Out(32),
        "sel": Out(4), "dat_r": In(32), "ack": In(1)}
    assert signature.features == frozenset()


def test_err_feature_adds_an_err_input():
    signature = WishboneSignature(addr_width=30, features={"err"})
    assert signature.members["err"] == In(1)
    assert set(signature.members) - set(WishboneSignature(addr_width=30).members) == {"err"}
    assert signature.features == frozenset({"err"})


def test_features_take_any_collection_of_names():
    assert WishboneSignature(addr_width=4, features=["err"]) == \
        WishboneSignature(addr_width=4, features=("err", "err"))


def test_signatures_compare_by_features():
    plain = WishboneSignature(addr_width=4)
    with_err = WishboneSignature(addr_width=4, features={"err"})
    assert plain != with_err
    assert plain == WishboneSignature(addr_width=4, features=())
    assert hash(with_err) == hash(WishboneSignature(addr_width=4, features=frozenset({"err"})))
    assert len({plain, with_err, WishboneSignature(addr_width=4)}) == 2


def test_repr_names_features_only_when_present():
    assert repr(WishboneSignature(addr_width=5)) == \
        "WishboneSignature(addr_width=5, data_width=32, granularity=8)"
    assert repr(WishboneSignature(addr_width=30, features={"err"})) == \
        "WishboneSignature(addr_width=30, data_width=32, granularity=8, features={'err'})"


@pytest.mark.parametrize("features, error, message", [
    ({"rty"}, ValueError, "features may only contain 'err', not 'rty'"),
    ({"err", "stall", "lock"}, ValueError, "features may only contain 'err', not 'lock', 'stall'"),
    ("err", TypeError, "features must be a set of feature names, not 'err'"),
    (1, TypeError, "features must be a set of feature names, not 1"),
])
def test_unknown_features_are_rejected(features, error, message):
    with pytest.raises(error) as info:
        WishboneSignature(addr_width=4, features=features)
    assert str(info.value) == message
