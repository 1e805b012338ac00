"""Public value types of memloom.detect: levels, findings, configuration."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

NONE = 0
PII = 1
INTERNAL = 2
CREDENTIALS = 3
LEVEL_NAMES = {NONE: "none", PII: "pii", INTERNAL: "internal", CREDENTIALS: "credentials"}


@dataclass(frozen=True, slots=True)
class Match:
    """One finding. `start`/`end` index the ORIGINAL text; `masked` says redact() hides it.

    Internal hostnames and private IPs are findings (they raise the level to 2) that
    redact() keeps, because a coding session is often unreadable without them.
    """

    rule: str
    start: int
    end: int
    level: int
    masked: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "start": self.start, "end": self.end}


@dataclass(frozen=True, slots=True)
class Hit:
    """One redaction: the span [start, end) of the original text became `[redacted:rule]`."""

    rule: str
    start: int
    end: int
    level: int

    def to_json(self) -> dict[str, Any]:
        """The shape of one entry of `memloom redact --json`'s `redactions` list."""
        return {"rule": self.rule, "start": self.start, "end": self.end}


@dataclass(frozen=True, slots=True)
class Redaction:
    """Everything one scan yields: redacted text, its hits, the level and all matches."""

    text: str
    hits: list[Hit]
    level: int
    matches: list[Match]

    def to_json(self) -> dict[str, Any]:
        """Exactly the document `memloom redact --json` prints for one input."""
        return {
            "text": self.text,
            "redactions": [h.to_json() for h in self.hits],
            "sensitivity": self.level,
        }


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """A user rule: the whole regex match is masked, or group 1 when the regex has groups."""

    name: str
    regex: str
    level: int = CREDENTIALS

    def compile(self) -> re.Pattern[str]:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", self.name):
            raise ValueError(
                f"redact pattern name {self.name!r}: use lower-case letters, digits, '.', '_', '-'"
            )
        if self.level not in (PII, INTERNAL, CREDENTIALS):
            raise ValueError(f"redact pattern {self.name!r}: level must be 1, 2 or 3")
        try:
            return re.compile(self.regex)
        except re.error as exc:
            raise ValueError(f"redact pattern {self.name!r}: invalid regex: {exc}") from exc


@dataclass(slots=True)
class DetectConfig:
    """User additions to the built-in rules (the `[redact]` table of config.toml).

    allow: values never to report. A plain string is compared EXACTLY with the matched
    value (the part that would be masked, e.g. the token without its `KEY=`); a string
    starting with `re:` is a regular expression that must match the WHOLE value
    (`re.fullmatch`). Allow-listing applies to every rule, PII included.

    internal_domains: extra host suffixes treated like `.internal` (level 2), e.g.
    `acme.com` matches `acme.com` and `db.eu.acme.com`.
    """

    extra_patterns: list[PatternSpec] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    internal_domains: list[str] = field(default_factory=list)

    @classmethod
    def from_toml_section(cls, d: Mapping[str, Any] | None) -> DetectConfig:
        """Build from the parsed `[redact]` table; unknown keys and bad values raise ValueError."""
        d = dict(d or {})
        unknown = set(d) - {"allow", "internal_domains", "patterns"}
        if unknown:
            raise ValueError(f"[redact]: unknown keys {sorted(unknown)}")
        allow = _str_list(d.get("allow", []), "allow")
        domains = [
            x.strip().lstrip(".").lower()
            for x in _str_list(d.get("internal_domains", []), "internal_domains")
        ]
        patterns: list[PatternSpec] = []
        raw = d.get("patterns", [])
        if not isinstance(raw, list):
            raise ValueError("[redact] patterns must be an array of tables ([[redact.patterns]])")
        for i, item in enumerate(raw):
            if not isinstance(item, Mapping):
                raise ValueError(f"[[redact.patterns]] #{i + 1} must be a table")
            extra = set(item) - {"name", "regex", "level"}
            if extra:
                raise ValueError(f"[[redact.patterns]] #{i + 1}: unknown keys {sorted(extra)}")
            name, regex = item.get("name"), item.get("regex")
            if not isinstance(name, str) or not name:
                raise ValueError(f"[[redact.patterns]] #{i + 1}: 'name' must be a non-empty string")
            if not isinstance(regex, str) or not regex:
                raise ValueError(f"redact pattern {name!r}: 'regex' must be a non-empty string")
            level = item.get("level", CREDENTIALS)
            if not isinstance(level, int) or isinstance(level, bool):
                raise ValueError(f"redact pattern {name!r}: level must be an integer 1-3")
            spec = PatternSpec(name=name, regex=regex, level=level)
            spec.compile()  # fail early, naming the pattern
            patterns.append(spec)
        cfg = cls(extra_patterns=patterns, allow=allow, internal_domains=domains)
        compile_allow(cfg.allow)
        return cfg


def _str_list(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ValueError(f"[redact] {key} must be a list of strings")
    return list(value)


def compile_allow(entries: list[str]) -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    """Split allow entries into exact strings and `re:` regexes (compiled, errors named)."""
    exact: set[str] = set()
    regexes: list[re.Pattern[str]] = []
    for entry in entries:
        if entry.startswith("re:"):
            try:
                regexes.append(re.compile(entry[3:]))
            except re.error as exc:
                raise ValueError(f"[redact] allow entry {entry!r}: invalid regex: {exc}") from exc
        else:
            exact.add(entry)
    return frozenset(exact), tuple(regexes)
