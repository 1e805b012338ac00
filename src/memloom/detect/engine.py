"""The scanner: find anchors once, run only the rules they point at, merge, mask.

Design (why it is fast in pure `re`): the text is turned once into a byte "scan buffer"
(ASCII-lowered, every separator such as quotes, `=`, `:`, brackets and whitespace
mapped to a space, each non-ASCII character to one byte, so offsets are unchanged).
In that buffer every token starts after a space, so one trie-shaped regex led by the
literal b" " finds all anchors that start a token (`ghp_`, `xoxb-`, `akia`, …) in a
single fast pass, and a few `bytes.find` loops find the anchors that sit inside
identifiers (`token`, `secret`, `pass`, …). Each rule then runs `match`/`search` on a
small window of the original text at its anchor, so 150+ formats cost about one pass.
Number-shaped PII is found by one cheap digit-run regex and confirmed by checksums.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import assign, commands, pii, structural, tools
from .model import (
    CREDENTIALS,
    INTERNAL,
    PII,
    DetectConfig,
    Hit,
    Match,
    Redaction,
    compile_allow,
)
from .rules import KNOWN_EXAMPLES, RULES, TokenRule
from .tools import SUFFIXED
from .validators import shannon_entropy

STRUCTURAL_RULES = (
    "authorization-header",
    "bearer-token",
    "jwt",
    "private-key",
    "url-password",
    *tools.OLD_RULES,
    "netrc-password",
)
MARKER_RE = re.compile(r"\[redacted:[a-z0-9][a-z0-9._-]*\]")
_SEPARATORS = b" \t\n\r\f\v\"'`=:,;()[]{}<>|/\\@*!?&#%^$"
_SCAN_TABLE = bytes.maketrans(
    string.ascii_uppercase.encode() + _SEPARATORS,
    string.ascii_lowercase.encode() + b" " * len(_SEPARATORS),
)


def scan_buffer(raw: bytes) -> bytes:
    """b" " + the ASCII view lowered, separators as spaces: byte i+1 is character i."""
    return b" " + raw.translate(_SCAN_TABLE)


# Which rule names a merged span when several overlap (highest wins, then the longest).
# A tool's option (issue 42) names a span only where no rule before it found one, so
# every finding of an earlier rule keeps its name.
PRIO_USER, PRIO_VENDOR, PRIO_STRUCT, PRIO_GENERIC, PRIO_TOOL, PRIO_PII, PRIO_INTERNAL = (
    6,
    5,
    4,
    3,
    2,
    1,
    0,
)
_PII_RULES = ("email", "phone-number", "credit-card", "us-ssn", "iban")


def marker(rule: str) -> str:
    """The text that replaces a redacted span; MARKER_RE matches it and no rule does."""
    return f"[redacted:{rule}]"


@dataclass(slots=True)
class _Ctx:
    """Per-scan scratch state shared by the handlers."""

    cands: list[tuple[int, int, str, int]] = field(default_factory=list)
    seen_names: set[int] = field(default_factory=set)
    commands: commands.Seen | None = None  # command lines read (allocated lazily)
    examined: bytearray | None = None  # values already parsed by assign (allocated lazily)

    def add(self, start: int, end: int, rule: str, level: int) -> None:
        if end > start:
            self.cands.append((start, end, rule, level))


Handler = Callable[[str, int, _Ctx], None]


def _token_handler(rule: TokenRule) -> Handler:
    rx = rule.compile()
    back, ahead, check = rule.back, rule.ahead, rule.check
    min_ent, rid, level = rule.entropy, rule.id, rule.level
    group = "s" if "s" in rx.groupindex else 0

    def handle(text: str, pos: int, ctx: _Ctx) -> None:
        end = min(len(text), pos + ahead)
        m = rx.search(text, max(0, pos - back), end) if back else rx.match(text, pos, end)
        if m is None:
            return
        s, e = m.span(group)
        value = text[s:e]
        if min_ent and shannon_entropy(value) < min_ent:
            return
        if check is not None and not check(value):
            return
        ctx.add(s, e, rid, level)

    return handle


def _found_handler(fn: Callable[[str, int], tuple[int, int, str] | None]) -> Handler:
    def handle(text: str, pos: int, ctx: _Ctx) -> None:
        r = fn(text, pos)
        if r is not None:
            ctx.add(r[0], r[1], r[2], CREDENTIALS)

    return handle


def _command_handler(
    fn: Callable[[str, int, commands.Seen], list[tuple[int, int, str]]],
) -> Handler:
    def handle(text: str, pos: int, ctx: _Ctx) -> None:
        if ctx.commands is None:
            ctx.commands = commands.Seen()
        for s, e, rule in fn(text, pos, ctx.commands):
            ctx.add(s, e, rule, CREDENTIALS)

    return handle


def _assign_handler(anchor_len: int) -> Handler:
    """A secret word (`token`, `pass`, …): the name of a `NAME=value`, or part of an
    option's name (`-storepass X`), read when a `-` stands shortly before it."""

    def handle(text: str, pos: int, ctx: _Ctx) -> None:
        if ctx.examined is None:
            ctx.examined = bytearray(len(text))
        r = assign.scan_assignment(text, pos, anchor_len, ctx.seen_names, ctx.examined)
        if r is not None:
            ctx.add(r[0], r[1], r[2], CREDENTIALS)
        if text.rfind("-", max(0, pos - 48), pos) >= 0:
            if ctx.commands is None:
                ctx.commands = commands.Seen()
            for s, e, rule in commands.scan_option(text, pos, ctx.commands):
                ctx.add(s, e, rule, CREDENTIALS)

    return handle


def _buf(literal: str) -> bytes:
    """How an anchor literal reads in the scan buffer."""
    return literal.encode("ascii").translate(_SCAN_TABLE)


# How often words in coding transcripts start with each character (most to least).
_FIRST_ORDER = "tcaisp-fmrwldbnoeuhg1vy3240_5jk68qz79x"


def _trie_regex(words: Iterable[bytes], shapes: dict[str, list[str]] | None = None) -> str:
    """An alternation shaped as a trie, so the regex engine never re-tests a shared prefix.

    `shapes` maps a first character to regexes for the rest of a whole-token shape; they
    are tried before that character's anchors, inside its branch of the trie.
    """
    root: dict[str, dict] = {}
    for w in words:
        node = root
        for ch in w.decode("ascii"):
            node = node.setdefault(ch, {})
        node[""] = {}
    shapes = shapes or {}
    for ch in shapes:
        root.setdefault(ch, {})

    def emit(node: dict[str, dict], top: bool = False) -> str:
        alts = []
        # the engine tries top-level branches in order: most frequent first letters first
        items = sorted(node.items(), key=lambda kv: (_FIRST_ORDER.find(kv[0]) % 99, kv[0]))
        for ch, child in items if top else sorted(node.items()):
            if not ch:
                continue
            body = emit(child)
            extra = shapes.get(ch, []) if top else []
            if extra:
                body = "(?:" + "|".join(extra + ([body] if child else [])) + ")"
            alts.append(re.escape(ch) + body)
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            body = ("(?:" + body + ")" if len(alts) == 1 and len(body) > 1 else body) + "?"
        return body

    return emit(root, top=True)


class Detector:
    """Secret/PII/internal detection with one compiled rule set (build once, reuse).

    `redact` masks credentials and personal data with `[redacted:rule]` markers and keeps
    internal host names / private IPs; `classify` reports the highest level found
    (3 credentials > 2 internal > 1 PII > 0 none) and every finding.
    """

    def __init__(self, config: DetectConfig | None = None) -> None:
        self.config = config or DetectConfig()
        self._allow_exact, self._allow_re = compile_allow(self.config.allow)
        self._extra = [(spec, spec.compile()) for spec in self.config.extra_patterns]

        bounded: dict[str, list[Handler]] = {}
        free: dict[str, list[Handler]] = {}
        raw: dict[str, list[Handler]] = {}
        shapes: dict[tuple[str, bytes], list[Handler]] = {}
        for rule in RULES:
            h = _token_handler(rule)
            if rule.shape:
                shapes.setdefault(rule.shape, []).append(h)
            for a in rule.anchors:
                if not rule.inside:
                    bounded.setdefault(a, []).append(h)
                elif _buf(a) != a.lower().encode():  # holds a separator: exact text match
                    raw.setdefault(a, []).append(h)
                else:
                    free.setdefault(a, []).append(h)
        # A tool's name is an anchor only as a whole word (`zip `, not `zipfile`): in the
        # scan buffer a separator after it reads as a space.
        commands_at: list[tuple[str, Handler]] = [
            (a + sfx + " ", _command_handler(commands.tool_scanner(a, len(a) + len(sfx))))
            for sfx, names in (("", commands.TOOL_NAMES), *SUFFIXED.items())
            for a in names
        ]
        commands_at.append(("login ", _command_handler(commands.scan_login)))
        netrc = _found_handler(commands.scan_netrc)
        commands_at += [("machine", netrc), ("default", netrc)]
        for a, h in commands_at:
            bounded.setdefault(a, []).append(h)
        for a, fn in (
            ("authorization", structural.scan_auth_header),
            ("bearer", structural.scan_bearer),
            ("eyj", structural.scan_jwt),
        ):
            bounded.setdefault(a, []).append(_found_handler(fn))
        for a in assign.ANCHORS:
            free.setdefault(a, []).append(_assign_handler(len(a)))

        # A trie match returns the longest anchor; give it the handlers of its prefixes too.
        # Anchors are spelled as they appear in the scan buffer (separators -> spaces).
        self._bounded: dict[bytes, list[Handler]] = {}
        for lit in bounded:
            hs: list[Handler] = []
            for k in range(1, len(lit) + 1):
                hs.extend(h for h in bounded.get(lit[:k], ()) if h not in hs)
            self._bounded[_buf(lit)] = hs
        # Formats with no literal prefix are whole-token shapes tried before the anchors
        # in the same pass; a token that matches a shape also gets its anchors' handlers.
        grafts: dict[str, list[str]] = {}
        for first, rest in shapes:
            for ch in first:
                grafts.setdefault(ch, []).append(rest.decode("ascii"))
        self._shape_re = [
            (re.compile(b" [" + re.escape(first.encode()) + b"]" + rest), hs)
            for (first, rest), hs in shapes.items()
        ]
        # `(?=[first chars])` rejects a space before any other character in one bitmap test
        # (runs of separators, digits, punctuation) instead of one test per branch.
        firsts = sorted({k[:1] for k in self._bounded} | {c.encode() for c in grafts})
        look = b"(?=[" + b"".join(re.escape(c) for c in firsts) + b"])"
        trie = _trie_regex(self._bounded, grafts).encode()
        self._trie = re.compile(b" " + look + b"(?:" + trie + b")")
        self._trie_only = re.compile(b" (?:" + _trie_regex(self._bounded).encode() + b")")
        # A command or netrc entry right after a JSON-escaped line break or tab (a tool
        # call's command, a file shown in a transcript line) starts no token in the scan
        # buffer (`\nmysql` reads ` nmysql`): one literal-led regex finds those.
        self._escaped_at = {_buf(a).rstrip(b" "): _buf(a) for a, _ in commands_at}
        escaped = _trie_regex(self._escaped_at).encode()
        self._escaped = re.compile(rb"\\[nt](" + escaped + rb")(?![A-Za-z0-9_.\-])")
        self._free = sorted((_buf(a), hs) for a, hs in free.items())
        self._raw = sorted((a.encode("ascii"), hs) for a, hs in raw.items())

        self._prio: dict[str, int] = {r.id: PRIO_VENDOR for r in RULES}
        self._prio.update(dict.fromkeys(STRUCTURAL_RULES, PRIO_STRUCT))
        self._prio.update(dict.fromkeys(assign.RULE_IDS, PRIO_GENERIC))
        self._prio.update(dict.fromkeys(tools.NEW_RULES, PRIO_TOOL))
        self._prio.update(dict.fromkeys(_PII_RULES, PRIO_PII))
        self._prio.update({spec.name: PRIO_USER for spec in self.config.extra_patterns})

        # Internal host suffixes (and configured domains): one regex led by a literal.
        self._configured = {d.lower().strip().strip(".") for d in self.config.internal_domains}
        self._configured.discard("")
        suffixes = [s.lstrip(".") for s in pii.INTERNAL_SUFFIXES] + sorted(self._configured)
        by_len = sorted(suffixes, key=len, reverse=True)
        self._internal_re = re.compile(
            rb"\.(?:" + b"|".join(re.escape(_buf(d)) for d in by_len) + b")"
        )
        bare = sorted(self._configured, key=len, reverse=True)
        self._bare_re = re.compile(b"|".join(re.escape(_buf(d)) for d in bare)) if bare else None

    # ------------------------------------------------------------------ scanning

    def _credentials(self, text: str, raw: bytes, buf: bytes, ctx: _Ctx) -> None:
        bounded = self._bounded
        for m in self._trie.finditer(buf):
            pos = m.start()  # the space before the anchor is byte pos: anchor is char pos
            hs = bounded.get(m.group()[1:])
            if hs is None:  # a whole-token shape
                self._shape_match(text, buf, pos, ctx)
                continue
            for h in hs:
                h(text, pos, ctx)
        if b"\\" in raw:
            for m in self._escaped.finditer(raw):
                for h in bounded[self._escaped_at[m.group(1)]]:
                    h(text, m.start(1), ctx)
        for lit, handlers in self._free:
            i = buf.find(lit, 1)
            while i >= 0:
                for h in handlers:
                    h(text, i - 1, ctx)
                i = buf.find(lit, i + 1)
        for lit_b, handlers in self._raw:
            i = raw.find(lit_b)
            while i >= 0:
                for h in handlers:
                    h(text, i, ctx)
                i = raw.find(lit_b, i + 1)
        i = raw.find(b"-----BEGIN ")
        while i >= 0:
            r = structural.scan_private_key(text, i)
            if r is not None:
                ctx.add(r[0], r[1], r[2], CREDENTIALS)
            i = raw.find(b"-----BEGIN ", i + 1)
        i = raw.find(b"://")
        while i >= 0:
            r = structural.scan_url_credentials(text, i)
            if r is not None:
                ctx.add(r[0], r[1], r[2], CREDENTIALS)
            i = raw.find(b"://", i + 3)
        for spec, rx in self._extra:
            if spec.level == CREDENTIALS:
                self._run_extra(text, spec.name, rx, spec.level, ctx)

    def _shape_match(self, text: str, buf: bytes, pos: int, ctx: _Ctx) -> None:
        for rx, hs in self._shape_re:
            if rx.match(buf, pos):
                for h in hs:
                    h(text, pos, ctx)
        t = self._trie_only.match(buf, pos)
        if t is not None:
            for h in self._bounded[t.group()[1:]]:
                h(text, pos, ctx)

    def _personal(self, text: str, raw: bytes, buf: bytes, ctx: _Ctx) -> None:
        i = raw.find(b"@")
        while i >= 0:
            r = pii.scan_email(text, i)
            if r is not None:
                ctx.add(r[0], r[1], r[2], PII)
            i = raw.find(b"@", i + 1)
        found: list[tuple[int, int, str, int]] = []
        for m in pii.NUMBER_RUN.finditer(raw):
            s = m.start()
            # after two capitals (`DE89…`) the run may be an IBAN's check digits
            if s >= 2 and raw[s - 2 : s].isupper() and pii.scan_iban(text, s - 2, found):
                continue
            if m.end() - s > 2:
                pii.scan_numbers(text, s, m.end(), found)
        pii.scan_ipv6(text, found)
        for m in self._internal_re.finditer(buf):
            d = m.group()[1:].decode()
            s, e = m.start() - 1, m.end() - 1
            r = pii.scan_internal_host(text, s, e, d, d in self._configured)
            if r is not None:
                found.append((r[0], r[1], r[2], INTERNAL))
        if self._bare_re is not None:
            for m in self._bare_re.finditer(buf):
                s, e = m.start() - 1, m.end() - 1
                r = pii.scan_internal_host(text, s, e, m.group().decode(), True)
                if r is not None:
                    found.append((r[0], r[1], r[2], INTERNAL))
        ctx.cands.extend(found)
        for spec, rx in self._extra:
            if spec.level != CREDENTIALS:
                self._run_extra(text, spec.name, rx, spec.level, ctx)

    @staticmethod
    def _run_extra(text: str, name: str, rx: re.Pattern[str], level: int, ctx: _Ctx) -> None:
        g = 1 if rx.groups else 0
        for m in rx.finditer(text):
            s, e = m.span(g)
            if s >= 0:
                ctx.add(s, e, name, level)

    def _scan(self, text: str, credentials_only: bool = False) -> list[Match]:
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        if not text:
            return []
        raw = text.encode("ascii", "replace")  # one byte per character ('?' if non-ASCII)
        buf = scan_buffer(raw)
        ctx = _Ctx()
        self._credentials(text, raw, buf, ctx)
        if not (credentials_only and any(c[3] == CREDENTIALS for c in ctx.cands)):
            found = len(ctx.cands)
            self._personal(text, raw, buf, ctx)
            if found and len(ctx.cands) > found:
                ctx.cands = _joined_at(text, ctx.cands)
        return self._filter(text, ctx.cands) if ctx.cands else []

    def _filter(self, text: str, cands: list[tuple[int, int, str, int]]) -> list[Match]:
        """Drop allow-listed values and anything overlapping an existing marker; dedupe."""
        protected = [m.span() for m in MARKER_RE.finditer(text)] if "[redacted:" in text else []
        seen: dict[tuple[int, int, str], Match] = {}
        for s, e, rule, level in cands:
            value = text[s:e]
            if value in KNOWN_EXAMPLES or value in self._allow_exact:
                continue
            if any(rx.fullmatch(value) for rx in self._allow_re):
                continue
            if protected and any(ps < e and s < pe for ps, pe in protected):
                continue
            key = (s, e, rule)
            if key not in seen:
                seen[key] = Match(rule, s, e, level, masked=level != INTERNAL)
        return sorted(seen.values(), key=lambda m: (m.start, -m.end, m.rule))

    # ------------------------------------------------------------------ public API

    def analyze(self, text: str) -> Redaction:
        """One scan giving everything: redacted text, hits, level, all matches."""
        matches = self._scan(text)
        hits = self._merge([m for m in matches if m.masked])
        return Redaction(
            text=_apply(text, hits),
            hits=hits,
            level=max((m.level for m in matches), default=0),
            matches=matches,
        )

    def redact(self, text: str) -> tuple[str, list[Hit]]:
        """Mask credentials and personal data; offsets in hits index the original text."""
        hits = self._merge([m for m in self._scan(text) if m.masked])
        return _apply(text, hits), hits

    def classify(self, text: str) -> tuple[int, list[Match]]:
        """(highest sensitivity level, every finding) — masked or not."""
        matches = self._scan(text)
        return max((m.level for m in matches), default=0), matches

    def max_level(self, text: str) -> int:
        """Sensitivity level only; skips the PII/internal passes once a credential is seen."""
        matches = self._scan(text, credentials_only=True)
        return max((m.level for m in matches), default=0)

    def redact_many(self, texts: Iterable[str]) -> list[tuple[str, list[Hit]]]:
        return [self.redact(t) for t in texts]

    def _merge(self, matches: list[Match]) -> list[Hit]:
        """Overlapping masked findings become one hit named by the most specific rule."""
        hits: list[Hit] = []
        group: list[Match] = []
        end = -1
        for m in matches:  # sorted by start
            if group and m.start >= end:
                hits.append(self._hit(group))
                group = []
            end = max(end, m.end) if group else m.end
            group.append(m)
        if group:
            hits.append(self._hit(group))
        return hits

    def _hit(self, group: list[Match]) -> Hit:
        best = max(group, key=lambda m: (self._prio.get(m.rule, 0), m.end - m.start))
        return Hit(
            rule=best.rule,
            start=min(m.start for m in group),
            end=max(m.end for m in group),
            level=max(m.level for m in group),
        )


Cand = tuple[int, int, str, int]


def _joined_at(text: str, cands: list[Cand]) -> list[Cand]:
    """Drop an e-mail whose `@` ends a credential: in `sqlplus scott/S3cret@db.corp.com`
    the `@` joins the password to a host; masking `S3cret@db.corp.com` as an address
    would hide the host and name the password an e-mail."""
    ends = {e for s, e, _, level in cands if level == CREDENTIALS and text.startswith("@", e)}
    if not ends:
        return cands
    return [c for c in cands if c[2] != "email" or text.find("@", c[0], c[1]) not in ends]


_LINE_BREAKS = re.compile(r"\r?\n")


def _apply(text: str, hits: list[Hit]) -> str:
    """Replace each hit with its marker, re-emitting the line breaks it covered."""
    if not hits:
        return text
    parts: list[str] = []
    prev = 0
    for h in hits:
        parts.append(text[prev : h.start])
        parts.append(marker(h.rule))
        if "\n" in text[h.start : h.end]:
            parts.extend(_LINE_BREAKS.findall(text, h.start, h.end))
        prev = h.end
    parts.append(text[prev:])
    return "".join(parts)
