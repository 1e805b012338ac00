// #/activity: imports, capture, budget, engines and a chart of memories saved per day.

import { api } from "./api.js";
import {
  absTime,
  clear,
  errorBox,
  fileName,
  h,
  plural,
  projectLabel,
  s,
  spinner,
  timeEl,
  TYPES,
} from "./dom.js";

const COLORS = {
  fact: "#4f6bed",
  preference: "#a855f7",
  episode: "#f59e0b",
  procedure: "#10b981",
};
const OTHER = "#94a3b8";
const RANGES = [7, 30, 90, 365];

function color(type) {
  return COLORS[type] || OTHER;
}

function localDay(date) {
  const y = date.getFullYear();
  const m = String(date.getMonth() + 1).padStart(2, "0");
  const d = String(date.getDate()).padStart(2, "0");
  return `${y}-${m}-${d}`;
}

export async function activityPage(main, ctx) {
  const days = RANGES.includes(Number(ctx.params.get("days"))) ? Number(ctx.params.get("days")) : 30;
  clear(main, spinner("Loading activity…"));
  let doc;
  try {
    doc = await api("/v1/activity", { query: { days } });
  } catch (err) {
    if (ctx.alive()) clear(main, h("section", { class: "page" }, h("h1", {}, "Activity"), errorBox(err)));
    return;
  }
  if (!ctx.alive()) return;

  const perDay = doc.per_day || [];
  const types = [...new Set([...TYPES, ...perDay.flatMap((d) => Object.keys(d).filter((k) => k !== "day"))])];
  const savedInRange = perDay.reduce(
    (sum, d) => sum + types.reduce((n, t) => n + (Number(d[t]) || 0), 0),
    0,
  );
  const today = localDay(new Date());
  const todayRow = perDay.find((d) => d.day === today);
  const savedToday = todayRow ? types.reduce((n, t) => n + (Number(todayRow[t]) || 0), 0) : 0;
  const imports = doc.imports || {};
  const budget = doc.budget || {};
  const capture = doc.capture || {};

  const rangePicker = h(
    "div",
    { class: "segmented", role: "group", "aria-label": "Range" },
    RANGES.map((n) =>
      h("a", { class: ["seg", n === days && "active"], href: `#/activity?days=${n}` }, n === 365 ? "1 year" : `${n} days`),
    ),
  );

  const budgetFill = h("div", { class: ["progress-fill", budget.paused && "paused"] });
  const cap = Number(budget.cap) || 0;
  budgetFill.style.width = `${cap ? Math.min(100, Math.round(((budget.used || 0) / cap) * 100)) : 0}%`;

  const kpi = (id, value, label, extra) =>
    h("div", { class: "kpi", id }, h("div", { class: "kpi-value" }, String(value)), h("div", { class: "kpi-label" }, label), extra || null);

  clear(
    main,
    h(
      "section",
      { class: "page activity-page" },
      h(
        "div",
        { class: "page-head" },
        h("div", {}, h("h1", {}, "Activity"), h("p", { class: "page-sub" }, "What memloom has been saving, importing and spending.")),
        rangePicker,
      ),
      h(
        "div",
        { class: "kpis" },
        kpi("kpi-saved", savedInRange, `saved in ${days === 365 ? "a year" : `${days} days`}`, h("div", { class: "kpi-note" }, `${savedToday} today`)),
        kpi(
          "kpi-sessions",
          imports.sessions ?? 0,
          "sessions imported",
          h("div", { class: "kpi-note" }, `${imports.complete ?? 0} complete · ${imports.partial ?? 0} partial`),
        ),
        kpi(
          "kpi-imported",
          imports.memories ?? 0,
          "memories from imports",
          h("div", { class: "kpi-note" }, "last import ", timeEl(imports.last_import_at)),
        ),
        h(
          "div",
          { class: ["kpi", budget.paused && "alert"], id: "kpi-budget" },
          h(
            "div",
            { class: "kpi-value" },
            `${budget.used ?? 0}`,
            h("span", { class: "kpi-of" }, ` / ${budget.cap ?? "—"}`),
            budget.paused ? h("span", { class: "badge paused", id: "paused" }, "PAUSED") : null,
          ),
          h("div", { class: "kpi-label" }, "unattended LLM calls today"),
          h("div", { class: "progress slim", role: "progressbar", "aria-label": "Daily budget used" }, budgetFill),
        ),
      ),
      h(
        "div",
        { class: "activity-grid" },
        h(
          "section",
          { class: "card chart-card" },
          h("div", { class: "card-head" }, h("h2", {}, "Memories saved per day"), legend(types)),
          chart(perDay, types, days),
        ),
        h("section", { class: "card" }, h("h2", {}, "By type"), h("p", { class: "muted small" }, "Active memories in the store"), byType(doc.by_type || {})),
      ),
      h(
        "div",
        { class: "activity-grid even" },
        h(
          "section",
          { class: "card", id: "capture" },
          h("h2", {}, "Capture"),
          h(
            "dl",
            { class: "kv" },
            h("dt", {}, "Automatic capture"),
            h("dd", {}, doc.scope && doc.scope.enabled ? onOff(true, scopeText(doc.scope)) : onOff(false, "off — run `memloom connect claude-code --all`")),
            h("dt", {}, "Session-end hook"),
            h("dd", {}, onOff(Boolean(doc.hooks && doc.hooks.notify), doc.hooks && doc.hooks.notify ? "installed" : "not installed")),
            h("dt", {}, "Prompt recall hook"),
            h("dd", {}, onOff(Boolean(doc.hooks && doc.hooks.prompt_recall), doc.hooks && doc.hooks.prompt_recall ? "installed" : "not installed")),
            h("dt", {}, "Queued sessions"),
            h("dd", { id: "queued" }, String(capture.queued ?? 0)),
            h("dt", {}, "Last hook"),
            h("dd", {}, eventText(capture.last_hook, "none yet")),
            h("dt", {}, "Last failure"),
            h("dd", { class: capture.last_failure ? "bad-text" : "" }, eventText(capture.last_failure, "none")),
            h("dt", {}, "Daily budget"),
            h("dd", {}, budget.paused ? h("span", { class: "bad-text" }, `PAUSED — ${budget.used} of ${budget.cap} calls used today`) : `${budget.used ?? 0} of ${budget.cap ?? "—"} calls used today`),
          ),
        ),
        h(
          "section",
          { class: "card", id: "engines" },
          h("h2", {}, "Engines"),
          h(
            "dl",
            { class: "kv" },
            h("dt", {}, "LLM"),
            h("dd", { id: "llm" }, doc.llm || h("span", { class: "muted" }, "none")),
            h("dt", {}, "Embedder"),
            h("dd", { id: "embedder" }, h("code", {}, doc.embedder || "—")),
            h("dt", {}, "Last import"),
            h("dd", {}, imports.last_import_at ? absTime(imports.last_import_at) : h("span", { class: "muted" }, "never")),
          ),
        ),
      ),
      h("section", { class: "card", id: "recent-sessions" }, h("h2", {}, "Recent imports"), sessionsTable(doc.recent_sessions || [])),
      h(
        "section",
        { class: "card", id: "native-memory" },
        h("h2", {}, "Agents' own memories"),
        h("p", { class: "muted small" }, "Folders where the agents keep memories of their own, which memloom reads (no LLM call)"),
        nativeTable(doc.agents || {}),
      ),
    ),
  );
}

function onOff(on, text) {
  return h("span", { class: ["state", on ? "on" : "off"] }, h("span", { class: "dot" }), text);
}

function scopeText(scope) {
  if (scope.all) return "on — every project";
  if (scope.projects && scope.projects.length) return `on — ${plural(scope.projects.length, "project")}`;
  return "on";
}

function eventText(event, none) {
  if (!event) return h("span", { class: "muted" }, none);
  return h("span", {}, timeEl(new Date(event.at * 1000).toISOString()), " · ", event.kind, event.detail ? ` — ${event.detail}` : "");
}

function legend(types) {
  return h(
    "ul",
    { class: "legend" },
    types.map((t) => {
      const sw = h("span", { class: "swatch" });
      sw.style.background = color(t);
      return h("li", {}, sw, t);
    }),
  );
}

function chart(perDay, types, days) {
  // One slot per day of the range, oldest first (days without saves are zero).
  const counts = new Map(perDay.map((d) => [d.day, d]));
  const slots = [];
  const now = new Date();
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() - i);
    const key = localDay(d);
    slots.push({ key, date: d, row: counts.get(key) || {} });
  }
  const totals = slots.map((sl) => types.reduce((n, t) => n + (Number(sl.row[t]) || 0), 0));
  const max = Math.max(1, ...totals);
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;

  const W = 760;
  const H = 240;
  const pad = { l: 36, r: 8, t: 12, b: 28 };
  const iw = W - pad.l - pad.r;
  const ih = H - pad.t - pad.b;
  const slot = iw / slots.length;
  const bw = Math.max(2, Math.min(28, slot * 0.7));

  const svg = s("svg", {
    class: "chart",
    id: "per-day-chart",
    viewBox: `0 0 ${W} ${H}`,
    role: "img",
    "aria-label": `Memories saved per day over the last ${days} days, stacked by type`,
  });
  const grid = s("g", { class: "grid" });
  for (let v = 0; v <= top; v += step) {
    const y = pad.t + ih - (v / top) * ih;
    grid.append(
      s("line", { x1: pad.l, x2: W - pad.r, y1: y, y2: y, class: v === 0 ? "axis" : "gridline" }),
      s("text", { x: pad.l - 6, y: y + 4, "text-anchor": "end", class: "tick" }, String(v)),
    );
  }
  svg.append(grid);
  const bars = s("g", { class: "bars" });
  const labelEvery = Math.ceil(slots.length / 10);
  slots.forEach((sl, i) => {
    const x = pad.l + i * slot + (slot - bw) / 2;
    let y = pad.t + ih;
    const total = totals[i];
    const group = s("g", { class: "day", dataset: { day: sl.key, total } });
    const parts = [];
    for (const t of types) {
      const n = Number(sl.row[t]) || 0;
      if (!n) continue;
      const bh = (n / top) * ih;
      y -= bh;
      parts.push(`${n} ${t}`);
      group.append(
        s(
          "rect",
          { class: "bar", x, y, width: bw, height: Math.max(bh, 0.5), fill: color(t), rx: 1.5, dataset: { type: t, count: n } },
          s("title", {}, `${sl.key}: ${n} ${t}`),
        ),
      );
    }
    // A full-height hit area so hovering anywhere on the day shows its totals.
    group.prepend(
      s("rect", { class: "hit", x: pad.l + i * slot, y: pad.t, width: slot, height: ih, fill: "transparent" },
        s("title", {}, total ? `${sl.key}: ${total} saved (${parts.join(", ")})` : `${sl.key}: nothing saved`)),
    );
    bars.append(group);
    if ((slots.length - 1 - i) % labelEvery === 0) {
      bars.append(
        s(
          "text",
          { x: pad.l + i * slot + slot / 2, y: H - 8, "text-anchor": "middle", class: "tick" },
          sl.date.toLocaleDateString(undefined, { month: "short", day: "numeric" }),
        ),
      );
    }
  });
  svg.append(bars);
  const wrap = h("div", { class: "chart-wrap" }, svg);
  if (!totals.some(Boolean)) {
    wrap.append(h("div", { class: "chart-empty" }, `Nothing saved in the last ${days} days.`));
  }
  return wrap;
}

function niceStep(max) {
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 5, 10]) {
    if (raw <= m * mag) return Math.max(1, m * mag);
  }
  return Math.max(1, 10 * mag);
}

function byType(counts) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((n, [, v]) => n + v, 0);
  if (!entries.length) return h("p", { class: "muted" }, "No active memories yet.");
  const max = Math.max(...entries.map(([, v]) => v));
  return h(
    "ul",
    { class: "by-type", id: "by-type" },
    entries.map(([type, n]) => {
      const fill = h("span", { class: "bt-fill" });
      fill.style.width = `${Math.max(2, Math.round((n / max) * 100))}%`;
      fill.style.background = color(type);
      return h(
        "li",
        { dataset: { type } },
        h("a", { class: "bt-name", href: `#/memories?type=${encodeURIComponent(type)}` }, type),
        h("span", { class: "bt-bar" }, fill),
        h("span", { class: "bt-count" }, String(n)),
        h("span", { class: "bt-pct muted" }, `${Math.round((n / total) * 100)}%`),
      );
    }),
  );
}

function nativeTable(agents) {
  const rows = [];
  for (const [name, a] of Object.entries(agents)) {
    for (const f of a.native || []) rows.push({ agent: name, ...f });
  }
  if (!rows.length) {
    return h("p", { class: "muted" }, "None read yet. Run `memloom import native` (switch off: [native] enabled = false).");
  }
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "table" },
      h("thead", {}, h("tr", {}, ["Agent", "Folder", "Files", "Memories", "Read"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            {},
            h("td", {}, r.agent),
            h("td", { title: r.folder }, h("code", {}, r.folder)),
            h("td", { class: "num" }, String(r.files ?? 0)),
            h("td", { class: "num" }, String(r.memories ?? 0)),
            h("td", {}, r.read_at ? timeEl(new Date(r.read_at * 1000).toISOString()) : "never"),
          ),
        ),
      ),
    ),
  );
}

function sessionsTable(rows) {
  if (!rows.length) {
    return h("p", { class: "muted" }, "No sessions imported yet. Run `memloom import sessions`, or enable capture.");
  }
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "table" },
      h("thead", {}, h("tr", {}, ["Session file", "Project", "Status", "Memories", "Updated", "Error"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            {},
            h("td", { title: r.path }, h("code", {}, fileName(r.path))),
            h("td", { title: r.project || "" }, r.project ? projectLabel(r.project) : "—"),
            h("td", {}, h("span", { class: `badge st-${r.status}` }, r.status)),
            h("td", { class: "num" }, String(r.memories ?? 0)),
            h("td", {}, timeEl(r.updated_at)),
            h("td", { class: r.error ? "bad-text" : "muted" }, r.error || "—"),
          ),
        ),
      ),
    ),
  );
}
