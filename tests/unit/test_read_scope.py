"""The per-message read scope: what it remembers, and that nothing is remembered outside it."""

from __future__ import annotations

from chalicelib.store import scope


class Loads:
    def __init__(self) -> None:
        self.calls: list[object] = []

    def one(self, value: object) -> object:
        self.calls.append(value)
        return value

    def many(self, ids: list[str]) -> dict[str, str]:
        self.calls.append(list(ids))
        return {item_id: item_id.upper() for item_id in ids if item_id != "gone"}


def test_outside_a_scope_every_read_loads() -> None:
    loads = Loads()
    assert not scope.active()
    assert scope.remembered("k", lambda: loads.one(1)) == 1
    assert scope.remembered("k", lambda: loads.one(2)) == 2
    assert loads.calls == [1, 2]
    scope.remember("k", 3)  # no effect and no error outside a scope
    scope.forget("k")


def test_inside_a_scope_a_key_loads_once_and_the_scope_ends_with_its_block() -> None:
    loads = Loads()
    with scope.read_scope():
        assert scope.active()
        assert scope.remembered("k", lambda: loads.one(1)) == 1
        assert scope.remembered("k", lambda: loads.one(2)) == 1
    assert not scope.active()
    with scope.read_scope():
        assert scope.remembered("k", lambda: loads.one(3)) == 3
    assert loads.calls == [1, 3]


def test_a_remembered_none_is_not_read_again() -> None:
    loads = Loads()
    with scope.read_scope():
        assert scope.remembered("missing", lambda: loads.one(None)) is None
        assert scope.remembered("missing", lambda: loads.one("late")) is None
    assert loads.calls == [None]


def test_batches_load_only_what_the_scope_has_not_read_and_absent_ids_stay_absent() -> None:
    loads = Loads()
    with scope.read_scope():
        assert scope.remembered_many("user", "org", ["a", "gone"], loads.many) == {"a": "A"}
        assert scope.remembered_many("user", "org", ["gone", "a", "b", "b"], loads.many) == {"a": "A", "b": "B"}
        assert scope.remembered_many("user", "other-org", ["a"], loads.many) == {"a": "A"}
    assert loads.calls == [["a", "gone"], ["b"], ["a"]]


def test_batches_outside_a_scope_load_everything_each_time() -> None:
    loads = Loads()
    assert scope.remembered_many("user", "org", ["a", "a"], loads.many) == {"a": "A"}
    assert scope.remembered_many("user", "org", [], loads.many) == {}
    assert loads.calls == [["a"]]


def test_remember_and_forget_replace_what_a_write_changed() -> None:
    loads = Loads()
    with scope.read_scope():
        scope.remember("k", "written")
        assert scope.remembered("k", lambda: loads.one("read")) == "written"
        scope.forget("k")
        assert scope.remembered("k", lambda: loads.one("read")) == "read"
    assert loads.calls == ["read"]


def test_a_nested_scope_shares_the_outer_one() -> None:
    loads = Loads()
    with scope.read_scope():
        scope.remembered("k", lambda: loads.one(1))
        with scope.read_scope():
            assert scope.remembered("k", lambda: loads.one(2)) == 1
        assert scope.active()
    assert loads.calls == [1]
