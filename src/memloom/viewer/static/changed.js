// #/changed: the memories whose code changed in a folder's working tree (GET /v1/stale),
// each with why. For review only: nothing is expired or deleted from here.

import { api } from "./api.js";
import { clear, emptyState, errorBox, h, plural, spinner, truncate, typeBadge } from "./dom.js";

export async function changedPage(main, ctx) {
  const folder = ctx.params.get("folder") || "";
  const input = h("input", {
    type: "text",
    name: "folder",
    value: folder,
    placeholder: "/home/you/src/project (absolute: the working tree to check in)",
    "aria-label": "Folder",
    class: "grow",
  });
  const form = h(
    "form",
    { class: "toolbar", role: "search" },
    input,
    h("button", { type: "submit", class: "btn primary" }, "Check"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `#/changed?folder=${encodeURIComponent(input.value.trim())}`;
  });
  const results = h("div", { id: "changed-results" });
  clear(
    main,
    h("h1", {}, "Code changed"),
    h(
      "p",
      { class: "muted" },
      "Memories about code that is no longer as they say: a file gone, an identifier no " +
        "longer in its file. Nothing is expired or deleted here.",
    ),
    form,
    results,
  );
  if (!folder) {
    clear(results, emptyState("Name a folder", "The working tree of the project to check in."));
    return;
  }
  clear(results, spinner("Checking anchors…"));
  let data;
  try {
    data = await api("/v1/stale", { query: { folder } });
  } catch (err) {
    if (ctx.alive()) clear(results, errorBox(err));
    return;
  }
  if (!ctx.alive()) return;
  if (data.note) {
    clear(results, emptyState("Nothing checked", data.note));
    return;
  }
  if (!data.memories.length) {
    clear(
      results,
      emptyState("No memory is out of date", `${plural(data.checked, "memory", "memories")} with code checked.`),
    );
    return;
  }
  clear(
    results,
    h("p", { class: "muted small" }, `${data.memories.length} of ${plural(data.checked, "memory", "memories")} with code`),
    h(
      "ul",
      { class: "changed-list" },
      data.memories.map((m) =>
        h(
          "li",
          { class: "card changed" },
          typeBadge(m.type),
          " ",
          h("a", { href: `#/memory/${encodeURIComponent(m.id)}` }, truncate(m.text, 200)),
          h("div", { class: "stale-reason" }, "May be out of date: ", m.stale),
        ),
      ),
    ),
  );
}
