"""The web viewer in real headless Chromium against a live, API-seeded ``memloom serve``."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.server.conftest import Daemon, start_daemon, stop
from tests.viewer import seed as data

expect.set_options(timeout=10_000)

SESSION_FILE = "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Daemon, dict[str, Any]]]:
    base = tmp_path_factory.mktemp("viewer")
    daemon = start_daemon(base / "home", base / "claude")
    try:
        with daemon.client() as client:
            ids = data.seed(client, daemon.claude)
        yield daemon, ids
    finally:
        stop(daemon)


@pytest.fixture(scope="module")
def api(served) -> Iterator[httpx.Client]:
    with served[0].client() as client:
        yield client


@pytest.fixture
def page(served, make_page) -> Any:
    """The viewer opened as `memloom ui` opens it: the token in the link's #fragment,
    which the page keeps for the tab and drops from the address."""
    daemon = served[0]
    page = make_page(daemon.url)
    page.goto(f"/#token={daemon.token}")
    expect(page).to_have_url(re.compile(r"/#/memories$"))
    return page


def row_of(page: Any, memory_id: str) -> Any:
    return page.locator(f'.mem-row[data-id="{memory_id}"]')


# ---------------------------------------------------------------- memories list


def test_page_is_locked_down_by_csp(page):
    page.goto("/")
    csp = page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    for rule in ("default-src", "script-src", "style-src", "connect-src"):
        assert f"{rule} 'self'" in csp
    expect(page).to_have_url(re.compile(r"#/memories$"))
    expect(page.locator("nav.nav")).to_contain_text("Memories")
    expect(page.locator("#conflict-count")).to_have_text(re.compile(r"^[1-9]\d*$"))


def test_search_finds_the_memory_first(page):
    page.goto("/#/memories")
    expect(page.locator("#total")).to_contain_text("memories")
    page.locator("#search").fill("how do I run the tests")
    expect(page.locator("#result-summary")).to_contain_text("for “how do I run the tests”")
    expect(page.locator(".mem-row").first).to_contain_text("Run the tests with: make check")
    expect(page.locator(".mem-row").first).to_contain_text("% match")
    expect(page.locator("#sort")).to_have_value("relevance")
    assert "q=how" in page.url  # the search is in the address, so it can be shared


def test_list_filters_by_type_and_pages_with_next_and_previous(page):
    page.goto(f"/#/memories?limit=2&project={data.PROJECT}")
    page.locator("#filter-type").select_option("procedure")
    expect(page.locator("#total")).to_have_text("5 memories")
    rows = page.locator(".mem-row")
    expect(rows).to_have_count(2)
    seen: list[list[str]] = []
    for number in (1, 2, 3):
        expect(page.locator("#page-no")).to_have_text(f"Page {number}")
        expect(rows).to_have_count(2 if number < 3 else 1)
        assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.type)")) == {"procedure"}
        seen.append(rows.locator(".mem-text").all_inner_texts())
        if number < 3:
            page.locator("#next-page").click()
    expect(page.locator("#next-page")).to_be_disabled()
    flat = [t for texts in seen for t in texts]
    assert sorted(flat) == sorted(data.PROCEDURES)  # every one exactly once across the pages
    page.locator("#prev-page").click()
    expect(page.locator("#page-no")).to_have_text("Page 2")
    expect(rows.locator(".mem-text")).to_have_text(seen[1])
    page.locator("#prev-page").click()
    expect(page.locator("#page-no")).to_have_text("Page 1")
    expect(rows.locator(".mem-text")).to_have_text(seen[0])
    expect(page.locator("#prev-page")).to_be_disabled()
    # Another filter narrows further, and "All types" brings the rest back.
    page.get_by_label("Tag").fill("testing")
    page.get_by_label("Tag").press("Enter")
    expect(page.locator("#total")).to_have_text("0 memories")
    expect(page.locator(".empty")).to_contain_text("Nothing matches these filters")
    page.locator("#filter-type").select_option("")
    expect(rows.first).to_be_visible()
    assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.type)")) == {"preference", "episode"}


def test_credential_is_masked_in_the_list_until_clicked(page, served):
    _, ids = served
    page.goto("/#/memories?limit=100")
    row = row_of(page, ids["credential"])
    expect(row).to_contain_text("•••• credential — click to reveal")
    expect(row.locator(".badge.sens-3")).to_have_text("credential")
    assert data.CREDENTIAL not in page.locator("main").inner_text()
    row.get_by_role("button", name=re.compile("click to reveal")).click()
    expect(row_of(page, ids["credential"])).to_contain_text(data.CREDENTIAL)
    expect(page).to_have_url(re.compile(r"#/memories"))  # revealing does not open the detail
    # Searching for it shows it masked as well.
    page.locator("#search").fill("staging database password")
    expect(page.locator("#result-summary")).to_contain_text("staging database password")
    expect(row_of(page, ids["credential"])).to_be_visible()


def test_each_row_names_its_agent_and_the_source_filter_narrows_to_it(page, served):
    _, ids = served
    page.goto("/#/memories?limit=100")
    codex_row = row_of(page, ids["codex"])
    expect(codex_row.locator(".meta-link.source")).to_have_text("codex")
    chip = page.locator(".meta-link.source", has_text="claude-code")
    imported = page.locator(".mem-row", has=chip)
    expect(imported.first).to_be_visible()
    # The Source menu offers every agent the store holds, with its count. It is filled
    # from /v1/memory/stats, which may answer after the rows show: wait for it.
    options = page.locator("#filter-source option")
    expect(options.filter(has_text=re.compile(r"^codex \(1\)"))).not_to_have_count(0)
    expect(options.filter(has_text=re.compile(r"^claude-code \("))).not_to_have_count(0)
    codex_row.locator(".meta-link.source").click()
    expect(page).to_have_url(re.compile(r"source=codex"))
    expect(page.locator("#filter-source")).to_have_value("codex")
    rows = page.locator(".mem-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(data.CODEX_FACT)
    page.locator("#filter-source").select_option("claude-code")
    expect(page).to_have_url(re.compile(r"source=claude-code"))
    # Wait for the new list (the codex row is replaced all at once), then read it.
    expect(rows.locator(".meta-link.source").first).to_have_text("claude-code")
    expect(page.locator(".mem-row", has_text=data.CODEX_FACT)).to_have_count(0)
    sources = rows.locator(".meta-link.source").all_inner_texts()
    assert sources and set(sources) == {"claude-code"}, sources


# ---------------------------------------------------------------- detail


def test_detail_shows_provenance_with_the_cited_transcript_lines(page, api):
    listed = api.get("/v1/memories", params={"source": "claude-code", "limit": 100}).json()
    docs = [api.get(f"/v1/memories/{m['id']}").json() for m in listed["memories"]]
    doc = next(d for d in docs if d["provenance"])
    prov = doc["provenance"][0]
    context = api.get(f"/v1/memories/{doc['id']}/context", params={"around": 5}).json()
    cited = [line for line in context["provenance"][0]["lines"] if line["cited"]]
    assert cited and len(context["provenance"][0]["lines"]) > len(cited)

    page.goto(f"/#/memory/{doc['id']}")
    expect(page.locator("#memory-text")).to_have_text(doc["text"])
    section = page.locator("#provenance")
    expect(section).to_contain_text(SESSION_FILE)
    start, end = prov["start_line"], prov["end_line"]
    expect(section.locator(".prov-lines")).to_have_text(
        f"line {start}" if start == end else f"lines {start}–{end}"
    )
    expect(section).to_contain_text(prov["session_id"])
    assert prov["agent"] == "claude-code"
    expect(section.locator(".prov-agent")).to_have_text("claude-code")
    expect(section.locator(".excerpt")).to_have_text(prov["excerpt"])
    lines = section.locator(".t-line")
    expect(lines).to_have_count(len(context["provenance"][0]["lines"]))
    highlighted = section.locator(".t-line.cited")
    expect(highlighted).to_have_count(len(cited))
    expect(highlighted.first).to_contain_text(cited[0]["text"][:60])
    expect(highlighted.first).to_contain_text("cited")
    background = highlighted.first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
    expect(section.locator(".t-line:not(.cited)").first).to_be_visible()
    # Metadata table, type and sensitivity.
    expect(page.locator("#metadata table")).to_contain_text("session_id")
    expect(page.locator(".flags")).to_contain_text(doc["type"])

    # The session file goes away: the page says so instead of showing lines.
    path = prov["path"]
    moved = path + ".moved"
    os.rename(path, moved)
    try:
        page.reload()
        expect(section.locator(".gone")).to_have_text(re.compile("transcript no longer available"))
        expect(section).to_contain_text(SESSION_FILE)
    finally:
        os.rename(moved, path)


def test_edit_makes_version_two_and_forget_asks_first(page, api, served):
    _, ids = served
    first = ids["preferences"][0]
    page.goto(f"/#/memory/{first}")
    expect(page.locator("#history .version")).to_have_count(1)

    page.locator("#action-edit").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Edit memory")
    dialog.locator("textarea").fill("Prefer ruff over flake8 and black")
    dialog.get_by_role("button", name="Save new version").click()
    expect(dialog).to_have_count(0)
    expect(page.locator("#memory-text")).to_have_text("Prefer ruff over flake8 and black")
    new_id = page.url.rsplit("/", 1)[1]
    assert new_id != first
    history = page.locator("#history")
    expect(history.locator(".version")).to_have_count(2)
    expect(history.locator('.version[data-version="2"]')).to_contain_text("viewing")
    expect(history.locator('.version[data-version="1"]')).to_contain_text("stale")
    expect(page.locator(".flags")).to_contain_text("version 2")

    # The old version points forward.
    history.locator('.version[data-version="1"] a').click()
    expect(page.locator("#superseded")).to_contain_text(new_id)
    page.locator("#superseded a").click()
    expect(page.locator("#memory-text")).to_have_text("Prefer ruff over flake8 and black")

    # Pin, confirmed in our own dialog.
    page.locator("#action-pin").click()
    page.get_by_role("dialog").get_by_role("button", name="Pin", exact=True).click()
    expect(page.locator(".flags")).to_contain_text("pinned")
    assert api.get(f"/v1/memories/{new_id}").json()["pinned"] is True

    # Forget: cancelling keeps it; confirming deletes it and returns to the list.
    page.locator("#action-forget").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert api.get(f"/v1/memories/{new_id}").status_code == 200
    page.locator("#action-forget").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("cannot be undone")
    dialog.get_by_role("button", name="Forget").click()
    expect(page).to_have_url(re.compile(r"#/memories"))
    expect(page.locator("#total")).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("Prefer ruff over flake8 and black")
    assert api.get(f"/v1/memories/{new_id}").status_code == 404


def test_expire_from_the_detail_page(page, api, served):
    _, ids = served
    target = ids["facts"][1]
    page.goto(f"/#/memory/{target}")
    page.locator("#action-expire").click()
    page.get_by_role("dialog").get_by_role("button", name="Expire").click()
    expect(page.locator(".flags .status-expired")).to_be_visible()
    expect(page.locator("#action-expire")).to_be_disabled()
    assert api.get(f"/v1/memories/{target}").json()["status"] == "expired"


# ---------------------------------------------------------------- conflicts


def test_conflict_auto_then_keep_new_then_revert(page, api, served):
    _, ids = served
    cid = ids["conflict"]
    page.goto("/#/conflicts")
    card = page.locator(f'.conflict[data-id="{cid}"]')
    expect(card.locator('[data-side="new"]')).to_contain_text(data.CONFLICT_NEW)
    expect(card.locator('[data-side="existing"]')).to_contain_text(data.CONFLICT_OLD)
    expect(card).to_contain_text(re.compile(r"distance 0\.\d{3}"))
    expect(card).to_contain_text("reason: distance band")

    # Auto: the offline judge streams its summary and says why nothing was resolved.
    page.locator("#auto-button").click()
    expect(page.locator("#auto-reason")).to_contain_text("offline judge is always unsure")
    expect(page.locator("#auto-summary")).to_contain_text("pending")
    assert page.locator(".progress-fill").first.evaluate("e => e.style.width") == "100%"
    expect(card).to_be_visible()

    card.locator('[data-action="keep_new"]').click()
    expect(card).to_have_count(0)
    doc = api.get(f"/v1/conflicts/{cid}").json()
    assert (doc["status"], doc["resolution"]) == ("resolved", "keep_new")
    assert doc["existing"]["status"] == "expired" and doc["new"]["status"] == "active"

    page.locator('.tab[data-tab="resolved"]').click()
    expect(card).to_contain_text("kept the new one")
    expect(card.locator('[data-side="new"]')).to_have_class(re.compile("winner"))
    card.locator('[data-action="revert"]').click()
    expect(card).to_have_count(0)
    doc = api.get(f"/v1/conflicts/{cid}").json()
    assert doc["status"] == "pending" and doc["resolution"] is None
    assert doc["existing"]["status"] == "active"

    page.locator('.tab[data-tab="pending"]').click()
    expect(card.locator('[data-action="keep_new"]')).to_be_visible()


def test_resolve_offers_undo_in_the_toast_then_revert_stays(page, api, served, problems):
    _, ids = served
    cid = ids["conflict"]
    page.clock.install()  # the toast's timer runs on a clock the test moves
    page.goto("/#/conflicts")
    card = page.locator(f'.conflict[data-id="{cid}"]')
    toast = page.locator("#toast")
    undo = toast.get_by_role("button", name="Undo")

    card.locator('[data-action="keep_existing"]').click()
    expect(card).to_have_count(0)
    expect(toast).to_contain_text("Resolved: kept the existing one")
    doc = api.get(f"/v1/conflicts/{cid}").json()
    assert (doc["status"], doc["resolution"]) == ("resolved", "keep_existing")
    assert doc["new"]["status"] == "expired"

    undo.click()
    expect(toast).to_contain_text("Reverted: the conflict is pending again")
    expect(undo).to_have_count(0)
    expect(card.locator('[data-action="keep_existing"]')).to_be_visible()  # back in the queue
    doc = api.get(f"/v1/conflicts/{cid}").json()
    assert (doc["status"], doc["resolution"]) == ("pending", None)
    assert doc["new"]["status"] == doc["existing"]["status"] == "active"

    # The offer lasts a few seconds; after that the Resolved tab's Revert is the way back.
    card.locator('[data-action="keep_both"]').click()
    expect(undo).to_be_visible()
    page.clock.run_for(7_000)
    expect(undo).to_be_visible()
    page.clock.run_for(2_000)
    expect(undo).to_have_count(0)
    expect(toast).not_to_have_class(re.compile(r"\bshow\b"))
    assert api.get(f"/v1/conflicts/{cid}").json()["status"] == "resolved"
    page.locator('.tab[data-tab="resolved"]').click()
    card.locator('[data-action="revert"]').click()
    expect(toast).to_contain_text("Reverted: the conflict is pending again")
    expect(card).to_have_count(0)
    assert api.get(f"/v1/conflicts/{cid}").json()["status"] == "pending"

    # An Undo that can no longer apply (reverted elsewhere meanwhile) says why.
    page.locator('.tab[data-tab="pending"]').click()
    card.locator('[data-action="keep_new"]').click()
    expect(undo).to_be_visible()
    assert api.post(f"/v1/conflicts/{cid}/revert", json={}).status_code == 200
    undo.click()
    expect(toast).to_have_class(re.compile(r"\bbad\b"))
    expect(toast).to_contain_text(f"Undo failed: conflict {cid} is not resolved")
    assert api.get(f"/v1/conflicts/{cid}").json()["status"] == "pending"
    problems.allowed = ("409",)  # the failed request, as the console reports it


def test_a_subject_swap_pair_shows_both_texts(page, api):
    """The same tool said of another component, stored as a Distill client stores it (its
    own vectors, 0.23 apart): the card shows each side's text, and keeping both settles
    it."""
    frontend = "The frontend uses pnpm for package management"
    backend = "The backend uses pnpm for package management"
    dim = api.get("/v1/memory/stats").json()["dimension"]

    def unit(deg: float) -> list[float]:
        v = [0.0] * dim
        v[0], v[1] = math.cos(math.radians(deg)), math.sin(math.radians(deg))
        return v

    for text, deg in ((frontend, 0), (backend, 40)):
        entry = {"text": text, "embedding": unit(deg), "project": "pnpm-lab"}
        res = api.post("/v1/memory/store", json={"entries": [entry]}).json()
    cid = res["conflicts"][0]["conflict_id"]
    page.goto("/#/conflicts")
    card = page.locator(f'.conflict[data-id="{cid}"]')
    expect(card.locator('[data-side="new"]')).to_contain_text(backend)
    expect(card.locator('[data-side="existing"]')).to_contain_text(frontend)
    card.locator('[data-action="keep_both"]').click()
    expect(card).to_have_count(0)
    assert api.get(f"/v1/conflicts/{cid}").json()["resolution"] == "keep_both"


def test_merge_prefills_both_texts(page, served):
    _, ids = served
    page.goto("/#/conflicts")
    card = page.locator(f'.conflict[data-id="{ids["conflict"]}"]')
    card.locator('[data-action="merge"]').click()
    area = card.locator("textarea.merge-text")
    expect(area).to_have_value(f"{data.CONFLICT_OLD}\n{data.CONFLICT_NEW}")
    card.get_by_role("button", name="Cancel").click()
    expect(area).to_be_hidden()


# ---------------------------------------------------------------- activity


def test_activity_shows_the_chart_and_import_counts(page, api):
    truth = api.get("/v1/activity").json()
    page.goto("/#/activity")
    chart = page.locator("svg#per-day-chart")
    expect(chart).to_be_visible()
    bars = chart.locator("rect.bar")
    assert bars.count() >= 1
    types = set(bars.evaluate_all("rs => rs.map(r => r.dataset.type)"))
    assert types <= {"fact", "preference", "episode", "procedure"} and len(types) >= 3
    counted = sum(int(c) for c in bars.evaluate_all("rs => rs.map(r => r.dataset.count)"))
    assert counted == sum(v for d in truth["per_day"] for k, v in d.items() if k != "day")
    expect(page.locator("#kpi-sessions .kpi-value")).to_have_text(str(truth["imports"]["sessions"]))
    expect(page.locator("#kpi-imported .kpi-value")).to_have_text(str(truth["imports"]["memories"]))
    expect(page.locator("#kpi-budget")).to_contain_text(f"/ {truth['budget']['cap']}")
    expect(page.locator("#llm")).to_contain_text("offline")
    expect(page.locator("#embedder")).to_have_text(truth["embedder"])
    expect(page.locator("#by-type")).to_contain_text("procedure")
    expect(page.locator("#recent-sessions")).to_contain_text(SESSION_FILE)


# ---------------------------------------------------------------- untrusted text


def test_html_in_memories_renders_as_text_and_runs_nothing(page, served):
    _, ids = served
    page.goto("/#/memories?project=xss-lab")
    expect(row_of(page, ids["xss_script"])).to_contain_text(data.XSS_SCRIPT)
    expect(row_of(page, ids["xss_img"])).to_contain_text(data.XSS_IMG)
    expect(row_of(page, ids["xss_script"])).to_contain_text(data.XSS_TAG)
    assert page.locator("main img, main script, main svg[onload]").count() == 0
    assert page.evaluate("window.__pwned") is None

    for key, text in (("xss_script", data.XSS_SCRIPT), ("xss_img", data.XSS_IMG)):
        page.goto(f"/#/memory/{ids[key]}")
        expect(page.locator("#memory-text")).to_have_text(text)
        expect(page.locator("#history")).to_contain_text(text)
        assert page.locator("main img, main script").count() == 0
        assert page.evaluate("window.__pwned") is None

    page.goto("/#/memories")
    page.locator("#search").fill("window pwned onerror script")
    expect(page.locator(".mem-row").first).to_be_visible()
    page.goto("/#/conflicts")
    expect(page.locator(".conflict").first).to_be_visible()
    assert page.locator("main img, main script").count() == 0
    assert page.evaluate("window.__pwned") is None


# ---------------------------------------------------------------- token mode


def test_token_mode_asks_for_the_token_then_works(tmp_path, make_page, problems):
    problems.allowed = ("401",)  # the first, unauthenticated calls
    daemon = start_daemon(
        tmp_path / "home", tmp_path / "claude", env={"MEMLOOM_API_TOKEN": "s3cret-token"}
    )
    try:
        with daemon.client("s3cret-token") as client:
            data.save(client, "Only token holders may read this", "fact", project="locked")
        page = make_page(daemon.url)
        page.goto("/")
        form = page.get_by_role("dialog", name="API token")
        expect(form).to_contain_text("This server needs an API token")
        form.get_by_label("API token").fill("wrong-token")
        form.get_by_role("button", name="Unlock").click()
        form = page.get_by_role("dialog", name="API token")
        expect(form).to_contain_text("That token was not accepted")
        form.get_by_label("API token").fill("s3cret-token")
        form.get_by_role("button", name="Unlock").click()
        expect(page.get_by_role("dialog")).to_have_count(0)
        expect(page.locator(".mem-row")).to_contain_text("Only token holders may read this")
        assert page.evaluate("sessionStorage.getItem('memloom.token')") == "s3cret-token"
        # Every page works with it; a reload keeps it for the tab.
        page.goto(f"{daemon.url}/#/activity")
        expect(page.locator("svg#per-day-chart rect.bar")).to_have_count(1)
        page.reload()
        expect(page.locator("#kpi-saved .kpi-value")).to_have_text("1")
        expect(page.get_by_role("dialog")).to_have_count(0)
    finally:
        stop(daemon)


def test_memloom_ui_opens_the_viewer_with_nothing_typed(tmp_path, make_page, problems):
    """`memloom ui` (the real command) hands the browser a link carrying the token in its
    #fragment: the viewer shows the memories with no token form, and the address bar
    keeps no token."""
    import subprocess
    import sys

    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n')
    browser.chmod(0o755)
    daemon = start_daemon(tmp_path / "home", tmp_path / "claude")
    try:
        with daemon.client() as client:
            data.save(client, "Opened from memloom ui with nothing typed", "fact", project="ui")
        env = {**os.environ, "MEMLOOM_HOME": str(daemon.home), "BROWSER": str(browser)}
        env.pop("MEMLOOM_API_TOKEN", None)
        res = subprocess.run(
            [sys.executable, "-m", "memloom.cli", "ui"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        link = opened.read_text()
        assert link == f"{daemon.url}/#token={daemon.token}"
        assert daemon.token not in res.stdout  # the terminal shows the link without it
        page = make_page(daemon.url)
        page.goto(link)
        expect(page.locator(".mem-row")).to_contain_text("Opened from memloom ui")
        expect(page.get_by_role("dialog")).to_have_count(0)
        expect(page).to_have_url(re.compile(r"/#/memories$"))
        assert daemon.token not in page.url
        assert page.evaluate("sessionStorage.getItem('memloom.token')") == daemon.token
    finally:
        stop(daemon)


def test_activity_lists_the_agents_own_memory_folders_read(tmp_path, make_page, problems):
    from memloom.agents.native import sanitized_key

    project = tmp_path / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    claude = tmp_path / "claude"
    memory = claude / "projects" / sanitized_key(str(project)) / "memory"
    memory.mkdir(parents=True)
    (memory / "ci.md").write_text(
        "---\nname: ci\ntype: project\n---\nThe shop CI runs on Buildkite.\n"
    )
    daemon = start_daemon(tmp_path / "home", claude)
    try:
        page = make_page(daemon.url)
        page.goto(f"{daemon.url}/#token={daemon.token}")
        page.goto(f"{daemon.url}/#/activity")
        expect(page.locator("#native-memory")).to_contain_text("None read yet")
        with daemon.client() as client:
            assert client.post("/v1/import/native", json={}).json()["added"] == 1
        page.reload()
        table = page.locator("#native-memory table")
        expect(table).to_contain_text("claude-code")
        expect(table).to_contain_text(str(memory))
        expect(table.locator("tbody tr td.num").first).to_have_text("1")
    finally:
        stop(daemon)


def test_detail_shows_the_code_a_memory_is_about(page, api):
    """Anchors given over HTTP are kept as data and shown as text: the file, the
    identifiers, where they came from; a memory without any says so."""
    anchored = data.save(
        api,
        "Retries are capped by MAX_RETRIES in the network layer",
        anchors=[{"path": "svc/net/retry.py", "symbols": ["MAX_RETRIES", "backoff_delay"]}],
    )
    plain = data.save(api, "The staging dashboards live in Grafana folder Ops")

    page.goto(f"/#/memory/{anchored['id']}")
    card = page.locator("#anchors")
    expect(card.locator(".anchor-path")).to_have_text("svc/net/retry.py")
    expect(card.locator(".anchor-symbols code")).to_have_text(["MAX_RETRIES", "backoff_delay"])
    expect(card.locator(".anchor-origin")).to_contain_text("named by the writer")
    expect(card.locator("h2")).to_contain_text("(1)")

    page.goto(f"/#/memory/{plain['id']}")
    expect(page.locator("#anchors")).to_contain_text("No files")


def test_an_anchor_named_with_html_renders_as_text(page, api):
    """A caller may name any relative path: one shaped like HTML is shown, never run."""
    path = 'x/<img src=x onerror="window.__pwned=3">.py'
    res = api.post(
        "/v1/memories",
        json={"text": "The hostile module is imported lazily", "anchors": [{"path": path}]},
    )
    assert res.status_code == 201, res.text
    page.goto(f"/#/memory/{res.json()['id']}")
    expect(page.locator("#anchors .anchor-path")).to_have_text(path)
    assert page.locator("main img, main script").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_code_changed_lists_stale_memories_of_a_folder_as_text(page, api, tmp_path):
    """#/changed asks GET /v1/stale for a folder: each memory whose code changed there,
    with why, as text (an identifier shaped like HTML included); a folder that is not
    the owner's checks nothing and says so."""
    from tests.test_anchors import git, make_repo

    repo = make_repo(tmp_path)
    hostile = 'svc/<img src=x onerror="window.__pwned=4">.py'
    (repo / hostile).write_text("LIMIT = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a file named like HTML")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", hostile)
    git(repo, "commit", "-qm", "gone")
    stale = data.save(
        api,
        "The retry policy reads its limit from the old module",
        project=str(repo),
        anchors=[{"path": hostile, "commit": head}],
    )
    data.save(
        api,
        "Settings come from the config module of the service",
        project=str(repo),
        anchors=[{"path": "svc/config.py", "symbols": ["load_settings"]}],
    )
    page.goto(f"/#/changed?folder={repo}")
    items = page.locator(".changed-list li")
    expect(items).to_have_count(1)
    expect(items.first.locator(".stale-reason")).to_have_text(
        f"May be out of date: file gone: {hostile}"
    )
    expect(items.first.locator("a")).to_have_attribute("href", f"#/memory/{stale['id']}")
    assert page.locator("main img, main script").count() == 0
    assert page.evaluate("window.__pwned") is None
    page.goto("/#/changed?folder=/etc")
    expect(page.locator("#changed-results")).to_contain_text("Nothing checked")
