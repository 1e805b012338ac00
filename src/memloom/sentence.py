"""Where a word stands in a short English statement: before its main verb (what the
statement is about) or after it (what it says of that thing).

``claims.compare`` reads two near-identical statements that differ in one word. "The
app uses Sentry" -> "The app uses Rollbar" swaps what is said of the app: an update.
"The frontend uses pnpm" -> "The backend uses pnpm" swaps what the statement is about:
another fact, and both are true. No tagger is loaded for that (the write path reads
one pair per write, in microseconds): a word list of the verbs memories of code use,
their inflections made by rule, and the determiners and prepositions around them.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

__all__ = [
    "ADVERBS",
    "AUXILIARIES",
    "CHANGE_MARKERS",
    "COPULAS",
    "DETERMINERS",
    "PREPOSITIONS",
    "SCOPE_PREPOSITIONS",
    "choice_verb",
    "is_scope_word",
    "main_verb",
    "verb_form",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Verbs of memories about code, in their base form; their inflections are made by rule.
_VERBS = _words(
    """accept add alert allow answer append apply archive assign authenticate authorize
    back backup ban batch become begin belong benchmark bind block boot break build bump
    bundle cache call cap catch cause change check clean clear clone close collect commit
    compile compress configure connect consume contain convert copy cover crash create
    cron deactivate decode decrypt default define delete depend deploy deprecate describe
    detect disable disconnect display do drop email emit employ enable encode encrypt
    enforce ensure execute exist expect expire expose export extend fail fetch fill filter
    fix flag flush follow fork format forward gate generate get give go grant handle hang
    hash have hit hold host ignore implement import include index inherit inject insert
    install invalidate invoke keep kill launch lead leak let limit lint list listen live
    load lock log look make manage map match mean merge migrate minify mirror mock monitor
    mount move need notify open optimize override own page parse partition pass patch pause
    pin ping point poll populate post prefer print process produce protect provide proxy
    publish pull push put queue raise reach read rebase receive recommend redirect refer
    refresh register reject release reload rely remove rename render replace reply report
    request require reset resolve respond restart restore resume retry return reuse revoke
    rotate route run save scan schedule seed select send serve set shard ship show sign sit
    skip sleep sort spawn speak split start stay stop store stream stub submit subscribe
    support sync take talk target test throttle throw time timeout track trace transform
    transpile trigger trust try turn unlock update upgrade upload use validate verify wait
    warn watch wrap write
    access adjust analyze annotate approve assert attach audit avoid await bootstrap
    broadcast calculate capture clean cleanup combine compare complete compute confirm
    consider contribute coordinate correct count crawl debug declare decide delegate
    deliver design destroy develop diff disallow dispatch document download drive dump
    duplicate edit embed emulate escape evaluate exclude expand explain extract fallback
    fetch find finish flatten forbid freeze gather grow guard guess help hide host
    identify increase decrease initialize inspect instrument integrate introduce isolate
    join keep kick know label leave lift lint maintain mark measure migrate mind
    minimize modify mutate name normalize observe obtain offer omit operate orchestrate
    order organize own pack paginate pair perform persist pick place plan play poll
    precompute prefix prepare preserve prevent print probe profile prompt propagate
    prove prune purge query quote rate reads rebuild recover reduce refactor reference
    reindex reject relate remember render repair repeat reproduce resize restrict
    retain review revert rewrite roll sample sanitize scale script search secure see
    separate share shorten shrink signal simulate sleep slice snapshot solve spin stage
    stamp standardize state step strip structure style suppress swap tag tail teach
    tear tell terminate think tie tolerate touch translate treat trim truncate tune
    unpack unset unwrap upsert verify version wake walk wipe work yield"""
)
#: Past forms of irregular verbs (their -s and -ing forms are made by rule).
_IRREGULAR = _words(
    """ran built wrote written sent kept held read set put got gotten gave given took taken
    made found began begun broke broken brought chose chosen did done drew drawn went gone
    knew known led left lost meant paid said saw seen sold shut sat stood stuck told
    thought threw thrown won hung fed hid hidden bound hit let split spent"""
)
#: Auxiliaries, copulas and modals: where a statement's verb phrase begins.
AUXILIARIES = _words(
    """is are was were be been being am has have had will would shall should can could
    may might must does do did gets get got ¬"""
)
#: A form of "be" before a participle: the passive ("is tested on macOS"), whose
#: subject is what is acted on.
COPULAS = _words("is are was were be been being am gets get got")
#: Words that stand before a verb as its subject, as a plural noun does ("we use").
_PRONOUNS = _words("we they you i people")
#: Verbs whose object is the value chosen: "use pnpm" -> "use npm" is a new choice,
#: where "restart the worker" -> "restart the scheduler" is another thing done.
_CHOICE_VERBS = _words(
    """use employ prefer choose pick adopt select pin set install require need call name
    rename switch default target rely depend keep try avoid stick upgrade downgrade bump
    change move migrate replace"""
)
DETERMINERS = _words(
    """the a an this that these those its their our your my his her every each all some
    any both either which whose"""
)
PREPOSITIONS = _words(
    """of to in on at by for from with into onto over under about via per through across
    between within without behind after before during against toward towards upon
    inside outside than like as"""
)
#: Prepositions whose object says when or for whom a statement holds (a scope), not a
#: value: "disabled for webhooks" / "disabled for e-mails" are two facts.
SCOPE_PREPOSITIONS = _words("after before during for per whenever when unless except")
#: Words that say a statement replaces an earlier one.
CHANGE_MARKERS = _words(
    """instead switched switch moved migrated replaced renamed changed longer anymore
    replacing migrating switching moving"""
)
#: Words that name what a statement is about rather than a value said of it: one of a
#: group swapped for another is another thing, wherever it stands ("in staging" /
#: "in production", "unit tests" / "integration tests", "admins" / "editors").
_SCOPE_GROUPS: tuple[frozenset[str], ...] = tuple(
    _words(group)
    for group in (
        # environments
        """staging stage production prod dev development local qa test testing sandbox
        preview ci canary uat demo preprod""",
        # components and platforms
        """frontend backend front-end back-end server client worker workers web mobile
        desktop cli ui gateway proxy dashboard sdk ios android linux macos windows
        browser extension daemon scheduler cron admin""",
        # kinds of test
        """unit integration e2e end-to-end smoke regression load performance acceptance
        functional snapshot contract property fuzz""",
        # people a statement is for
        """admins admin users user viewers viewer editors editor owners owner guests guest
        customers customer developers developer maintainers maintainer members member
        operators operator reviewers reviewer contributors contributor staff employees
        employee managers manager moderators moderator tenants tenant subscribers
        subscriber visitors visitor readers reader writers writer authors author buyers
        sellers vendors partners interns students teachers patients doctors""",
    )
)


@lru_cache(maxsize=1)
def _inflected() -> frozenset[str]:
    """Every base verb with its -s, -ed and -ing forms (the doubled consonant too)."""
    out: set[str] = set(_IRREGULAR)
    for verb in _VERBS:
        out.add(verb)
        if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
            out.add(verb + "es")
        elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
            out.update((verb[:-1] + "ies", verb[:-1] + "ied"))
        else:
            out.add(verb + "s")
        stem = verb[:-1] if verb.endswith("e") else verb
        out.update((stem + "ed", verb + "d" if verb.endswith("e") else stem + "ed", stem + "ing"))
        out.update((verb + verb[-1] + "ed", verb + verb[-1] + "ing"))
    return frozenset(out)


def verb_form(word: str) -> bool:
    """Whether ``word`` may be a verb (one of the list, inflected) or an auxiliary."""
    return word in AUXILIARIES or word in _inflected()


def choice_verb(word: str) -> bool:
    """Whether ``word`` is a form of a verb whose object is the value chosen."""
    for base in (word, word[:-1], word[:-2], word[:-3]):
        if base in _CHOICE_VERBS or base + "e" in _CHOICE_VERBS:
            return True
    return word in ("ran", "set", "kept", "chose", "chosen")


def is_scope_word(word: str) -> bool:
    return any(word in group for group in _SCOPE_GROUPS)


def same_scope_group(left: Sequence[str], right: Sequence[str]) -> bool:
    """Whether each side names another scope of one group: "staging" / "production",
    "the demo environment" / "production", "unit" / "integration"."""
    for group in _SCOPE_GROUPS:
        ours, theirs = group.intersection(left), group.intersection(right)
        if ours and theirs and ours != theirs:
            return True
    return False


ADVERBS = _words(
    """always never usually often sometimes now currently still also only just first
    then already automatically manually locally globally"""
)


def main_verb(tokens: Sequence[str], plain: Sequence[bool]) -> int | None:
    """The index of the word that begins the statement's verb phrase, or None.

    ``tokens`` are the statement's words lower-cased (values normalised), ``plain``
    whether each is a plain word (not a number, path, identifier…). A base form first
    is an imperative ("Run the tests", "Use pnpm"); an auxiliary ("is", "must") is the
    verb wherever it stands; a verb form right after a determiner or preposition is a
    noun ("the build", "of logs"); an -s form followed by another verb is a plural
    subject ("Unit tests run", "Deploys go out"); a word first that only ends in -s or
    -ed is a noun or adjective ("Uploads to …", "Failed jobs are …")."""
    previous = ""
    for i, word in enumerate(tokens):
        if not plain[i]:
            previous = word
            continue
        if word in ADVERBS:
            continue
        if word in AUXILIARIES:
            return i
        if word in _inflected() and previous not in DETERMINERS | PREPOSITIONS:
            first = previous == ""
            base = word in _VERBS
            following = next((t for t in tokens[i + 1 :] if t not in ADVERBS), "")
            if first and base and _noun_first(tokens, plain, i, following):
                previous = word
                continue  # "Test coverage must stay …", "Cache keys are …"
            if first and not base:
                previous = word
                continue  # "Uploads to …", "Deploys go out …", "Failed jobs …"
            if not base and word.endswith("s") and verb_form(following):
                previous = word
                continue  # "unit tests run", "build logs are"
            if base and not first and not _subject_before(previous):
                previous = word
                continue  # "the nightly backup job runs": a noun before a noun
            if first or not word.endswith("ing"):
                return i
        previous = word
    return None


def _noun_first(tokens: Sequence[str], plain: Sequence[bool], i: int, following: str) -> bool:
    """Whether a base verb first is a noun ("Test coverage must …"): a plain word follows
    it and an auxiliary comes later. "Run make check", "Use pnpm here" are imperatives."""
    if not following or following in DETERMINERS | PREPOSITIONS:
        return False
    j = tokens.index(following, i + 1)
    if not plain[j]:
        return False
    return any(t in AUXILIARIES for t in tokens[j + 1 :])


def _subject_before(previous: str) -> bool:
    """Whether a base form after ``previous`` may be a verb: after a plural noun, a
    pronoun, "to" or an auxiliary ("tests run", "we use", "to deploy", "must run")."""
    return (
        previous.endswith("s")
        or previous in _PRONOUNS
        or previous in AUXILIARIES
        or previous == "to"
    )
