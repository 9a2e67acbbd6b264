"""Frozen records without the dataclasses module: what a one-shot `mdfts search` builds its Hits on.

Importing dataclasses (inspect, ast, dis, tokenize) costs ~5 ms and each @dataclass ~0.5 ms of exec;
a lookup process pays that on every call. FrozenRecord gives what `@dataclass(frozen=True,
slots=True)` gave these classes: ==, hash, repr, pickling, no assignment, and a changed copy.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeVar

    _R = TypeVar("_R", bound="FrozenRecord")


class FrozenRecord:
    """A record whose fields are its `__slots__`, in order, each set once by `_fill` in `__init__`
    (whose parameters are the same names in the same order). Fields in `_uncompared` are left out
    of == and hash, like `field(compare=False)`."""

    __slots__: tuple[str, ...] = ()
    _uncompared: frozenset[str] = frozenset()
    _compared: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        cls._compared = tuple(f for f in cls.__slots__ if f not in cls._uncompared)

    def _fill(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def _key(self) -> tuple[object, ...]:
        return tuple([getattr(self, f) for f in self._compared])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenRecord) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={_brief(getattr(self, f))}" for f in self.__slots__)
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[FrozenRecord], tuple[object, ...]]:
        return self.__class__, tuple([getattr(self, f) for f in self.__slots__])

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready: a tuple as a list, a record as its own to_dict()."""
        return {f: _json_ready(getattr(self, f)) for f in self.__slots__}

    @classmethod
    def from_dict(cls: type[_R], data: Mapping[str, Any]) -> _R:
        """The record whose to_dict() is `data` (as JSON gives it back: lists for tuples); a key
        that names no field is a TypeError."""
        make: Any = cls
        made: _R = make(**data)
        return made

    def _replace(self: _R, changes: dict[str, Any]) -> _R:
        """A copy with `changes` (field names; an unknown one is a TypeError, as in __init__)."""
        make: Any = self.__class__
        copy: _R = make(**{f: getattr(self, f) for f in self.__slots__} | changes)
        return copy


def _json_ready(value: object) -> object:
    if isinstance(value, FrozenRecord):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_json_ready(v) for v in value]
    return value


def as_tuple(value: Any) -> Any:
    """A list (as JSON gives a tuple field back) as a tuple, so the record stays hashable."""
    return tuple(value) if type(value) is list else value


_REPR_CHARS = 200  # of a text field in repr: a section's body can be megabytes


def _brief(value: object) -> str:
    """repr of a field, a long text cut to its start and its length."""
    if isinstance(value, str) and len(value) > _REPR_CHARS:
        return f"{value[:_REPR_CHARS]!r}... ({len(value):,} characters)"
    return repr(value)
