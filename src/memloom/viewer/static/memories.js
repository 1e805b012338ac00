// #/memories: search (recall) and the filtered, keyset-paged list.

import { api } from "./api.js";
import {
  clear,
  emptyState,
  errorBox,
  h,
  icon,
  plural,
  projectLabel,
  relTime,
  SENSITIVITY,
  sensitivityBadge,
  spinner,
  statusBadge,
  truncate,
  TYPES,
  typeBadge,
  absTime,
} from "./dom.js";

const STATUSES = ["active", "stale", "expired"];
const PAGE_SIZES = [10, 20, 50, 100];
const ORDERS = [
  { value: "recent", label: "Recently used" },
  { value: "accessed", label: "Most accessed" },
  { value: "created", label: "Newest first" },
];
const SEARCH_ORDERS = [
  { value: "relevance", label: "Relevance" },
  { value: "created", label: "Newest first" },
];
const SENS_FILTERS = [
  { value: "", label: "Any sensitivity" },
  ...SENSITIVITY.map((s) => ({ value: String(s.level), label: `Only ${s.label}` })),
  { value: "max2", label: "Hide credentials" },
  { value: "min1", label: "Anything sensitive" },
];

// Credentials the user clicked to reveal (kept while the page is open).
const revealed = new Set();
// Cursors of the pages before the current one, per filter combination.
let cursorStack = { key: "", stack: [] };

function readState(params) {
  const limit = Number.parseInt(params.get("limit") || "", 10);
  const status = (params.get("status") || "active").split(",").filter((s) => STATUSES.includes(s));
  return {
    q: params.get("q") || "",
    type: params.get("type") || "",
    project: params.get("project") || "",
    tag: params.get("tag") || "",
    source: params.get("source") || "",
    sens: params.get("sens") || "",
    status: status.length ? status : ["active"],
    order: params.get("order") || "",
    limit: Number.isFinite(limit) && limit > 0 && limit <= 1000 ? limit : 20,
    cursor: params.get("cursor") || "",
  };
}

function writeHash(state) {
  const q = new URLSearchParams();
  if (state.q) q.set("q", state.q);
  for (const key of ["type", "project", "tag", "source", "sens", "order", "cursor"]) {
    if (state[key]) q.set(key, state[key]);
  }
  if (state.status.join(",") !== "active") q.set("status", state.status.join(","));
  if (state.limit !== 20) q.set("limit", String(state.limit));
  const text = q.toString();
  listHash = `#/memories${text ? `?${text}` : ""}`;
  history.replaceState(null, "", listHash);
}

let listHash = "#/memories";

/** Where "back to the list" goes: the list as it was last shown (filters, page). */
export function lastListHash() {
  return listHash;
}

function filterKey(state) {
  const { cursor: _c, ...rest } = state;
  return JSON.stringify(rest);
}

function sensRange(sens) {
  if (/^[0-3]$/.test(sens)) return { min: Number(sens), max: Number(sens) };
  if (sens === "max2") return { min: null, max: 2 };
  if (sens === "min1") return { min: 1, max: null };
  return { min: null, max: null };
}

function select(label, value, options, onChange, attrs = {}) {
  const el = h(
    "select",
    { "aria-label": label, title: label, onChange: (e) => onChange(e.target.value), ...attrs },
    options.map((o) => h("option", { value: o.value }, o.label)),
  );
  setValue(el, value);
  return el;
}

/** Show ``value`` as chosen, adding it to the menu if the store's counts lack it. */
function setValue(el, value) {
  el.value = value;
  if (el.value !== value && value) {
    el.append(h("option", { value }, value));
    el.value = value;
  }
}

export async function memoriesPage(main, ctx) {
  const state = readState(ctx.params);
  writeHash(state);
  if (cursorStack.key !== filterKey(state)) cursorStack = { key: filterKey(state), stack: [] };
  if (!state.cursor) cursorStack.stack = [];

  const summary = h("p", { class: "page-sub", id: "result-summary" }, "");
  const results = h("div", { class: "results", id: "results", "aria-live": "polite" });
  const pager = h("nav", { class: "pager", "aria-label": "Pages" });
  const searchInput = h("input", {
    type: "search",
    id: "search",
    class: "search-input",
    placeholder: "Search memories — by meaning or keywords…",
    "aria-label": "Search memories",
    autocomplete: "off",
    spellcheck: "false",
    value: state.q,
  });
  const projectSelect = select("Project", state.project, [{ value: "", label: "All projects" }], (v) =>
    change({ project: v }),
  );
  const sourceSelect = select(
    "Source",
    state.source,
    [{ value: "", label: "All sources" }],
    (v) => change({ source: v }),
    { id: "filter-source" },
  );
  const orderSlot = h("span", { class: "order-slot" });
  const tagInput = h("input", {
    type: "text",
    class: "tag-input",
    placeholder: "Tag",
    "aria-label": "Tag",
    value: state.tag,
    size: 10,
  });

  const statusChips = h(
    "div",
    { class: "chips", role: "group", "aria-label": "Status" },
    STATUSES.map((st) => {
      const box = h("input", {
        type: "checkbox",
        value: st,
        checked: state.status.includes(st),
        onChange: () => {
          const chosen = [...statusChips.querySelectorAll("input:checked")].map((b) => b.value);
          if (!chosen.length) {
            box.checked = true;
            return;
          }
          change({ status: chosen });
        },
      });
      return h("label", { class: "chip-toggle" }, box, h("span", {}, st));
    }),
  );

  clear(
    main,
    h(
      "section",
      { class: "page memories-page" },
      h(
        "div",
        { class: "page-head" },
        h("div", {}, h("h1", {}, "Memories"), summary),
      ),
      h(
        "form",
        {
          class: "searchbar",
          role: "search",
          onSubmit: (e) => {
            e.preventDefault();
            change({ q: searchInput.value.trim() });
          },
        },
        h("span", { class: "search-icon", "aria-hidden": "true" }, "⌕"),
        searchInput,
        h(
          "button",
          {
            class: "btn clear-search",
            type: "button",
            title: "Clear the search",
            onClick: () => {
              searchInput.value = "";
              change({ q: "" });
              searchInput.focus();
            },
          },
          "✕",
        ),
      ),
      h(
        "div",
        { class: "filters" },
        select(
          "Type",
          state.type,
          [{ value: "", label: "All types" }, ...TYPES.map((t) => ({ value: t, label: t }))],
          (v) => change({ type: v }),
          { id: "filter-type" },
        ),
        projectSelect,
        tagInput,
        sourceSelect,
        select("Sensitivity", state.sens, SENS_FILTERS, (v) => change({ sens: v }), {
          id: "filter-sensitivity",
        }),
        statusChips,
        h("span", { class: "spacer" }),
        orderSlot,
      ),
      results,
      h(
        "div",
        { class: "list-foot" },
        pager,
        select(
          "Per page",
          String(state.limit),
          PAGE_SIZES.map((n) => ({ value: String(n), label: `${n} per page` })),
          (v) => change({ limit: Number(v) }),
          { class: "per-page" },
        ),
      ),
    ),
  );

  let timer = null;
  searchInput.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => change({ q: searchInput.value.trim() }), 300);
  });
  tagInput.addEventListener("change", () => change({ tag: tagInput.value.trim() }));
  tagInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      change({ tag: tagInput.value.trim() });
    }
  });

  function renderOrder() {
    const options = state.q ? SEARCH_ORDERS : ORDERS;
    let value = state.order;
    if (!options.some((o) => o.value === value)) value = options[0].value;
    clear(orderSlot, select("Sort", value, options, (v) => change({ order: v }), { id: "sort" }));
  }

  function change(patch, { keepCursor = false } = {}) {
    const before = state.q;
    Object.assign(state, patch);
    if (patch.q !== undefined && patch.q !== before) state.order = "";
    if (!keepCursor) {
      state.cursor = "";
      cursorStack = { key: filterKey(state), stack: [] };
    }
    writeHash(state);
    // A chip in a row (project, source) picks a filter: its menu shows the choice.
    setValue(projectSelect, state.project);
    setValue(sourceSelect, state.source);
    load();
  }

  // Filter choices come from the store's own counts.
  api("/v1/memory/stats")
    .then((stats) => {
      if (!ctx.alive()) return;
      fillOptions(projectSelect, stats.by_project, state.project, projectLabel);
      fillOptions(sourceSelect, stats.by_source, state.source, (s) => s);
    })
    .catch(() => {});

  let seq = 0;
  async function load() {
    const mine = ++seq;
    renderOrder();
    if (!results.childElementCount) results.append(spinner());
    results.classList.add("busy");
    try {
      const view = state.q ? await search() : await list();
      if (mine !== seq || !ctx.alive()) return;
      results.classList.remove("busy");
      clear(results, view.rows.length ? view.rows.map((m) => row(m, view.search)) : view.empty);
      clear(summary, view.summary);
      renderPager(view);
    } catch (err) {
      if (mine !== seq || !ctx.alive()) return;
      results.classList.remove("busy");
      clear(results, errorBox(err));
      clear(pager);
    }
  }

  async function list() {
    const { min, max } = sensRange(state.sens);
    const data = await api("/v1/memories", {
      query: {
        type: state.type ? [state.type] : [],
        project: state.project,
        tag: state.tag ? [state.tag] : [],
        source: state.source,
        status: state.status,
        min_sensitivity: min,
        max_sensitivity: max,
        order: state.order || "recent",
        limit: state.limit,
        cursor: state.cursor,
      },
    });
    const page = pageIndex();
    const first = page * state.limit + 1;
    const last = page * state.limit + data.memories.length;
    return {
      search: false,
      rows: data.memories,
      next: data.next_cursor,
      summary: [
        h("strong", { id: "total" }, plural(data.total, "memory", "memories")),
        data.memories.length && page !== null ? ` · showing ${first}–${last}` : "",
      ],
      empty: emptyState(
        data.total === 0 && !hasFilters() ? "No memories yet" : "Nothing matches these filters",
        data.total === 0 && !hasFilters()
          ? "Import Claude Code sessions with `memloom import sessions`, or save one with `memloom save`."
          : "Try removing a filter.",
      ),
    };
  }

  async function search() {
    const { min, max } = sensRange(state.sens);
    const body = {
      query: state.q,
      max_results: Math.max(state.limit, 25),
      include_expired: state.status.includes("expired"),
      touch: false, // browsing is not use: leave "recently used" and use counts alone
    };
    if (state.type) body.types = [state.type];
    if (state.project) body.project = state.project;
    if (state.tag) body.tags = [state.tag];
    if (max !== null) body.max_sensitivity = max;
    const data = await api("/v1/memory/recall", { method: "POST", body });
    // The rest of the filters recall has no field for (exact project, source, minimum level).
    let rows = data.memories.filter(
      (m) =>
        (!state.project || m.project === state.project) &&
        (!state.source || m.source === state.source) &&
        (min === null || m.sensitivity >= min),
    );
    if (state.order === "created") {
      rows = [...rows].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
    } else {
      rows = [...rows].sort((a, b) => b.relevance - a.relevance);
    }
    return {
      search: true,
      rows,
      next: null,
      summary: [h("strong", { id: "total" }, plural(rows.length, "result")), " for “", state.q, "”"],
      empty: emptyState("No memory matches this search", "Try other words, or clear the filters."),
    };
  }

  // null when the page came from a bookmarked cursor (the pages before it are unknown).
  function pageIndex() {
    if (state.cursor && !cursorStack.stack.length) return null;
    return cursorStack.stack.length;
  }

  function hasFilters() {
    return Boolean(
      state.type || state.project || state.tag || state.source || state.sens ||
        state.status.join(",") !== "active",
    );
  }

  function renderPager(view) {
    if (view.search) {
      clear(pager);
      return;
    }
    const page = pageIndex();
    const hasPrev = Boolean(state.cursor);
    const prev = h(
      "button",
      {
        class: "btn",
        type: "button",
        id: "prev-page",
        disabled: !hasPrev,
        onClick: () => {
          const back = cursorStack.stack.pop() || "";
          change({ cursor: back }, { keepCursor: true });
        },
      },
      "← Previous",
    );
    const next = h(
      "button",
      {
        class: "btn",
        type: "button",
        id: "next-page",
        disabled: !view.next,
        onClick: () => {
          cursorStack.stack.push(state.cursor);
          change({ cursor: view.next }, { keepCursor: true });
        },
      },
      "Next →",
    );
    clear(pager, prev, h("span", { class: "page-no", id: "page-no" }, page === null ? "Later page" : `Page ${page + 1}`), next);
    if (!hasPrev && !view.next) clear(pager);
  }

  function row(m, isSearch) {
    const secret = m.sensitivity >= 3 && !revealed.has(m.id);
    const link = `#/memory/${encodeURIComponent(m.id)}`;
    let body;
    if (secret) {
      body = h(
        "button",
        {
          class: "reveal",
          type: "button",
          title: "This memory holds a credential",
          onClick: (e) => {
            e.stopPropagation();
            revealed.add(m.id);
            const fresh = row(m, isSearch);
            article.replaceWith(fresh);
          },
        },
        "•••• credential — click to reveal",
      );
    } else {
      body = h("a", { class: "mem-text", href: link, title: truncate(m.text, 600) }, truncate(m.text, 280));
    }
    const tags = (m.tags || []).map((t) =>
      h(
        "button",
        {
          class: "tag",
          type: "button",
          title: `Filter by tag ${t}`,
          onClick: (e) => {
            e.stopPropagation();
            change({ tag: t });
          },
        },
        `#${t}`,
      ),
    );
    const meta = [
      m.project
        ? h(
            "button",
            {
              class: "meta-link project",
              type: "button",
              title: `Filter by project ${m.project}`,
              onClick: (e) => {
                e.stopPropagation();
                change({ project: m.project });
              },
            },
            projectLabel(m.project),
          )
        : h("span", { class: "muted" }, "global"),
      m.source
        ? h(
            "button",
            {
              class: "meta-link source",
              type: "button",
              title: `Filter by source ${m.source}`,
              onClick: (e) => {
                e.stopPropagation();
                change({ source: m.source });
              },
            },
            m.source,
          )
        : null,
      ...tags,
      h("span", { class: "meta-time", title: `Saved ${absTime(m.created_at)}` }, `saved ${relTime(m.created_at)}`),
    ];
    if (isSearch) {
      const fill = h("span", { class: "relevance-fill" });
      fill.style.width = `${Math.max(4, Math.min(100, Math.round(m.relevance * 100)))}%`;
      meta.push(
        h(
          "span",
          { class: "relevance", title: `relevance ${m.relevance}` },
          h("span", { class: "relevance-bar", "aria-hidden": "true" }, fill),
          `${Math.round(m.relevance * 100)}% match`,
        ),
      );
    } else if (m.access_count) {
      meta.push(h("span", { class: "muted" }, `used ${m.access_count}×`));
    }
    const flags = [];
    if (m.status && m.status !== "active") flags.push(statusBadge(m.status));
    if (m.pinned) flags.push(h("span", { class: "badge pinned", title: "Pinned: never decays" }, icon("pin", 12), "pinned"));
    if (m.decay_level) flags.push(h("span", { class: "badge decayed", title: "Decayed: summarized to save space" }, `decayed ${m.decay_level}`));
    const article = h(
      "article",
      {
        class: ["mem-row", secret && "masked", m.status && m.status !== "active" && "inactive"],
        dataset: { id: m.id, type: m.type, sensitivity: m.sensitivity },
        onClick: (e) => {
          if (e.target.closest("a, button, input, select")) return;
          if (window.getSelection && String(window.getSelection())) return;
          location.hash = link;
        },
      },
      h("div", { class: "mem-type" }, typeBadge(m.type)),
      h("div", { class: "mem-main" }, body, h("div", { class: "mem-meta" }, meta)),
      h("div", { class: "mem-side" }, flags, sensitivityBadge(m.sensitivity)),
    );
    return article;
  }

  load();
}

function fillOptions(selectEl, counts, current, label) {
  const keys = Object.keys(counts || {}).sort((a, b) => counts[b] - counts[a] || a.localeCompare(b));
  if (current && !keys.includes(current)) keys.push(current);
  const first = selectEl.options[0];
  selectEl.replaceChildren(first);
  for (const key of keys) {
    const n = counts && counts[key] !== undefined ? ` (${counts[key]})` : "";
    selectEl.append(h("option", { value: key, title: key }, `${label(key)}${n}`));
  }
  selectEl.value = current || "";
}
