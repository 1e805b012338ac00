"""A scripted model behind the real OpenAI-compatible chat protocol.

The rules are simple and deterministic so tests can predict every memory:

* ``memloom_distill``: one memory per user line that contains ``REMEMBER:``; the
  text after the marker is the content, ``[line, line]`` its range, and the type
  is ``preference`` when the content says "prefer", else ``fact``. With
  ``through_reply``, the range runs on to the last line of the replies that follow the
  line (before the next user line): a memory drawn from a whole turn.
* ``memloom_classify``: a candidate whose text equals the new text ignoring case
  and punctuation is ``identical``; one sharing at least half its words where
  exactly one of the two is negated is ``contradictory``; else ``complementary``.
* ``memloom_judge``: whatever ``verdict`` is set to.

``fail_on`` makes the n-th distill call answer with a status code instead;
``broke_after`` = n makes every call after the n-th distill call answer 402 (the
account's credits ran out: the classifier's and judge's calls too).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.openai_server import ScriptedOpenAI

NEGATIONS = {"not", "never", "no", "don't", "doesn't", "isn't"}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def classify_labels(payload: dict[str, Any]) -> dict[str, Any]:
    """The scripted classifier: same words → identical; one side negated and half
    the words shared → contradictory; else complementary."""
    new = _words(payload["new"]["text"])
    labels = []
    for cand in payload["candidates"]:
        other = _words(cand["text"])
        shared = len(set(new) & set(other)) / max(1, len(set(new) | set(other)))
        negated = any(w in NEGATIONS for w in new) != any(w in NEGATIONS for w in other)
        if other == new:
            label = "identical"
        elif negated and shared >= 0.5:
            label = "contradictory"
        else:
            label = "complementary"
        labels.append({"index": cand["index"], "label": label, "reason": f"scripted {label}"})
    return {"labels": labels}


@dataclass
class ScriptedModel:
    verdict: str = "unsure"
    fail_on: dict[int, int] = field(default_factory=dict)  # distill call number -> status
    distill_calls: int = 0
    broke_after: int | None = None
    through_reply: bool = False
    payloads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    server: ScriptedOpenAI = field(init=False)

    def __post_init__(self) -> None:
        self.server = ScriptedOpenAI(dim=64, chat=self._chat)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def close(self) -> None:
        self.server.close()

    def bodies(self) -> list[str]:
        """Every request body the server received, as raw JSON text."""
        return [json.dumps(body) for _, body in self.server.requests]

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        task = body["response_format"]["json_schema"]["name"]
        payload = json.loads(body["messages"][1]["content"])
        self.payloads.setdefault(task, []).append(payload)
        if self.broke_after is not None and self.distill_calls >= self.broke_after:
            return 402, {"error": {"message": "scripted 402: out of credits"}}
        if task == "memloom_distill":
            self.distill_calls += 1
            status = self.fail_on.get(self.distill_calls)
            if status:
                return status, {"error": {"message": f"scripted {status}"}}
            reply = self._distill(payload, self.through_reply)
        elif task == "memloom_classify":
            reply = self._classify(payload)
        else:
            reply = {"verdict": self.verdict, "index": 0, "reason": "scripted judge"}
        return 200, {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": json.dumps(reply)}}
            ],
            "usage": {
                "prompt_tokens": len(body["messages"][1]["content"]) // 4,
                "completion_tokens": 20,
            },
        }

    @staticmethod
    def _distill(payload: dict[str, Any], through_reply: bool = False) -> dict[str, Any]:
        memories = []
        lines = payload["lines"]
        for i, line in enumerate(lines):
            if line["role"] != "user" or "REMEMBER:" not in line["text"]:
                continue
            content = line["text"].split("REMEMBER:", 1)[1].strip()
            kind = "preference" if "prefer" in content.lower() else "fact"
            end = line["line"]
            for later in lines[i + 1 :] if through_reply else ():
                if later["role"] == "user":
                    break
                end = later["line"]
            memories.append({"type": kind, "content": content, "lines": [line["line"], end]})
        return {"memories": memories}

    @staticmethod
    def _classify(payload: dict[str, Any]) -> dict[str, Any]:
        return classify_labels(payload)
