"""The offline "LLM": a rule-based extractor of explicit statements, no model at all.

``MEMLOOM_LLM=offline`` (and the default when nothing is configured) still
lets ``memloom import sessions`` do something useful without a key. It answers
the same tasks through the same ``complete()`` call as the real providers:

* ``memloom_distill`` — keeps only what the conversation states outright, and
  mostly what the *user* says: standing rules ("always ...", "never ...",
  "don't ..."), preferences ("I prefer ...", "use X instead of Y", "please use
  ..."), explicit notes ("remember ...", "note that ..."), decisions ("let's go
  with ...", "we decided ..."), project facts ("we use ...") and commands that
  work (a backticked shell command with run/use/install/test/... in a user or
  assistant sentence: a procedure when it says how to do something, a fact when
  it says what is true). Questions, headings ("Problem Description:", "## …"),
  narration ("The question is …", "Let me …", "Looking at …", "The user
  wants …", "I'd recommend …"), reports of work done, steps of the task at hand
  ("Create a new function …"), hedged sentences ("maybe", "if needed"), code,
  logs, pasted output, fragments (cut off on "the", "and" …; a verbless list
  item), text in a non-Latin script and sentences that lean on context ("it",
  "this", "also", "the other", "above") are skipped, whoever wrote them. A line
  wrapped mid-sentence is read as one sentence. A command sentence that says how
  to do something anywhere in it ("run `x` before …", "`x` - to …", "Uninstall
  with `x`") is a procedure, an always/never rule a preference. At most
  ``max_items`` memories per chunk, deduplicated, each at most 300 characters,
  each citing the transcript line it came from.
* ``memloom_classify`` — a word-overlap rule (the importer normally uses the
  distance bands offline instead).
* ``memloom_judge`` — always ``unsure``.

Quality over quantity: a missed memory costs little, a wrong or meaningless
one pollutes recall.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from .base import BaseLLM, LLMError
from .tasks import CLASSIFY, DISTILL, JUDGE

__all__ = ["OFFLINE_DESCRIPTION", "OfflineLLM", "classify_offline", "extract_memories"]

OFFLINE_DESCRIPTION = (
    "offline rule-based extractor (no LLM configured and no agent CLI on PATH; an API "
    "key or an agent's CLI gives far better memories: memloom llm use <name>)"
)
MAX_ITEMS = 8
MAX_CHARS = 300
_MAX_SENTENCE = 400

# ------------------------------------------------------------------ sentences

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`(\[*])")
_BULLET = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")
# A file as a read tool shows it: "  15 - text", "39→text".
_LINE_NUMBER = re.compile(r"^\d{1,5}\s*(?:→|\t|-\s)\s*")
# A line that ends mid-sentence, the next one going on in lower case: one sentence
# wrapped at a fixed width, not two.
_WRAPPED = re.compile(r"(?<=[\w,`])[ \t]*\n[ \t]*(?=[a-z(`])")
_CODEISH_START = re.compile(
    r"^(?:[>$#{}\[\]<|@+]|//|/\*|\*/|at\s+\S+\(|File \"|Traceback|diff --git|index [0-9a-f]|"
    r"---|\d{1,2}:\d{2}|[A-Z]:\\|(?:def|class|function|const|let|var|import|from|return)\s)"
)
_CODE_CHARS = set("{}[]();=<>\\|$")


def _codeish(line: str) -> bool:
    if _CODEISH_START.match(line):
        return True
    bare = _INLINE_CODE.sub("", line)
    if not bare.strip():
        return True
    symbols = sum(ch in _CODE_CHARS for ch in bare)
    return symbols / max(len(bare), 1) > 0.06


def _sentences(text: str) -> Iterator[str]:
    """Prose sentences of one transcript line; code, logs and pasted output left out."""
    text = text.replace("\\\n", "\n")
    text = _FENCED.sub("\n", text)
    text = _WRAPPED.sub(" ", text)
    for raw in text.split("\n"):
        if raw.startswith(("    ", "\t")):
            continue
        line = _LINE_NUMBER.sub("", raw.strip().rstrip("\\").strip())
        line = _BULLET.sub("", line).replace("**", "").strip()
        if not line or _codeish(line):
            continue
        for sentence in _SENTENCE_END.split(line):
            sentence = sentence.strip()
            if 8 <= len(sentence) <= _MAX_SENTENCE:
                yield sentence


# ------------------------------------------------------------------- patterns

_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|but|oh|btw|yes|yeah|yep|fine|well|great|alright|right|"
    r"hey(?: claude)?|hi|actually|now|then|just|cool|perfect|thanks|thank you)\b[,.!:;]?\s+)+",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:can|could|would|will|did|is|are|was|were|should|shall|what|how|why|which|where|"
    r"whether|who|whose|may|might|any idea|any chance|have you|has anyone|i wonder|"
    r"do(?:es)?(?!\s+not\b|n'?t\b))\b",
    re.IGNORECASE,
)
# A label that names a part of a message, not a subject: "Problem Description: …",
# "Summary: …", "## Steps", "Step 2: …", "The question is: …". What follows it is
# the writer's account of the moment, never a standing memory.
_HEADING = re.compile(
    r"^(?:#{1,6}\s|(?:(?:the\s+)?(?:problem|issue|bug|question|description|summary|context|"
    r"background|goal|objective|task|overview|status|results?|update|answer|analysis|"
    r"findings?|observations?|conclusion|tl;?dr|next steps?|changes|errors?|output|"
    r"requirements?|expected(?:\s+behaviou?r)?|actual(?:\s+behaviou?r)?|steps to reproduce|"
    r"root cause|solution|approach|plan|example|(?:step|phase|part|option)\s+\w+)"
    r"(?:\s+(?:description|statement|summary|details?|overview))?\s*[:\-–—]))",
    re.IGNORECASE,
)
# Two to four Title Case words and a colon: a heading however it is worded.
_TITLE_LABEL = re.compile(r"^(?:[A-Z][\w'’/&-]*\s+){1,3}[A-Z][\w'’/&-]*\s*:")
# Narration: the writer telling what they are doing, did or see, not what holds.
_NARRATION = re.compile(
    r"^(?:the\s+(?:main\s+|real\s+|key\s+|only\s+|actual\s+|big\s+)?(?:question|problem|"
    r"issue|point|idea|thing|catch|goal|task|answer|reason|challenge|difference|error|fix|"
    r"plan)s?\s+(?:here\s+)?(?:is|was|are|were)\b|"
    r"let me\b|let['’]?s see\b|i['’]ll\b|i will\b|i['’]m going to\b|i am going to\b|"
    r"now,?\s+(?:i|we|let)\b|looking\s+(?:at|into|through|over)\b|"
    r"(?:first|firstly|second|secondly|next|then|finally|lastly),|"
    r"great\b|perfect\b|excellent\b|awesome\b|good news\b|done\b|"
    r"here(?:['’]s| is| are)\b|i['’]ve\b|i have (?:added|created|updated|fixed|made|changed|"
    r"implemented|removed|written)\b|we['’]ve\b|(?:as\s+)?you can see\b|i see\b|i notice|"
    r"i found\b|based on\b|in summary\b|to summari[sz]e\b|"
    r"i['’]d\b|i would\b|i (?:recommend|suggest)\b|my (?:recommendation|suggestion)\b|"
    r"the user\s+(?:wants|wanted|asked|is asking|needs|said|mentioned|prefers to)\b|"
    r"they\s+(?:provide|have|say|suggest|recommend|mention)\b)",
    re.IGNORECASE,
)
# An assistant's report of work just done: "Created `CONTRIBUTING.md` with …".
_DONE_REPORT = re.compile(
    r"^(?:created|added|updated|removed|renamed|moved|implemented|refactored|changed|"
    r"modified|wrote|replaced|deleted|installed|fixed|verified|confirmed|tested)\b",
    re.IGNORECASE,
)
# Words by which a rule leans on what was said before it ("do not also …").
_LEANS_BACK = re.compile(r"\b(?:also|as well|the other|the rest|again)\b", re.IGNORECASE)
# Words that point at another part of the page, wherever they stand.
_POINTS_AWAY = re.compile(
    r"\b(?:above|below|earlier|previously|the following|aforementioned)\b", re.IGNORECASE
)
# A sentence cut off: it ends on a word that cannot end one ("… switch the.").
_CUT_OFF = re.compile(
    r"\b(?:the|a|an|and|or|but|nor|to|of|in|on|at|for|with|by|from|into|that|which|who|"
    r"whose|when|where|if|than|as|is|are|was|were|be|your|our|their|its|my)\W*$",
    re.IGNORECASE,
)
# A list item with no verb of its own: "Running `x` to …", "With one of: …".
_VERBLESS_ITEM = re.compile(
    r"^(?:[A-Za-z]+ing|with|without|such as|e\.g\.)\b(?![^,;]*\b(?:is|are|"
    r"was|were|has|have|does|do|can|will|must|should|needs?|requires?|takes?|makes?|"
    r"runs?|uses?)\b)",
    re.IGNORECASE,
)
# A step of the task at hand, not a way of working: "Create a new function to …".
_TASK_STEP = re.compile(
    r"^(?:create|implement|write|refactor|modify|rewrite|design|build out|add support)\s+"
    r"(?:a|an|the|new|some)\b",
    re.IGNORECASE,
)
# How to do something: an imperative, "to X, run Y", "you can run …", "X: `cmd`".
_HOW_TO = re.compile(
    r"^(?:run|use|install|reinstall|execute|invoke|call|start|restart|build|test|lint|format|"
    r"deploy|launch|upgrade|update|set|export|source|activate|pass|add|prefix|pipe|"
    r"open|serve|enable|disable|pin|clear|delete|remove|check|try)\b|"
    r"^to\s+\w+|"
    r"^(?:you|anyone|one|we|users?|developers?|people|everyone)\b[^.;]{0,80}?\b"
    r"(?:can|could|should|must|need to|needs to|have to|has to)\s+"
    r"(?:just\s+|simply\s+|now\s+|also\s+|then\s+|always\s+)?\w+|"
    r"\b(?:just|simply)\s+(?:run|use|type|call)\b|\bby running\b|"
    r"\b(?:run|use|try|type|call|execute|invoke)\s+`|"
    r"^(?!(?:all|the|a|an|this|that|each|every|both|it|its|our|your|their)\b)[a-z]+(?<!s)"
    r"(?:\s+\w+){0,3}\s+(?:with|using|via)\s+`|"
    r"`[^`]+`(?:\s+(?:flag|command|option))?\s*(?:[-–—:]\s*)?(?:to|in order to)\s+[a-z]|"
    r"^[\w .'-]{1,40}:\s*`[^`]+`\s*(?:$|[-–—(.]|\b(?:when|if|to|for|after|before)\b)",
    re.IGNORECASE,
)
# "For scripts, …", "If you prefer X, …": a condition before the sentence proper.
_LEAD_CONDITION = re.compile(
    r"^(?:for|when|whenever|if|before|after|once|in|on|during|to)\b[^,]{1,80},\s*",
    re.IGNORECASE,
)
_STANDING_RULE = re.compile(r"^(?:always|never|don'?t|do not|avoid)\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|possibly|probably|not sure|i wonder|i guess|i think|i believe|"
    r"i suppose|wondering|seems?|looks like|if possible|for now|for this|right now|"
    r"temporarily|at the moment|this time|if needed|if necessary|as needed)\b",
    re.IGNORECASE,
)
# Words that make a sentence lean on the conversation around it.
_DEICTIC = re.compile(
    r"\b(?:it|its|this|these|those|them|here|above|below|the same|that one|"
    r"the following)\b|\bthat[.,!;:]?$",
    re.IGNORECASE,
)
_THIS_PROJECT = re.compile(
    r"\b(?:this|our) (repo|repository|project|codebase|app|site|package|service)\b",
    re.IGNORECASE,
)
_SECRETISH = re.compile(
    r"\[redacted:|\b(?:password|passwd|secret|api[_ -]?key|token)\b\s*(?:is|=|:)", re.I
)

_CONDITION = r"(?:(?:when|whenever|before|after|in|for|on|with|if)\b[^,]{1,80},\s*)?"
_RULE = re.compile(
    rf"^{_CONDITION}(?:please\s+)?(?:you\s+(?:should|must)\s+|we\s+(?:should|must)\s+)?"
    r"(?P<word>always|never|don'?t|do not|avoid|stop)\b\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_RULE_NOISE = re.compile(
    r"^(?:don'?t|do not)\s+(?:worry|know|think|bother|mind|see|understand|remember|get|need|"
    r"have|want to|forget)\b|^stop\s+(?:here|there|now|it|that|this|the)\b|"
    r"^never\s+mind\b|^stop\s+what\b",
    re.IGNORECASE,
)
_I_PREFER = re.compile(
    r"^(?:i|we)\s+(?:really\s+|strongly\s+|generally\s+|usually\s+|much\s+|always\s+)?"
    r"(?:prefer|would prefer|'d prefer|would rather|'d rather|like to keep|"
    r"want you to (?:always|never)|(?:always|never) want|don'?t want you to|do not want you to|"
    r"don'?t like|do not like|hate it when|love using|like using|"
    r"always|never|usually)\b\s+\S",
    re.IGNORECASE,
)
_USE_INSTEAD = re.compile(
    r"^(?:please\s+)?(?:use|prefer|pick|choose)\s+(?P<x>.{1,60}?)\s+"
    r"(?:instead of|rather than|over|not)\s+(?P<y>.{1,60})$",
    re.IGNORECASE,
)
_PLEASE_USE = re.compile(r"^please\s+(?:use|stick to|stick with)\s+\S", re.IGNORECASE)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?P<kw>remember|note|keep in mind|fyi|for future reference|for the record|"
    r"important)\b\s*(?P<sep>that\b|to\b|:|,|-)?\s*(?P<body>\S.*)$",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"^(?:let'?s|let us)\s+(?:also\s+|just\s+|now\s+)?"
    r"(?P<verb>go with|go for|use|switch to|migrate to|move to|stick with|stick to|adopt|"
    r"standardi[sz]e on|settle on|target|drop|do)\b\s*(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_DECIDED = re.compile(
    r"^(?:we|i)\s+(?:have\s+|'ve\s+)?decided\s+(?:to\s+|on\s+|that\s+)?(?P<rest>\S.*)$|"
    r"^(?:we're|we are|we'll|we will|i'm|i am)\s+going\s+(?:with|for)\s+(?P<rest2>\S.*)$|"
    r"^decision:\s*(?P<rest3>\S.*)$",
    re.IGNORECASE,
)
_WE_USE = re.compile(
    r"^(?:we|i)\s+(?:use|are using|'re using|'m using|am using|rely on|deploy (?:to|on|with)|"
    r"host (?:on|with|it on)|develop on|build with|support)\b\s+\S|"
    r"^(?:the|our)\s+(?:[\w.-]+\s+)?(?:project|repo|app|codebase|site|website|backend|frontend|api|service)\s+"
    r"(?:uses|is built with|is written in|runs on|is deployed (?:to|on)|is hosted on|targets)\b",
    re.IGNORECASE,
)
_ASSISTANT_TRANSIENT = re.compile(
    r"^(?:let me|let's|i'll|i will|i need|i'm|i am|i've|i have|i can|i should|i see|i found|"
    r"i notice|now i|now let|wait|first,? let|next,? (?:i|let)|looking|checking|"
    r"the (?:issue|problem|error) is|it seems|this (?:is|means|will)|you're right|"
    r"you are right|sure|great|perfect|excellent|done)\b",
    re.IGNORECASE,
)
_COMMAND_VERB = re.compile(
    r"\b(?:run|runs|running|use|using|install|installs|test|tests|build|builds|start|serve|"
    r"deploy|launch|execute|lint|format|upgrade|reinstall|invoke|with)\b",
    re.IGNORECASE,
)
# Status reports, not procedures: "`ruff check` passes with no issues".
_STATUS = re.compile(
    r"\b(?:passes|passed|passing|succeeded|succeeds|no issues|no errors|all good|fixed|"
    r"is failing|fails|failed)\b",
    re.IGNORECASE,
)
_RUN_COMMAND = re.compile(r"\brun\s+`[^`]+`", re.IGNORECASE)
_KNOWN_CLIS = frozenset(
    """npm npx pnpm yarn bun bunx deno node pip pip3 pipx uv uvx poetry pdm hatch python
    python3 pytest tox nox ruff black isort mypy pyright make cmake cargo rustup go docker
    docker-compose podman kubectl helm terraform git gh brew apt apt-get mvn gradle ./gradlew
    bundle rake rails rspec just act vite next tsc eslint prettier jest vitest playwright
    composer php dotnet swift xcodebuild flutter dart mix sbt ansible vercel netlify fly
    flyctl heroku supabase prisma alembic django-admin ./manage.py manage.py claude bash sh
    pre-commit nix""".split()  # noqa: SIM905
)


@dataclass
class _Candidate:
    priority: int
    line: int
    type: str
    content: str


def _project_name(project: Any) -> str:
    if not isinstance(project, str) or not project.strip():
        return ""
    text = project.strip().rstrip("/\\")
    path = PureWindowsPath(text) if "\\" in text else PurePosixPath(text)
    return path.name or text


def _trim(text: str, limit: int = MAX_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _finish(text: str) -> str:
    text = re.sub(r"[^\w.!?…)`\"']+$", "", text.strip())
    if text and text[-1] not in ".!…)`\"'":
        text += "."
    return text


def _lower_first(text: str) -> str:
    if re.match(r"I\b", text):
        return text
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def _commands(sentence: str) -> list[str]:
    """Backticked spans that look like shell commands: a known CLI, a ``./script``, or
    anything the sentence says to ``run``."""
    out = []
    for match in _INLINE_CODE.finditer(sentence):
        cmd = match.group(0).strip("`").strip()
        words = cmd.split()
        first = words[0] if words else ""
        after_run = re.search(r"\brun\s+$", sentence[: match.start()], re.IGNORECASE)
        if first in _KNOWN_CLIS or re.match(r"\./\w", first) or (after_run and first):
            out.append(cmd)
    return out


def _user_candidate(s: str, line: int, name: str) -> _Candidate | None:
    where = f" for {name}" if name else ""
    remember = _REMEMBER.match(s)
    if remember and (remember.group("sep") or remember.group("kw").lower() == "remember"):
        body = remember.group("body").strip()
        if _DEICTIC.search(body) or len(body.split()) < 3:
            return None
        if remember.group("sep") == "to" or _RULE.match(body) or _I_PREFER.match(body):
            return _Candidate(0, line, "preference", f"User rule: {_finish(body)}")
        return _Candidate(0, line, "fact", f"User note{where}: {_finish(body)}")
    if _HEDGE.search(s):
        return None
    rule = _RULE.match(s)
    if rule and not _RULE_NOISE.match(rule.group(0)[rule.start("word") :]):
        if _DEICTIC.search(s) or _LEANS_BACK.search(s) or len(s.split()) < 4:
            return None
        return _Candidate(1, line, "preference", f"User rule: {_finish(_lower_first(s))}")
    if _I_PREFER.match(s) or _USE_INSTEAD.match(s) or _PLEASE_USE.match(s):
        if _DEICTIC.search(s) or len(s.split()) < 3:
            return None
        return _Candidate(1, line, "preference", f"User preference: {_finish(_lower_first(s))}")
    decision = _DECISION.match(s)
    if decision:
        verb, rest = decision.group("verb").lower(), decision.group("rest").strip()
        if _DEICTIC.search(rest) or (verb == "do" and len(rest.split()) > 4):
            return None
        if verb == "do":  # "let's do vite"
            verb = "go with"
        return _Candidate(2, line, "fact", f"Decision{where}: {_finish(f'{verb} {rest}')}")
    decided = _DECIDED.match(s)
    if decided:
        rest = next(g for g in decided.group("rest", "rest2", "rest3") if g)
        if _DEICTIC.search(rest):
            return None
        return _Candidate(2, line, "fact", f"Decision{where}: {_finish(rest)}")
    if _WE_USE.match(s):
        if _DEICTIC.search(s) or len(s.split()) < 3:
            return None
        return _Candidate(
            3, line, "fact", f"In {name or 'the project'}: {_finish(_lower_first(s))}"
        )
    return None


def _procedure_candidate(s: str, line: int, role: str, name: str) -> _Candidate | None:
    """A sentence with a working command: a procedure if it says how to do something,
    else a fact (what a tool is, has or can do)."""
    if not _commands(s) or s.endswith(":") or _HEDGE.search(s) or _STATUS.search(s):
        return None
    if role == "assistant" and (_ASSISTANT_TRANSIENT.match(s) or _DONE_REPORT.match(s)):
        return None
    if (
        _VERBLESS_ITEM.match(_INLINE_CODE.sub("code", s))
        or _TASK_STEP.match(s)
        or _POINTS_AWAY.search(s)
    ):
        return None
    if not (_RUN_COMMAND.search(s) or _COMMAND_VERB.search(_INLINE_CODE.sub(" ", s))):
        return None
    # Context words after the command usually refer to it ("... and it runs on push").
    before = s[: s.index("`")]
    if _DEICTIC.search(before) or len(s.split()) < 4:
        return None
    body = s[0].upper() + s[1:]
    plain = s.strip("\"'“”")
    if _STANDING_RULE.match(plain):
        kind = "preference"
    elif _HOW_TO.search(plain) or _HOW_TO.search(_LEAD_CONDITION.sub("", plain)):
        kind = "procedure"
    else:
        kind = "fact"
    return _Candidate(4, line, kind, f"In {name or 'the project'}: {_finish(body)}")


def _unbalanced(text: str) -> bool:
    bare = _INLINE_CODE.sub("", text)
    return any(bare.count(a) != bare.count(b) for a, b in ("()", "[]", "{}"))


def _not_latin(text: str) -> bool:
    """Mostly letters of a non-Latin script: these rules are rules of English."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(ord(ch) > 0x2FF for ch in letters) > 0.3 * max(len(letters), 1)


def _not_a_memory(sentence: str) -> bool:
    """Questions, headings, narration, fragments and secrets, whoever wrote them."""
    bare = _INLINE_CODE.sub("", sentence)
    return bool(
        _not_latin(bare)
        or "?" in re.sub(r"https?://\S+", "", bare)
        or sentence.rstrip().endswith(":")
        or _SECRETISH.search(sentence)
        or _HEADING.match(sentence)
        or _TITLE_LABEL.match(sentence)
        or _NARRATION.match(sentence)
        or _unbalanced(sentence)
        or _CUT_OFF.search(_INLINE_CODE.sub("code", sentence).rstrip(" .!…"))
    )


def _candidates(payload: dict[str, Any]) -> Iterator[_Candidate]:
    session = payload.get("session") if isinstance(payload.get("session"), dict) else {}
    name = _project_name(session.get("project"))
    this_project = f"the {name} " if name else "the "
    for item in payload.get("lines") or []:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        line, role = item.get("line"), item.get("role")
        if not isinstance(line, int) or role not in ("user", "assistant"):
            continue
        for sentence in _sentences(item["text"]):
            if _not_a_memory(sentence):
                continue
            s = _FILLER.sub("", sentence).strip()
            if not s or _QUESTION_START.match(s) or _not_a_memory(s):
                continue
            s = _THIS_PROJECT.sub(lambda m: this_project + m.group(1), s)
            found = _user_candidate(s, line, name) if role == "user" else None
            if found is None:
                found = _procedure_candidate(s, line, role, name)
            if found is not None:
                found.content = _trim(found.content)
                yield found


def _key(text: str) -> str:
    body = text.split(": ", 1)[-1]
    return " ".join(re.findall(r"[a-z0-9]+", body.lower()))


def extract_memories(
    payload: dict[str, Any], *, max_items: int = MAX_ITEMS
) -> list[dict[str, Any]]:
    """The ``memloom_distill`` reply items for one chunk payload."""
    seen: set[str] = set()
    unique: list[_Candidate] = []
    for cand in _candidates(payload):
        key = _key(cand.content)
        if key and key not in seen:
            seen.add(key)
            unique.append(cand)
    chosen = sorted(unique, key=lambda c: (c.priority, c.line))[:max_items]
    chosen.sort(key=lambda c: c.line)
    return [{"type": c.type, "content": c.content, "lines": [c.line, c.line]} for c in chosen]


# ------------------------------------------------------------------- classify

_NEGATION = re.compile(r"\b(?:not|no|never|don'?t|doesn'?t|isn'?t|aren'?t|without|avoid)\b", re.I)
_WORD = re.compile(r"[a-z0-9][a-z0-9._+-]*")
_STOP = frozenset(
    """a an the to of and or in on for with is are be it this that we i user rule preference
    note decision do does did""".split()  # noqa: SIM905
)


def _words(text: str) -> set[str]:
    """Content words, crudely stemmed, without negations (polarity is compared apart)."""
    words = set()
    for word in _WORD.findall(_NEGATION.sub(" ", text.lower())):
        if word in _STOP:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words


def classify_offline(new_text: str, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Labels by word overlap: same words and polarity = identical, close words with
    opposite polarity = contradictory, anything else = complementary."""
    new_words, new_neg = _words(new_text), bool(_NEGATION.search(new_text))
    labels = []
    for cand in candidates:
        text = str(cand.get("text", ""))
        words, neg = _words(text), bool(_NEGATION.search(text))
        union = new_words | words
        overlap = len(new_words & words) / len(union) if union else 1.0
        if overlap >= 0.9 and neg == new_neg:
            label, reason = "identical", "offline rule: same words"
        elif overlap >= 0.5 and neg != new_neg:
            label, reason = "contradictory", "offline rule: similar words, opposite polarity"
        else:
            label, reason = "complementary", "offline rule: different or extra words"
        labels.append({"index": cand.get("index"), "label": label, "reason": reason})
    return labels


class OfflineLLM(BaseLLM):
    """The rule-based stand-in for an LLM; see the module docstring."""

    def __init__(self, *, description: str | None = None, max_items: int = MAX_ITEMS) -> None:
        super().__init__()
        self.name = "offline"
        self.model = None
        self.offline = True
        self.max_items = max_items
        self.description = description or OFFLINE_DESCRIPTION

    def complete(
        self, task: str, system: str, payload: dict[str, Any], schema: dict[str, Any]
    ) -> dict[str, Any]:
        self._count_call(task, len(system) + len(json.dumps(payload, ensure_ascii=False)))
        if task == DISTILL:
            return {"memories": extract_memories(payload, max_items=self.max_items)}
        if task == CLASSIFY:
            candidates = [c for c in payload.get("candidates") or [] if isinstance(c, dict)]
            new = payload.get("new") if isinstance(payload.get("new"), dict) else {}
            return {"labels": classify_offline(str(new.get("text", "")), candidates)}
        if task == JUDGE:
            return {"verdict": "unsure", "index": None, "reason": "offline: no LLM to judge"}
        self._count_failure(task)
        raise LLMError(f"the offline extractor does not know the task {task!r}")
