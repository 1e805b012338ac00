"""``Value``: equality, a repr and a dict for a plain class that lists its fields.

The types the agents' hooks load on every prompt (the capture scope, the search
filter and its SQL dialect, a hook's event, a queued job) are plain classes on this
base rather than dataclasses: importing ``dataclasses`` (which loads ``inspect``)
and generating each class's methods cost a hook process ~25 ms of its ~75
(``tests/capture/test_hook_imports.py`` keeps it out). Each class writes its
``__init__``; this base gives what a dataclass would derive from the fields.
"""

from __future__ import annotations

__all__ = ["FrozenValue", "Value"]


class Value:
    """A mutable value: equal to another of its type with equal fields; unhashable."""

    #: The field names, in order (the subclass sets them).
    FIELDS: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    __hash__ = None  # mutable, as a dataclass with eq=True

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({shown})"

    def as_dict(self) -> dict[str, object]:
        """The fields by name (``dataclasses.asdict`` without the deep copy)."""
        return {f: getattr(self, f) for f in self.FIELDS}


class FrozenValue(Value):
    """An immutable value: its fields are set once, in ``__init__``; hashable."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in self.FIELDS and name in self.__dict__:
            raise AttributeError(f"cannot assign to field {name!r} of {type(self).__name__}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of {type(self).__name__}")

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, f) for f in self.FIELDS))
