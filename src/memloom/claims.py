"""What a new statement changes of an old one it is close to: nothing, a value, or more.

Embeddings barely tell "port 8081" from "port 8082": a near-duplicate by distance
may be the same claim with a new value, and merging it would keep the old value
and drop the new one. Before the distance bands merge, :func:`compare` reads the
two texts as tokens and says which it is:

* ``"same"`` -- the same claim: a paraphrase, another word order, function words,
  case, ``v1.2`` for ``1.2``, ``10 MB`` for ``10MB``. Merging loses nothing.
* ``"update"`` -- the same sentence with a value changed: a number (with its
  unit), version, path, URL, e-mail, identifier (``snake_case``, ``CamelCase``,
  ``ALL_CAPS``, anything with digits), quoted string, command-line flag, time, a
  state word (enabled/disabled, on/off, true/false, allow/deny, …), a negation,
  or one content word swapped for another in an otherwise equal sentence. The
  new text is the belief's next version.
* ``"different"`` -- a value changed and more besides: two claims that may both
  be true, so both are kept and the pair is flagged as a conflict.

Pure, deterministic and standard library only (plus the stemmer the keyword
search uses): it runs on the write path, for the nearest neighbour of each write.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Literal

from memloom.ranking import stem

__all__ = ["Change", "Claim", "carries_a_value", "claim", "compare", "may_update"]

Change = Literal["same", "update", "different"]

_UNITS = {
    # time
    "ms": "ms", "msec": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d", "week": "w", "weeks": "w", "w": "w",
    # size
    "b": "b", "byte": "b", "bytes": "b",
    "kb": "kb", "kib": "kib", "k": "k", "mb": "mb", "mib": "mib", "m": "m",
    "gb": "gb", "gib": "gib", "g": "g", "tb": "tb", "tib": "tib",
    # other
    "%": "%", "percent": "%", "px": "px", "rem": "rem", "em": "em",
    "x": "x", "times": "x", "rps": "rps", "qps": "qps",
    "cpu": "cpu", "cpus": "cpu", "core": "core", "cores": "core",
    "gbps": "gbps", "mbps": "mbps",
}  # fmt: skip


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words that set a state: one for another is a changed value (enabled -> disabled).
#: "on", "up", "down", "open" and "no" are prepositions and determiners too often to be
#: values: "off" alone marks "on -> off", a negation "no".
_STATE_WORDS = _words(
    """enabled disabled enable disable off true false yes allow deny allowed denied
    allows denies accept reject accepted rejected closed opened active inactive
    public private required optional mandatory sync async synchronous asynchronous
    strict lenient blocking nonblocking locked unlocked visible hidden started stopped
    paused resumed pass fail passes fails passing failing succeeded failed include
    exclude included excluded allowlisted denylisted whitelisted blacklisted online
    offline readonly writable read-only read-write deprecated supported unsupported
    valid invalid safe unsafe secure insecure"""
)
_NEGATIONS = _words(
    """not no never none nothing nobody nowhere neither nor without cannot
    dont doesnt didnt isnt arent wasnt werent wont wouldnt cant couldnt shouldnt
    mustnt neednt hasnt havent hadnt"""
)
#: Words that carry no claim of their own: leaving them out or adding them changes no
#: fact ("now runs on" is "runs on").
_STOPWORDS = (
    _words(
        """a an the this that these those it its it's is are was were be been being am do does
    did doing has have had having will would shall should can could may might must of to
    in on at by for from with into onto over under about as than then so such via per
    and or but if when while where which who whom whose what how why there here we our
    ours us you your yours they them their theirs he she his her i me my mine one ones
    all any each every some both either also too very just only really quite rather
    now currently today nowadays anymore already still yet instead again always usually
    often sometimes ever new newly latest recently lately set setting configured
    please note noted use uses used using run runs ran running"""
    )
    - _NEGATIONS
    - _STATE_WORDS
)
#: Verbs and nouns a paraphrase swaps without changing the claim (one for another is
#: not a changed value).
_SYNONYMS: tuple[frozenset[str], ...] = tuple(
    _words(group)
    for group in (
        "run runs listen listens serve serves bind binds host hosts live lives sit sits",
        "use uses employ employs rely relies prefer prefers",
        "db database databases dbs",
        "repo repository repositories repos",
        "dir directory folder directories folders dirs",
        "config configuration settings setting conf",
        "doc docs documentation",
        "test tests spec specs",
        "app application apps applications",
        "env environment environments envs",
        "build builds compile compiles",
        "start starts launch launches boot boots",
        "delete deletes remove removes",
        "make makes create creates",
        "show shows display displays print prints",
        "need needs require requires",
        "file files",
        "service services svc",
        "package packages pkg pkgs",
        "version versions",
        "command commands cmd",
        "limit limits cap caps maximum max",
        "timeout timeouts",
    )
)

_TOKEN = re.compile(
    r"""
    (?P<url>[a-z][a-z0-9+.\-]*://[^\s"'<>`]+)
  | (?P<email>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)
  | (?P<quoted>"[^"\n]{1,200}"|`[^`\n]{1,200}`|(?<![\w'])'[^'\n]{1,200}'(?![\w']))
  | (?P<cron>(?<!\S)(?:[\d*/,\-]+\s+){4}[\d*/,\-]+(?!\S))
  | (?P<path>(?:~|\.{1,2})?/[\w.@%+\-~/]+|[\w.\-]+/[\w.\-/]+|[A-Za-z]:\\[\w.\\\-]+)
  | (?P<flag>(?<![\w\-])--?[A-Za-z][\w\-]*(?:=[^\s,;]+)?)
  | (?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?)
  | (?P<version>\b[vV]?\d+(?:\.\d+)+(?:[\-+][\w.]+)?\b)
  | (?P<number>[-+]?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|[A-Za-z]{1,12}\b))?)
  | (?P<word>[\w][\w'’\-]*)
    """,
    re.VERBOSE | re.IGNORECASE,
)
#: ``snake_case``, anything with digits, ``CamelCase``, ``dotted.names``, and ``ALL_CAPS``
#: of five letters or more (``DB``, ``API``, ``AWS`` are acronyms: words).
_IDENTIFIER = re.compile(r"_|\d|[a-z][A-Z]|^[A-Z]{5,}$|\.[a-z]")


class Claim:
    """A text read for comparison: its tokens in order (normalised), the values it
    states (a multiset), its negations, and the stems of its content words."""

    __slots__ = ("content", "names", "negations", "tokens", "values")

    def __init__(
        self,
        tokens: tuple[str, ...],
        values: Counter[str],
        negations: int,
        content: frozenset[str],
        names: frozenset[str] = frozenset(),
    ) -> None:
        self.tokens = tokens
        self.values = values
        self.negations = negations
        self.content = content
        #: Words written as names (capitalised past the first word: ``Postgres``, ``Redis``).
        self.names = names

    def __repr__(self) -> str:
        return f"Claim(values={dict(self.values)!r}, negations={self.negations})"


def _number(text: str) -> str:
    """``10 MB`` -> ``10mb``, ``8,080`` -> ``8080``, ``30 seconds`` -> ``30s``; a word
    that is no unit stays apart (``port 8081 and`` reads ``8081``)."""
    match = re.match(r"([-+]?\d[\d,]*(?:\.\d+)?)\s?(.*)", text)
    if match is None:  # pragma: no cover - the token regex guarantees a number
        return text.lower()
    digits, unit = match.group(1).replace(",", ""), match.group(2).lower()
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".") or "0"
    return digits + _UNITS.get(unit, "")


def _unit_left_over(text: str) -> str | None:
    """The word glued to a number that is not a unit (``8081 and``): read as a word."""
    match = re.match(r"[-+]?\d[\d,]*(?:\.\d+)?\s?([A-Za-z]{1,12})$", text)
    if match and match.group(1).lower() not in _UNITS:
        return match.group(1)
    return None


@lru_cache(maxsize=4096)
def claim(text: str) -> Claim:
    """``text`` read as tokens, values and content words (cached: a batch compares one
    neighbour's text with many drafts)."""
    tokens: list[str] = []
    values: Counter[str] = Counter()
    negations = 0
    content: set[str] = set()
    names: set[str] = set()

    def value(kind: str, normalised: str) -> None:
        tokens.append(normalised)
        values[f"{kind}:{normalised}"] += 1

    def word(raw: str) -> None:
        nonlocal negations
        bare = raw.strip("'’-").lower().replace("’", "'")
        if not bare:
            return
        flat = bare.replace("'", "")
        if flat in _NEGATIONS or bare.endswith("n't"):
            negations += 1
            tokens.append("¬")
            return
        if _IDENTIFIER.search(raw.strip("'’-")):
            value("id", bare)
            return
        if flat in _STATE_WORDS:
            value("state", flat)
            return
        tokens.append(flat)
        if flat not in _STOPWORDS:
            content.add(stem(flat))
            if tokens[:-1] and raw[:1].isupper():
                names.add(flat)

    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "word"
        raw = match.group()
        if kind == "word":
            word(raw)
        elif kind == "number":
            left = _unit_left_over(raw)
            if left is not None:
                value("num", _number(raw[: raw.rfind(left)].strip()))
                word(left)
            else:
                value("num", _number(raw))
        elif kind == "version":
            value("num", raw.lower().lstrip("v"))
        elif kind == "quoted":
            value("str", raw[1:-1].strip().lower())
        elif kind in ("url", "path"):
            value(kind, raw.rstrip(".,;:!?)").rstrip("/").lower())
        elif kind == "cron":
            value("cron", " ".join(raw.split()))
        elif kind == "time":
            value("time", re.sub(r"[\s.]", "", raw.lower()))
        else:  # email, flag
            value(kind, raw.rstrip(".,;:").lower())
    return Claim(tuple(tokens), values, negations, frozenset(content), frozenset(names))


@lru_cache(maxsize=1)
def _synonym_stems() -> dict[str, frozenset[str]]:
    """Each synonym's stem -> the stems of its group (content words are compared stemmed)."""
    out: dict[str, frozenset[str]] = {}
    for group in _SYNONYMS:
        stems = frozenset(stem(w) for w in group)
        for s in stems:
            out[s] = out.get(s, frozenset()) | stems
    return out


#: How many plain words two texts may differ in and still be one statement with a value
#: changed: a swapped word is two, a changed state two, a negation one.
_MAX_WORDS_APART = 4


@lru_cache(maxsize=8192)
def _gist(text: str) -> frozenset[str]:
    """The plain words of ``text`` (letters only, function words aside), lower-cased."""
    out = set()
    for raw in text.lower().split():
        word = raw.strip(".,;:!?()[]{}\"'`")
        if word.isalpha() and word not in _STOPWORDS:
            out.add(word)
    return frozenset(out)


#: What a text that states a value shows: a digit, an identifier's or a path's
#: punctuation, a quote, a flag.
_VALUE_MARK = re.compile(r"[\d_/@\\`\"']|--| -")
_STATE_OR_NEGATION = _STATE_WORDS | _NEGATIONS


def carries_a_value(text: str) -> bool:
    """Whether ``text`` states something :func:`compare` ``far=True`` can see changed: a
    value, a name (a capital past the first letter), a state word or a negation. Texts
    that do not are never read against a neighbour past the distance bands (a write
    skips that search). String methods and one character-class search (~2 µs): every
    write asks it."""
    if not text[1:].islower() or _VALUE_MARK.search(text) or "n't" in text:
        return True
    words = text.lower().replace(".", " ").replace(",", " ").replace(";", " ").split()
    return not _STATE_OR_NEGATION.isdisjoint(words)


def may_update(old: str, new: str) -> bool:
    """A cheap test that :func:`compare` could answer "update": most pairs of memories
    share too few plain words to be one statement with a value changed (a write reads
    its nearest neighbours with it, and only those that pass are compared)."""
    return len(_gist(old) ^ _gist(new)) <= _MAX_WORDS_APART


def _synonyms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (words or their stems) say the same (``runs``/``listens``)."""
    group = _synonym_stems().get(stem(a))
    return group is not None and stem(b) in group


def _swapped(old: Claim, new: Claim) -> tuple[str, str] | None:
    """The one token (a content word or a value) that differs between two otherwise
    equal sentences, function words such as "now" aside; None when it is not so."""
    a_words = [t for t in old.tokens if t not in _STOPWORDS]
    b_words = [t for t in new.tokens if t not in _STOPWORDS]
    if len(a_words) != len(b_words):
        return None
    differing = [(a, b) for a, b in zip(a_words, b_words, strict=True) if a != b]
    if len(differing) != 1:
        return None
    a, b = differing[0]
    if _synonyms(a, b) or not (set(old.tokens) & set(new.tokens)):
        return None  # a synonym; or two one-word texts with nothing else in common
    return (a, b) if stem(a) != stem(b) else None


def _is_value(claim_: Claim, token: str) -> bool:
    return token == "¬" or any(key.endswith(":" + token) for key in claim_.values)


def compare(old: str, new: str, *, far: bool = False) -> Change:
    """What ``new`` changes of ``old`` (see the module's docstring).

    ``far``: the two are further apart than the distance bands reach (their
    embeddings differ a lot). Then only a changed value, or a name swapped for a
    name (``Sentry`` for ``Rollbar``), is an update; "different" and "same" both
    mean unrelated there, and the caller leaves the pair alone."""
    if old == new:
        return "same"
    a, b = claim(old), claim(new)
    if a.tokens == b.tokens:
        return "same"
    swap = _swapped(a, b)
    if swap is not None:
        x, y = swap
        if not far or _is_value(a, x) or _is_value(b, y) or (x in a.names and y in b.names):
            return "update"
    values_changed = a.values != b.values or a.negations % 2 != b.negations % 2
    if not values_changed:
        return "same"
    if a.content == b.content or _content_is_synonymous(a.content, b.content):
        return "update"
    return "different"


def _content_is_synonymous(a: frozenset[str], b: frozenset[str]) -> bool:
    """Content words that differ only by synonyms (``runs`` for ``listens``)."""
    left, right = a - b, b - a
    if len(left) != len(right) or len(left) > 2:
        return False
    return all(any(_synonyms(x, y) for y in right) for x in left)
