// memloom viewer: hash routing over four pages, all data from the public HTTP API.

import { api } from "./api.js";
import { activityPage } from "./activity.js";
import { changedPage } from "./changed.js";
import { conflictsPage } from "./conflicts.js";
import { detailPage } from "./detail.js";
import { clear, errorBox, h } from "./dom.js";
import { memoriesPage } from "./memories.js";

const ROUTES = [
  { page: "memories", pattern: /^\/memories$/, render: memoriesPage },
  { page: "memories", pattern: /^\/memory\/([A-Za-z0-9_-]{1,64})$/, render: detailPage },
  { page: "conflicts", pattern: /^\/conflicts$/, render: conflictsPage },
  { page: "activity", pattern: /^\/activity$/, render: activityPage },
  { page: "changed", pattern: /^\/changed$/, render: changedPage },
];

export function parseHash() {
  const raw = location.hash.slice(1);
  const [path, query = ""] = raw.split("?");
  return { path: path || "/", params: new URLSearchParams(query) };
}

let generation = 0;

async function refreshNav() {
  const badge = document.getElementById("conflict-count");
  try {
    const stats = await api("/v1/memory/stats");
    const n = stats.conflicts_pending || 0;
    badge.textContent = String(n);
    badge.hidden = n === 0;
    badge.title = `${n} pending conflict${n === 1 ? "" : "s"}`;
  } catch {
    badge.hidden = true;
  }
}

async function showVersion() {
  const el = document.getElementById("server-status");
  try {
    const res = await fetch("health", { cache: "no-store" });
    const data = await res.json();
    clear(el, h("span", { class: "dot ok" }), `memloom ${data.version}`);
  } catch {
    clear(el, h("span", { class: "dot bad" }), "server unreachable");
  }
}

async function render() {
  const { path, params } = parseHash();
  const route = ROUTES.find((r) => r.pattern.test(path));
  if (!route) {
    location.replace("#/memories");
    return;
  }
  const gen = ++generation;
  const ctx = {
    alive: () => gen === generation,
    refreshNav,
    params,
    match: path.match(route.pattern),
  };
  for (const link of document.querySelectorAll(".nav a")) {
    const active = link.dataset.page === route.page;
    link.classList.toggle("active", active);
    if (active) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const main = document.getElementById("main");
  clear(main);
  window.scrollTo(0, 0);
  try {
    await route.render(main, ctx);
  } catch (err) {
    if (ctx.alive()) clear(main, errorBox(err));
  }
  if (ctx.alive()) refreshNav();
}

window.addEventListener("hashchange", render);
showVersion();
render();
