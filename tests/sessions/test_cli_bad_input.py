"""An agent's CLI that misbehaves as the distiller: garbage on stdout, a hang past the
timeout, an exit with no output. Each ends the import with one clear line; the session
it was on stays undone, what came before it is kept, and the next run distils only
what is left: no memory, and no provenance row, is written twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memloom
from memloom.llm.gemini_cli import GeminiCLIProvider
from tests.llm.cli_fake import FakeCLI
from tests.sessions.test_importer import session_path, write_session

#: The fake answers each call with a memory of what its session asks to remember, as
#: Gemini prints it (its JSON output, the reply in ``response``).
ANSWER_HOOK = r"""
import re as _re
_facts = _re.findall(r"REMEMBER: ([^\"\\]+)", stdin)
_reply = {"memories": [{"type": "fact", "content": f"{f}.", "lines": [1, 1]}
                       for f in dict.fromkeys(_facts)]}
_out = json.dumps({"session_id": "s", "response": json.dumps(_reply), "stats": {}})
open(os.environ["FAKE_CLI_STDOUT"], "w", encoding="utf-8").write(_out)
"""


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCLI:
    cli = FakeCLI(tmp_path, monkeypatch, "gemini", "gemini")
    cli.print(code=0, hook=ANSWER_HOOK)
    return cli


def provider(fake: FakeCLI, timeout: float = 20) -> GeminiCLIProvider:
    return GeminiCLIProvider(executable=str(fake.exe), timeout=timeout, sleep=lambda s: None)


def sessions(tmp_path: Path) -> list[Path]:
    root = tmp_path / "claude"
    return [
        write_session(
            session_path(root, "-home-dev-acme", f"0000000{i}-0000-4000-8000-000000000000"),
            [("user", f"REMEMBER: {fact}"), ("assistant", "Noted.")],
        )
        for i, fact in enumerate(FACTS, start=1)
    ]


FACTS = ("the API listens on port 8081", "release tags are signed by the CI bot on Fridays")


def kept(m: memloom.Memloom) -> dict[str, int]:
    """Each active memory's text, and how many provenance rows it has."""
    return {
        mem.text: len(m.backend.provenance([mem.id])) for mem in m.list({"limit": 100}).memories
    }


@pytest.mark.parametrize(
    ("how", "env", "timeout", "says"),
    [
        ("garbage", {"stdout": "Segmentation fault\n"}, 20, "gave no answer"),
        ("hang", {"sleep": "30"}, 1.5, "no answer within 1.5 s; it was stopped"),
        ("no output", {"stdout": "", "exit": "3"}, 20, "exit code 3, no answer"),
    ],
)
def test_a_misbehaving_cli_stops_the_run_and_the_next_run_finishes_it(
    fake: FakeCLI, tmp_path: Path, how: str, env: dict[str, str], timeout: float, says: str
) -> None:
    first, second = sessions(tmp_path)
    with memloom.open(home=str(tmp_path / "home")) as m:
        llm = provider(fake, timeout)
        done = m.import_sessions([first], llm=llm)
        assert done.saved == 1 and not done.stopped
        # The CLI goes wrong on the next session: one clear line, the run stops.
        fake.print(
            stdout=env.get("stdout", ""),
            code=int(env.get("exit", "0")),
            sleep=env.get("sleep", "0"),
            hook="pass",  # the stored output as it is: no answer made from the prompt
        )
        bad = m.import_sessions([first, second], llm=llm)
        assert bad.stopped and says in bad.stopped and "\n" not in bad.stopped, bad.stopped
        assert "Gemini CLI" in bad.stopped
        row = m.backend.ledger_get_many([str(second)]).get(str(second))
        assert row is None or row.status != "complete"
        first_fact = "the API listens on port 8081."
        assert kept(m) == {first_fact: 1}  # what came before is kept, nothing of the second
        # Fixed: the next run distils the second session only; nothing is written twice.
        fake.print(code=0, sleep="0", hook=ANSWER_HOOK)
        calls = len(fake.calls())
        again = m.import_sessions([first, second], llm=llm)
        assert not again.stopped and again.saved == 1
        assert len(fake.calls()) == calls + 1
        assert kept(m) == {first_fact: 1, "release tags are signed by the CI bot on Fridays.": 1}
        doc = json.loads(fake.calls()[-1]["stdin"].split("Task input (JSON):\n", 1)[1])
        assert doc["lines"][0]["text"] == f"REMEMBER: {FACTS[1]}"
