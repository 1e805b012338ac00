// #/conflicts: the pending queue (resolve), resolved ones (revert) and the Auto judge.

import { api, stream } from "./api.js";
import { clear, emptyState, errorBox, h, icon, plural, projectLabel, spinner, statusBadge, timeEl, toast, typeBadge } from "./dom.js";

const TABS = [
  { value: "pending", label: "Pending" },
  { value: "resolved", label: "Resolved" },
  { value: "all", label: "All" },
];
const PAGE = 20;
const ACTION_LABELS = {
  keep_new: "kept the new one",
  keep_existing: "kept the existing one",
  keep_both: "kept both",
  merge: "merged",
};
const REVERTED = "Reverted: the conflict is pending again";

export async function conflictsPage(main, ctx) {
  const tab = TABS.some((t) => t.value === ctx.params.get("tab")) ? ctx.params.get("tab") : "pending";
  let offset = Math.max(0, Number.parseInt(ctx.params.get("offset") || "0", 10) || 0);

  const list = h("div", { class: "conflict-list", id: "conflict-list" }, spinner("Loading conflicts…"));
  const pager = h("nav", { class: "pager", "aria-label": "Pages" });
  const summary = h("p", { class: "page-sub" });
  const autoPanel = h("div", { class: "auto-panel", id: "auto-panel", hidden: true });
  const autoButton = h(
    "button",
    {
      class: "btn primary",
      type: "button",
      id: "auto-button",
      title: "Let the judge (your configured LLM) resolve the pending queue; every decision can be reverted",
      onClick: () => runAuto(),
    },
    icon("bolt"),
    "Auto-resolve",
  );
  const tabs = h(
    "div",
    { class: "tabs", role: "tablist" },
    TABS.map((t) =>
      h(
        "a",
        {
          class: ["tab", t.value === tab && "active"],
          role: "tab",
          "aria-selected": t.value === tab ? "true" : "false",
          href: t.value === "pending" ? "#/conflicts" : `#/conflicts?tab=${t.value}`,
          dataset: { tab: t.value },
        },
        t.label,
        h("span", { class: "tab-count", dataset: { count: t.value } }),
      ),
    ),
  );

  clear(
    main,
    h(
      "section",
      { class: "page conflicts-page" },
      h(
        "div",
        { class: "page-head" },
        h(
          "div",
          {},
          h("h1", {}, "Conflicts"),
          h(
            "p",
            { class: "page-sub" },
            "Two memories that look like they disagree. Decide which one holds — every decision can be reverted.",
          ),
        ),
        autoButton,
      ),
      autoPanel,
      h("div", { class: "tabs-row" }, tabs, summary),
      list,
      pager,
    ),
  );

  refreshCounts();

  async function load() {
    list.classList.add("busy");
    try {
      const data = await api("/v1/conflicts", { query: { status: tab, limit: PAGE, offset } });
      if (!ctx.alive()) return;
      list.classList.remove("busy");
      if (tab === "pending") autoButton.disabled = data.total === 0;
      clear(summary, plural(data.total, `${tab === "all" ? "" : `${tab} `}conflict`));
      if (!data.conflicts.length) {
        clear(
          list,
          tab === "pending"
            ? emptyState("No pending conflicts", "New memories that contradict old ones show up here.")
            : emptyState("Nothing here yet", "Resolved conflicts show up here, ready to be reverted."),
        );
      } else {
        clear(list, data.conflicts.map(card));
      }
      renderPager(data.total);
    } catch (err) {
      if (!ctx.alive()) return;
      list.classList.remove("busy");
      clear(list, errorBox(err));
    }
  }

  function renderPager(total) {
    if (total <= PAGE) {
      clear(pager);
      return;
    }
    clear(
      pager,
      h(
        "button",
        {
          class: "btn",
          type: "button",
          disabled: offset === 0,
          onClick: () => {
            offset = Math.max(0, offset - PAGE);
            load();
          },
        },
        "← Previous",
      ),
      h("span", { class: "page-no" }, `${offset + 1}–${Math.min(total, offset + PAGE)} of ${total}`),
      h(
        "button",
        {
          class: "btn",
          type: "button",
          disabled: offset + PAGE >= total,
          onClick: () => {
            offset += PAGE;
            load();
          },
        },
        "Next →",
      ),
    );
  }

  function side(label, m, winner) {
    return h(
      "div",
      { class: ["side", winner === true && "winner", winner === false && "loser"], dataset: { side: label.toLowerCase() } },
      h(
        "div",
        { class: "side-head" },
        h("span", { class: "side-label" }, label),
        typeBadge(m.type),
        statusBadge(m.status),
        h("span", { class: "spacer" }),
        timeEl(m.created_at),
      ),
      h("div", { class: "side-text" }, m.text),
      h(
        "div",
        { class: "side-meta" },
        h("span", { title: m.project || "" }, m.project ? projectLabel(m.project) : "global"),
        h("a", { href: `#/memory/${encodeURIComponent(m.id)}` }, "open →"),
      ),
      m.excerpt
        ? h("blockquote", { class: "excerpt", title: "Transcript excerpt" }, m.excerpt)
        : h("p", { class: "muted small no-excerpt" }, "No transcript excerpt (saved directly)."),
    );
  }

  function card(c) {
    const errorSlot = h("div");
    const pending = c.status === "pending";
    const winner = (which) => {
      if (pending || !c.resolution) return undefined;
      if (c.resolution === "keep_both") return true;
      if (c.resolution === "merge") return false;
      return c.resolution === `keep_${which}`;
    };
    // On the card: busy while it runs, a failure shown in the card.
    const act = async (verb, body, message, action = null) => {
      clear(errorSlot);
      el.classList.add("busy");
      try {
        await send(c.id, verb, body);
        toast(message, "ok", action);
      } catch (err) {
        el.classList.remove("busy");
        clear(errorSlot, errorBox(err));
      }
    };
    // The card leaves the pending list at once, so the way back is in the toast.
    const resolve = (action, text) =>
      act("resolve", text === undefined ? { action } : { action, text }, `Resolved: ${ACTION_LABELS[action]}`, {
        label: "Undo",
        run: () => undo(c.id),
      });
    const revert = () => act("revert", undefined, REVERTED);
    const mergeBox = h("div", { class: "merge-box", hidden: true });
    const openMerge = () => {
      const area = h("textarea", { class: "merge-text", rows: 4, "aria-label": "Merged text" });
      area.value = `${c.existing.text}\n${c.new.text}`;
      clear(
        mergeBox,
        h("label", { class: "small muted" }, "Merged text (becomes a new version of the existing memory):"),
        area,
        h(
          "div",
          { class: "row-actions" },
          h("button", { class: "btn", type: "button", onClick: () => { mergeBox.hidden = true; } }, "Cancel"),
          h(
            "button",
            {
              class: "btn primary",
              type: "button",
              "data-action": "save-merge",
              onClick: () => {
                if (!area.value.trim()) {
                  area.classList.add("invalid");
                  return;
                }
                resolve("merge", area.value);
              },
            },
            "Save merge",
          ),
        ),
      );
      mergeBox.hidden = false;
      area.focus();
    };
    const btn = (action, label, cls = "btn") =>
      h("button", { class: cls, type: "button", "data-action": action, onClick: () => resolve(action) }, label);
    const actions = pending
      ? h(
          "div",
          { class: "row-actions" },
          btn("keep_new", "Keep new", "btn primary"),
          btn("keep_existing", "Keep existing"),
          btn("keep_both", "Keep both"),
          h("button", { class: "btn", type: "button", "data-action": "merge", onClick: openMerge }, "Merge…"),
        )
      : h(
          "div",
          { class: "row-actions" },
          h(
            "span",
            { class: "resolution" },
            icon("check", 14),
            " ",
            ACTION_LABELS[c.resolution] || c.resolution || "resolved",
            " · ",
            timeEl(c.resolved_at),
          ),
          h("button", { class: "btn", type: "button", "data-action": "revert", onClick: revert }, icon("undo"), "Revert"),
        );
    const distance = typeof c.distance === "number" ? c.distance : null;
    const meter = h("span", { class: "distance-fill" });
    if (distance !== null) meter.style.width = `${Math.round(Math.max(0, Math.min(1, 1 - distance)) * 100)}%`;
    const el = h(
      "article",
      { class: ["conflict", c.status], dataset: { id: c.id } },
      h(
        "div",
        { class: "conflict-head" },
        statusBadge(c.status),
        distance !== null
          ? h(
              "span",
              { class: "distance", title: "Cosine distance between the two memories (0 = identical)" },
              h("span", { class: "distance-bar", "aria-hidden": "true" }, meter),
              `distance ${distance.toFixed(3)}`,
            )
          : null,
        h("span", { class: "reason", title: "Why the classifier flagged them" }, "reason: ", c.reason || "—"),
        h("span", { class: "spacer" }),
        h("span", { class: "muted small" }, "found ", timeEl(c.created_at)),
      ),
      h("div", { class: "sides" }, side("New", c.new, winner("new")), h("div", { class: "vs", "aria-hidden": "true" }, "vs"), side("Existing", c.existing, winner("existing"))),
      actions,
      mergeBox,
      errorSlot,
    );
    return el;
  }

  // Resolve or revert one conflict, then bring the header count, the list and the tabs up to date.
  async function send(id, verb, body) {
    await api(`/v1/conflicts/${encodeURIComponent(id)}/${verb}`, { method: "POST", body });
    ctx.refreshNav();
    load();
    refreshCounts();
  }

  // Undo from the toast: the resolved card is gone by then, so a failure is a toast too.
  function undo(id) {
    send(id, "revert").then(
      () => toast(REVERTED),
      (err) => toast(`Undo failed: ${err.message}`, "bad"),
    );
  }

  function refreshCounts() {
    for (const t of ["pending", "resolved"]) {
      api("/v1/conflicts", { query: { status: t, limit: 1 } })
        .then((data) => {
          const el = tabs.querySelector(`[data-count="${t}"]`);
          if (el) el.textContent = String(data.total);
        })
        .catch(() => {});
    }
  }

  async function runAuto() {
    autoButton.disabled = true;
    const fill = h("div", { class: "progress-fill" });
    fill.style.width = "0%";
    const label = h("span", { class: "progress-label" }, "Starting the judge…");
    const result = h("div", { class: "auto-result" });
    autoPanel.hidden = false;
    clear(
      autoPanel,
      h("div", { class: "auto-title" }, icon("bolt"), " Auto-resolve"),
      h("div", { class: "progress", role: "progressbar", "aria-label": "Judge progress" }, fill),
      label,
      result,
    );
    try {
      const last = await stream("/v1/conflicts/auto", undefined, (event) => {
        if (event.event === "judged") {
          const pct = event.total ? Math.round((event.done / event.total) * 100) : 100;
          fill.style.width = `${pct}%`;
          label.textContent = `Judged ${event.done} of ${event.total} — last verdict: ${event.verdict || "none"}`;
        }
      });
      fill.style.width = "100%";
      if (!last || last.event === "error") {
        throw new Error(last && last.error ? last.error : "the judge stopped without a summary");
      }
      const sum = last.summary || {};
      label.textContent = "Done.";
      const stat = (n, text) => h("div", { class: "stat" }, h("div", { class: "stat-value" }, String(n ?? 0)), h("div", { class: "stat-label" }, text));
      clear(
        result,
        h(
          "div",
          { class: "stats-row", id: "auto-summary" },
          stat(sum.pending, "pending"),
          stat(sum.judged, "judged"),
          stat(sum.resolved, "resolved"),
          stat(sum.unsure, "unsure"),
          stat(sum.failed, "failed"),
        ),
        sum.reason ? h("p", { class: "notice", id: "auto-reason" }, sum.reason) : null,
        sum.llm ? h("p", { class: "muted small" }, "Judge: ", sum.llm) : null,
      );
      ctx.refreshNav();
      refreshCounts();
      load();
    } catch (err) {
      label.textContent = "Failed.";
      clear(result, errorBox(err));
    } finally {
      autoButton.disabled = false;
    }
  }

  load();
}
