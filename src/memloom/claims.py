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
* ``"different"`` -- a value changed and more besides, or the words swapped are
  what the statement is about rather than what it says of it ("The frontend uses
  pnpm" / "The backend uses pnpm": :func:`another_subject`): two claims that may both
  be true, so both are kept and the pair is flagged as a conflict. Where the reading
  is unsure it says "different": hiding a true fact is the worse error.

Pure, deterministic and standard library only (plus the stemmer the keyword
search uses): it runs on the write path, for the nearest neighbour of each write.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Literal

from memloom import sentence
from memloom.ranking import stem

__all__ = [
    "Change",
    "Claim",
    "another_subject",
    "carries_a_value",
    "claim",
    "compare",
    "may_update",
    "word_swapped",
]

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
    now currently today nowadays anymore longer already still yet instead again always usually
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
  | (?P<path>(?:~|\.{1,2})?/[\w.@%+\-~/]+|[\w.\-]+/[\w.\-/]+|[A-Za-z]:\\[\w.\\\-]+
           |[\w\-][\w.\-]*\.(?:py|pyi|md|rst|txt|json|jsonc|ya?ml|toml|ini|cfg|conf|env|lock
              |js|mjs|cjs|ts|tsx|jsx|vue|go|rs|java|kt|rb|php|cs|c|h|cc|cpp|hpp|swift|sh|bash
              |zsh|ps1|sql|html|css|scss|xml|csv|proto|tf|gradle|dockerfile)\b)
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


#: An HTTP method in capitals names an endpoint ("GET /health"), not the verb "get".
_HTTP_METHODS = frozenset(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])


class Claim:
    """A text read for comparison: its tokens in order (normalised), the values it
    states (a multiset), its negations, and the stems of its content words."""

    __slots__ = ("content", "kinds", "names", "negations", "tokens", "values")

    def __init__(
        self,
        tokens: tuple[str, ...],
        values: Counter[str],
        negations: int,
        content: frozenset[str],
        names: frozenset[str] = frozenset(),
        kinds: tuple[str, ...] = (),
    ) -> None:
        self.tokens = tokens
        #: Each token's kind: ``word``, ``neg`` or a value's (``num``, ``path``, ``id`` …).
        self.kinds = kinds or ("word",) * len(tokens)
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
    kinds: list[str] = []

    def value(kind: str, normalised: str) -> None:
        tokens.append(normalised)
        kinds.append(kind)
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
            kinds.append("neg")
            return
        if _IDENTIFIER.search(raw.strip("'’-")) or raw in _HTTP_METHODS:
            value("id", bare)
            return
        if flat in _STATE_WORDS:
            value("state", flat)
            return
        if flat in _STOPWORDS and raw.isupper() and len(raw) > 1:
            flat = raw  # "US", "IT": a region, a team, not the function word
        tokens.append(flat)
        kinds.append("word")
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
    return Claim(
        tuple(tokens), values, negations, frozenset(content), frozenset(names), tuple(kinds)
    )


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
    replaced = _replaced(a, b)
    if replaced == "subject":
        return "different"
    swap = _swapped(a, b)
    if swap is not None:
        x, y = swap
        if not far or _is_value(a, x) or _is_value(b, y) or (x in a.names and y in b.names):
            return "update"
    values_changed = a.values != b.values or a.negations % 2 != b.negations % 2
    if replaced == "object" and values_changed and not far and _only_replaced(a, b):
        return "update"  # "runs on CircleCI" -> "runs on GitHub Actions"
    if not values_changed:
        # Words said of the subject replaced by others ("session cookies" -> "bearer
        # tokens"): the newer statement, not a paraphrase to merge away.
        object_said_otherwise = replaced == "object" and not far and _only_replaced(a, b)
        return "update" if object_said_otherwise else "same"
    if a.content == b.content or _content_is_synonymous(a.content, b.content):
        return "update"
    return "different"


def _content_is_synonymous(a: frozenset[str], b: frozenset[str]) -> bool:
    """Content words that differ only by synonyms (``runs`` for ``listens``)."""
    left, right = a - b, b - a
    if len(left) != len(right) or len(left) > 2:
        return False
    return all(any(_synonyms(x, y) for y in right) for x in left)


#: Kinds of value that are always what a statement says, never what it is about.
_PURE_VALUES = frozenset({"num", "state", "neg", "time", "cron", "flag"})


def another_subject(a: Claim, b: Claim) -> bool:
    """Whether the words ``b`` puts in place of ``a``'s name another thing than ``a``
    is about, so that both statements can be true at once.

    The two are aligned word by word (function words aside); each span replaced,
    synonyms and inflections aside, is read for where it stands:

    * a scope word for another of its group, anywhere (staging/production,
      frontend/backend, unit/integration, admins/editors);
    * before the main verb (the subject: "The orders table is …", "Unit tests run …",
      "In staging, …"), unless the other statement says it replaces this one
      ("instead", "switched", "migrated", …; "now" for a name or a value);
    * a word that qualifies a noun both share ("… the finance team", "… the refunds
      table"), identifiers included, numbers not;
    * the object of an imperative that acts on a thing ("Restart the worker …") rather
      than choosing one ("Use pnpm …");
    * right after a preposition of scope ("disabled for webhooks", "after signup").

    A changed number, state, time, negation or flag is never another subject."""
    return _replaced(a, b) == "subject"


def _replaced(a: Claim, b: Claim) -> Literal["subject", "object"] | None:
    """What the spans ``b`` puts in place of ``a``'s name, synonyms and inflections
    aside: the subject (:func:`another_subject`), only what is said of it, or nothing."""
    found: Literal["object"] | None = None
    left, right, opcodes = _aligned(a, b)
    ta, tb = [a.tokens[i] for i in left], [b.tokens[i] for i in right]
    verbs: tuple[int | None, int | None] | None = None
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "replace" or _paraphrased(ta[i1:i2], tb[j1:j2]):
            continue
        kinds = {a.kinds[left[k]] for k in range(i1, i2)}
        kinds |= {b.kinds[right[k]] for k in range(j1, j2)}
        found = "object"
        if kinds <= _PURE_VALUES:
            continue
        if verbs is None:
            verbs = (_verb(a), _verb(b))
            if not _same_predicate(a, b, *verbs):
                return None  # said another way ("X uses Y" / "Y is used by X"): no reading
        span_a, span_b = (left[i1], left[i2 - 1] + 1), (right[j1], right[j2 - 1] + 1)
        if _subject_span(a, b, span_a, span_b, verbs, kinds):
            return "subject"
    return found


def _aligned(
    a: Claim, b: Claim
) -> tuple[list[int], list[int], list[tuple[str, int, int, int, int]]]:
    """The two statements' words aligned (function words and negations aside): the
    token indices of each, and the edit operations from one to the other."""
    left = [i for i, t in enumerate(a.tokens) if not _function_word(a, i, t)]
    right = [i for i, t in enumerate(b.tokens) if not _function_word(b, i, t)]
    ta, tb = tuple(a.tokens[i] for i in left), tuple(b.tokens[i] for i in right)
    return left, right, _opcodes(ta, tb)


@lru_cache(maxsize=8192)
def _opcodes(ta: tuple[str, ...], tb: tuple[str, ...]) -> list[tuple[str, int, int, int, int]]:
    return SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()


def _only_replaced(a: Claim, b: Claim) -> bool:
    """Whether the statements differ only by spans put in place of others, each a name
    for a name or as many words either side (nothing added or left out beside a value:
    "port 8080" -> "port 9090 behind nginx" says more): the same sentence with its
    object said otherwise ("runs on CircleCI" -> "runs on GitHub Actions")."""
    left, right, opcodes = _aligned(a, b)
    if not any(tag == "equal" for tag, *_ in opcodes):
        return False  # nothing in common ("alpha" / "bravo"): no sentence to compare
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        if tag != "replace":
            return False
        ka = [a.kinds[left[k]] for k in range(i1, i2)]
        kb = [b.kinds[right[k]] for k in range(j1, j2)]
        names = all(k in ("word", "id") for k in (*ka, *kb))
        if not names and ka.count("word") != kb.count("word"):
            return False
    return True


def _same_predicate(a: Claim, b: Claim, va: int | None, vb: int | None) -> bool:
    """Whether both statements hang on one verb (or neither has one): only then does
    where a word stands tell what it is (another subject with the same predicate)."""
    if va is None or vb is None:
        return va is None and vb is None
    x, y = a.tokens[va], b.tokens[vb]
    if x == y or stem(x) == stem(y) or _synonyms(x, y):
        return True
    # A swapped word may read as the verb in one of them ("the sms queue are …"): one
    # statement's verb found in the other will do.
    return x in b.tokens or y in a.tokens


def _function_word(c: Claim, i: int, token: str) -> bool:
    """Left out of the alignment: function words, and negations (whose count
    :func:`compare` reads on its own: "caches" / "doesn't cache" is no new subject)."""
    return c.kinds[i] == "neg" or (c.kinds[i] == "word" and token in _STOPWORDS)


def _paraphrased(left: list[str], right: list[str]) -> bool:
    """Spans that say the same: a synonym, an inflection (``retries``/``retried``)."""
    if len(left) != len(right):
        return False
    return all(
        x == y or stem(x) == stem(y) or _synonyms(x, y) for x, y in zip(left, right, strict=True)
    )


@lru_cache(maxsize=8192)
def _verb_cached(tokens: tuple[str, ...], kinds: tuple[str, ...]) -> int | None:
    return sentence.main_verb(tokens, [k in ("word", "neg") for k in kinds])


def _verb(c: Claim) -> int | None:
    return _verb_cached(c.tokens, c.kinds)


def _marked_change(a: Claim, b: Claim) -> tuple[bool, bool]:
    """(a strong change word, "now") in one statement and not the other."""
    ma = sentence.CHANGE_MARKERS.intersection(a.tokens)
    mb = sentence.CHANGE_MARKERS.intersection(b.tokens)
    return ma != mb, ("now" in a.tokens) != ("now" in b.tokens)


def _subject_span(
    a: Claim,
    b: Claim,
    span_a: tuple[int, int],
    span_b: tuple[int, int],
    verbs: tuple[int | None, int | None],
    kinds: set[str],
) -> bool:
    """Whether the replaced spans (token index ranges of ``a`` and ``b``) name what the
    statements are about (see :func:`another_subject`)."""
    words_a, words_b = a.tokens[slice(*span_a)], b.tokens[slice(*span_b)]
    plain = kinds <= {"word"}
    if kinds <= {"word", "id"} and sentence.same_scope_group(words_a, words_b):
        return True
    (p1, p2), (q1, q2) = span_a, span_b
    va, vb = verbs
    if p1 == va or q1 == vb:
        return False  # the verb itself: another way to say it, or another act on it
    if max(p1, q1) <= 2 and _leading_phrase(a.tokens) and _leading_phrase(b.tokens):
        return True  # where a statement holds, said first: "Inside Docker, …" / "On WSL, …"
    strong, now = _marked_change(a, b)
    named = all(w in a.names for w in words_a) and all(w in b.names for w in words_b)
    if strong or (now and (named or not plain)):
        return False  # "… instead", "X now owns billing": said as a change
    if (va is not None and p1 < va) or (vb is not None and q1 < vb):
        return True
    verb = None if va is None else _lexical(a.tokens, va)
    direct = verb is not None and all(
        t in sentence.DETERMINERS for t in a.tokens[verb + 1 : p1]
    )  # the span is the verb's object: "owns the Helm charts", "use single quotes"
    if direct and verb is not None and sentence.choice_verb(a.tokens[verb]):
        return False  # what is used, preferred, pinned: a choice, and a new one
    # A word that qualifies a noun both share: "the finance team", "the refunds table".
    if "num" not in kinds and p2 < len(a.tokens) and q2 < len(b.tokens):
        following = a.tokens[p2]
        if (
            following == b.tokens[q2]
            and a.kinds[p2] == "word"
            and following not in _STOPWORDS
            and following not in sentence.PREPOSITIONS
            and p2 != va
        ):
            return True
    # The object of a verb that acts on a thing ("owns the Helm charts", "Restart the
    # worker"): another thing acted on. An imperative's, whatever it is ("Do not edit
    # `client.py`"); a statement's when it is words (a key read is a value: "reads
    # settings.api_key").
    if direct and verb == va and (plain or va == 0):
        return True
    if direct and va == 0 and vb == 0:
        return True
    # Right after a preposition of scope: "disabled for webhooks", "sent after signup".
    before_a = _preceding(a.tokens, p1)
    return before_a in sentence.SCOPE_PREPOSITIONS and before_a == _preceding(b.tokens, q1)


def _leading_phrase(tokens: tuple[str, ...]) -> bool:
    prepositions = sentence.PREPOSITIONS | sentence.SCOPE_PREPOSITIONS
    return bool(tokens) and tokens[0] in prepositions


def _lexical(tokens: tuple[str, ...], verb: int) -> int | None:
    """The verb that carries the meaning of the phrase at ``verb``: itself, or the verb
    an auxiliary leads to ("must not hit", "do not edit"); None for a copula before its
    complement ("is main"). A passive ("is tested") has no object to read."""
    if tokens[verb] not in sentence.AUXILIARIES:
        return verb
    for j in range(verb + 1, min(len(tokens), verb + 4)):
        word = tokens[j]
        if word in sentence.AUXILIARIES or word in sentence.ADVERBS:
            continue
        if sentence.verb_form(word) and not (tokens[verb] in sentence.COPULAS and verb > 0):
            return j
        return None
    return None


def _choosing(tokens: tuple[str, ...], verb: int) -> bool:
    """Whether the verb phrase at ``verb`` chooses ("uses", "should use", "is pinned to")."""
    return any(sentence.choice_verb(t) for t in tokens[verb : verb + 3])


def _preceding(tokens: tuple[str, ...], i: int) -> str:
    """The word before index ``i``, determiners skipped."""
    j = i - 1
    while j >= 0 and tokens[j] in sentence.DETERMINERS:
        j -= 1
    return tokens[j] if j >= 0 else ""


def word_swapped(old: str, new: str) -> bool:
    """Whether ``old`` and ``new`` differ in one plain word or name only ("uses Sentry" /
    "uses Rollbar"): the one change the tokens cannot always place, which a configured
    LLM's classifier decides rather than this module."""
    a, b = claim(old), claim(new)
    swap = _swapped(a, b)
    return swap is not None and not _is_value(a, swap[0]) and not _is_value(b, swap[1])
