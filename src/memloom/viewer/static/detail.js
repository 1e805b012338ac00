// #/memory/<id>: one memory with versions, provenance and transcript context, plus actions.

import { api } from "./api.js";
import { lastListHash } from "./memories.js";
import {
  absTime,
  clear,
  dialog,
  errorBox,
  fileName,
  h,
  icon,
  lineRange,
  projectLabel,
  sensitivityBadge,
  spinner,
  statusBadge,
  timeEl,
  toast,
  truncate,
  typeBadge,
} from "./dom.js";

export async function detailPage(main, ctx) {
  const id = ctx.match[1];
  clear(main, spinner("Loading memory…"));
  const docPromise = api(`/v1/memories/${encodeURIComponent(id)}`);
  const contextPromise = api(`/v1/memories/${encodeURIComponent(id)}/context`, {
    query: { around: 5 },
  }).catch((err) => ({ failed: err }));
  let doc;
  try {
    doc = await docPromise;
  } catch (err) {
    if (!ctx.alive()) return;
    clear(
      main,
      h(
        "section",
        { class: "page" },
        backLink(),
        err.status === 404
          ? h(
              "div",
              { class: "empty" },
              h("div", { class: "empty-title" }, "This memory does not exist (any more)"),
              h("p", {}, "It may have been forgotten. ", h("a", { href: "#/memories" }, "Back to the list")),
            )
          : errorBox(err),
      ),
    );
    return;
  }
  if (!ctx.alive()) return;
  const secret = doc.sensitivity >= 3;
  let shown = !secret;

  const textBlock = h("div", { class: "detail-text-wrap" });
  const originalBlock = h("div");
  const versionsList = h("ol", { class: "versions", reversed: true });
  const errorSlot = h("div", { class: "action-error" });
  const provenanceSlot = h("div", { class: "provenance-list" }, spinner("Loading provenance…"));

  function renderText() {
    if (!shown) {
      clear(
        textBlock,
        h(
          "button",
          {
            class: "reveal big",
            type: "button",
            onClick: () => {
              shown = true;
              renderText();
              renderVersions();
            },
          },
          "•••• credential — click to reveal",
        ),
      );
      clear(originalBlock);
      return;
    }
    clear(textBlock, h("div", { class: "detail-text", id: "memory-text" }, doc.text));
    if (doc.original_text && doc.original_text !== doc.text) {
      clear(
        originalBlock,
        h(
          "details",
          { class: "original", open: true },
          h(
            "summary",
            {},
            `Original text (decayed to level ${doc.decay_level}: the text above is a summary)`,
          ),
          h("div", { class: "detail-text original-text" }, doc.original_text),
        ),
      );
    } else if (doc.decay_level) {
      clear(originalBlock, h("p", { class: "muted" }, `Decay level ${doc.decay_level}.`));
    }
  }

  function renderVersions() {
    clear(
      versionsList,
      (doc.versions || []).map((v) =>
        h(
          "li",
          { class: ["version", v.id === doc.id && "current"], dataset: { version: v.version } },
          h(
            "a",
            { href: `#/memory/${encodeURIComponent(v.id)}`, class: "version-link" },
            h("span", { class: "version-no" }, `v${v.version}`),
            statusBadge(v.status),
            h("span", { class: "version-text" }, shown || !secret ? truncate(v.text, 140) : "••••"),
          ),
          h("span", { class: "version-time" }, timeEl(v.created_at)),
          v.id === doc.id ? h("span", { class: "badge here" }, "viewing") : null,
        ),
      ),
    );
  }

  async function act(label, fn) {
    clear(errorSlot);
    try {
      await fn();
    } catch (err) {
      clear(errorSlot, errorBox(err));
      toast(`${label} failed`, "bad");
    }
  }

  const actions = h(
    "div",
    { class: "actions", role: "toolbar", "aria-label": "Actions" },
    h(
      "button",
      {
        class: "btn",
        type: "button",
        id: "action-edit",
        disabled: doc.status !== "active",
        title: doc.status === "active" ? "Write a new version" : "Only the active version can be edited",
        onClick: async () => {
          const text = await dialog({
            title: "Edit memory",
            body: h(
              "p",
              { class: "muted" },
              `Saving writes version ${(doc.versions?.[0]?.version || doc.version) + 1}; this one becomes stale and points to it.`,
            ),
            textarea: doc.text,
            confirm: "Save new version",
          });
          if (text === null) return;
          await act("Edit", async () => {
            const res = await api(`/v1/memories/${encodeURIComponent(doc.id)}/update`, {
              method: "POST",
              body: { text },
            });
            toast(`Saved version ${res.version}`);
            location.hash = `#/memory/${encodeURIComponent(res.id)}`;
          });
        },
      },
      icon("edit"),
      "Edit",
    ),
    h(
      "button",
      {
        class: "btn",
        type: "button",
        id: "action-pin",
        onClick: async () => {
          const pin = !doc.pinned;
          const ok = await dialog({
            title: pin ? "Pin this memory?" : "Unpin this memory?",
            body: pin
              ? "A pinned memory never decays or gets summarized."
              : "It will decay like any other memory when it goes unused.",
            confirm: pin ? "Pin" : "Unpin",
          });
          if (!ok) return;
          await act(pin ? "Pin" : "Unpin", async () => {
            await api(`/v1/memories/${encodeURIComponent(doc.id)}/pin`, {
              method: "POST",
              body: { pinned: pin },
            });
            toast(pin ? "Pinned" : "Unpinned");
            rerender();
          });
        },
      },
      icon("pin"),
      doc.pinned ? "Unpin" : "Pin",
    ),
    doc.decay_level && doc.original_text
      ? h(
          "button",
          {
            class: "btn",
            type: "button",
            id: "action-restore",
            onClick: async () => {
              const ok = await dialog({
                title: "Restore the original text?",
                body: "The summary is replaced by the original text and the decay level resets.",
                confirm: "Restore",
              });
              if (!ok) return;
              await act("Restore", async () => {
                await api(`/v1/memories/${encodeURIComponent(doc.id)}/restore`, { method: "POST" });
                toast("Restored");
                rerender();
              });
            },
          },
          icon("restore"),
          "Restore original",
        )
      : null,
    h(
      "button",
      {
        class: "btn",
        type: "button",
        id: "action-expire",
        disabled: doc.status !== "active",
        title: doc.status === "active" ? "Stop recalling it (kept for history)" : `Already ${doc.status}`,
        onClick: async () => {
          const ok = await dialog({
            title: "Expire this memory?",
            body: "It stays in the store for history but is no longer recalled.",
            confirm: "Expire",
            danger: true,
          });
          if (!ok) return;
          await act("Expire", async () => {
            const res = await api("/v1/memory/expire", { method: "POST", body: { ids: [doc.id] } });
            toast(res.expired ? "Expired" : "Nothing to expire");
            rerender();
          });
        },
      },
      icon("clock"),
      "Expire",
    ),
    h(
      "button",
      {
        class: "btn danger-outline",
        type: "button",
        id: "action-forget",
        onClick: async () => {
          const ok = await dialog({
            title: "Forget this memory?",
            body: "It is deleted from the store for good. This cannot be undone.",
            confirm: "Forget",
            danger: true,
          });
          if (!ok) return;
          await act("Forget", async () => {
            const res = await api("/v1/memory/forget", { method: "POST", body: { ids: [doc.id] } });
            toast(res.removed ? "Forgotten" : "It was already gone");
            location.hash = "#/memories";
          });
        },
      },
      icon("trash"),
      "Forget",
    ),
  );

  function rerender() {
    // Same route: render the page again in place.
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  }

  const flags = [
    typeBadge(doc.type),
    statusBadge(doc.status),
    sensitivityBadge(doc.sensitivity),
    doc.pinned ? h("span", { class: "badge pinned" }, icon("pin", 12), "pinned") : null,
    doc.decay_level ? h("span", { class: "badge decayed" }, `decayed ${doc.decay_level}`) : null,
    h("span", { class: "badge version-badge" }, `version ${doc.version}`),
  ];

  const supersession = [];
  if (doc.superseded_by) {
    supersession.push(
      h(
        "div",
        { class: "notice", id: "superseded" },
        doc.status === "stale" ? "A newer version replaced this one: " : "Superseded by ",
        h("a", { href: `#/memory/${encodeURIComponent(doc.superseded_by)}` }, doc.superseded_by),
      ),
    );
  } else if (doc.status === "expired") {
    supersession.push(
      h(
        "div",
        { class: "notice" },
        `Expired ${doc.expired_at ? absTime(doc.expired_at) : ""} — it is no longer recalled.`,
      ),
    );
  }

  const details = [
    ["ID", h("code", {}, doc.id)],
    ["Root", doc.root_id === doc.id ? h("span", { class: "muted" }, "this is the first version") : h("a", { href: `#/memory/${encodeURIComponent(doc.root_id)}` }, h("code", {}, doc.root_id))],
    ["Project", doc.project ? h("span", { title: doc.project }, doc.project) : h("span", { class: "muted" }, "global (every project)")],
    ["Source", doc.source || h("span", { class: "muted" }, "—")],
    ["Session", doc.session_id ? h("code", {}, doc.session_id) : h("span", { class: "muted" }, "—")],
    ["Saved", timeEl(doc.created_at)],
    ["Asserted", timeEl(doc.asserted_at)],
    ["Last used", timeEl(doc.last_referenced)],
    ["Recalled", doc.access_count === 1 ? "once" : `${doc.access_count} times`],
    ["Expires", doc.expires_at ? timeEl(doc.expires_at) : h("span", { class: "muted" }, "never")],
  ];
  if (doc.expired_at) details.push(["Expired", timeEl(doc.expired_at)]);

  const metaEntries = Object.entries(doc.metadata || {});

  renderText();
  renderVersions();

  clear(
    main,
    h(
      "section",
      { class: "page detail-page", dataset: { id: doc.id } },
      backLink(),
      h("div", { class: "detail-head" }, h("div", { class: "flags" }, flags), actions),
      errorSlot,
      supersession,
      h("div", { class: "card text-card" }, textBlock, originalBlock,
        doc.tags.length
          ? h("div", { class: "tags-line" }, doc.tags.map((t) => h("a", { class: "tag", href: `#/memories?tag=${encodeURIComponent(t)}` }, `#${t}`)))
          : null),
      h(
        "div",
        { class: "detail-grid" },
        h(
          "div",
          { class: "detail-col" },
          h("section", { class: "card", id: "provenance" }, h("h2", {}, "Provenance"), provenanceSlot),
        ),
        h(
          "div",
          { class: "detail-col detail-side" },
          h(
            "section",
            { class: "card" },
            h("h2", {}, "Details"),
            h("dl", { class: "kv" }, details.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
          ),
          codeCard(doc),
          h(
            "section",
            { class: "card", id: "history" },
            h("h2", {}, "Version history ", h("span", { class: "muted small" }, `(${(doc.versions || []).length})`)),
            versionsList,
          ),
          h(
            "section",
            { class: "card", id: "metadata" },
            h("h2", {}, "Metadata"),
            metaEntries.length
              ? h(
                  "table",
                  { class: "meta-table" },
                  h("tbody", {}, metaEntries.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, h("code", {}, typeof v === "string" ? v : JSON.stringify(v)))))),
                )
              : h("p", { class: "muted" }, "No metadata."),
          ),
        ),
      ),
    ),
  );

  const context = await contextPromise;
  if (!ctx.alive()) return;
  clear(provenanceSlot, provenance(doc, context));
}

// The code the memory is about: each anchor's file, the identifiers found there, the
// commit it was written at and where it came from (docs/code-aware.md). Text only.
function codeCard(doc) {
  const anchors = doc.anchors || [];
  return h(
    "section",
    { class: "card", id: "anchors" },
    h("h2", {}, "Code ", h("span", { class: "muted small" }, `(${anchors.length})`)),
    anchors.length
      ? h(
          "ul",
          { class: "anchor-list" },
          anchors.map((a) =>
            h(
              "li",
              { class: "anchor" },
              h("code", { class: "anchor-path" }, a.path),
              a.symbols && a.symbols.length
                ? h("span", { class: "anchor-symbols" }, " ", a.symbols.map((n) => h("code", {}, n)))
                : null,
              h(
                "span",
                { class: "muted small anchor-origin" },
                ` ${a.via === "given" ? "named by the writer" : a.via === "tool" ? "read or edited in the session" : "named in the text"}`,
                a.commit ? ` · at ${a.commit.slice(0, 10)}` : "",
              ),
            ),
          ),
        )
      : h("p", { class: "muted" }, "No files: the memory names none of its project's."),
  );
}

function backLink() {
  return h("a", { class: "back", href: lastListHash() }, "← Memories");
}

function provenance(doc, context) {
  if (!doc.provenance.length) {
    return h(
      "p",
      { class: "muted" },
      doc.source
        ? `Saved directly (source: ${doc.source}); no transcript lines are recorded.`
        : "Saved directly; no transcript lines are recorded.",
    );
  }
  const entries = context && !context.failed ? context.provenance : [];
  return doc.provenance.map((p, i) => {
    const ctxEntry =
      entries.find((e) => e.path === p.path && e.start_line === p.start_line && e.end_line === p.end_line) ||
      entries[i];
    const head = h(
      "div",
      { class: "prov-head" },
      h("span", { class: "prov-file", title: p.path || "" }, icon("file", 14), fileName(p.path) || "(unknown file)"),
      h("span", { class: "prov-lines" }, lineRange(p.start_line, p.end_line)),
      p.agent ? h("span", { class: "prov-agent", title: "The coding agent of this session" }, p.agent) : null,
      p.project ? h("span", { class: "prov-project", title: p.project }, projectLabel(p.project)) : null,
      p.session_id ? h("span", { class: "muted small", title: "Session id" }, `session ${p.session_id}`) : null,
    );
    const excerpt = p.excerpt
      ? h("blockquote", { class: "excerpt", title: "Excerpt (redacted on import)" }, p.excerpt)
      : null;
    let transcript;
    if (context && context.failed) {
      transcript = errorBox(context.failed);
    } else if (ctxEntry && ctxEntry.withheld) {
      transcript = h("p", { class: "gone" }, ctxEntry.withheld);
    } else if (!ctxEntry || !ctxEntry.exists) {
      transcript = h("p", { class: "gone" }, "transcript no longer available (the session file was moved or deleted)");
    } else {
      transcript = h(
        "ol",
        { class: "transcript", "aria-label": "Transcript lines around the citation" },
        ctxEntry.lines.map((line) => transcriptLine(line)),
      );
    }
    return h("div", { class: "prov" }, head, excerpt, transcript);
  });
}

function transcriptLine(line) {
  const long = !line.cited && line.text.length > 420;
  const text = h("div", { class: ["t-text", long && "clamped"] }, line.text);
  const more = long
    ? h(
        "button",
        {
          class: "link-btn",
          type: "button",
          onClick: (e) => {
            const open = text.classList.toggle("clamped");
            e.target.textContent = open ? "show all" : "show less";
          },
        },
        "show all",
      )
    : null;
  return h(
    "li",
    { class: ["t-line", line.cited && "cited", `role-${line.role}`], dataset: { start: line.start_line } },
    h("div", { class: "t-gutter" }, h("span", { class: "t-no" }, lineRange(line.start_line, line.end_line).replace(/^lines? /, "L")), h("span", { class: `role role-${line.role}` }, line.role)),
    h("div", { class: "t-body" }, line.cited ? h("span", { class: "cited-mark" }, "cited") : null, text, more),
  );
}
