// Tiny DOM helpers. Every string becomes a text node: memory text is untrusted,
// so nothing here (or anywhere in the viewer) parses data as HTML.

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    } else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (key === "value" || key === "checked" || key === "disabled" || key === "selected") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** h("div", {class: "x", onClick: fn}, "text", otherNode, [more]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  return append(el, children);
}

/** The same for SVG elements (createElementNS). */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  return append(el, children);
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// ------------------------------------------------------------------ formatting

export const TYPES = ["fact", "preference", "episode", "procedure"];

export const SENSITIVITY = [
  { level: 0, label: "none", title: "Nothing sensitive detected" },
  { level: 1, label: "PII", title: "Personal data (names, e-mail addresses, phone numbers …)" },
  { level: 2, label: "internal", title: "Internal details (hosts, paths, internal URLs …)" },
  { level: 3, label: "credential", title: "Credentials: keys, tokens, passwords" },
];

export function typeBadge(type) {
  return h("span", { class: `badge type type-${type}`, title: `Type: ${type}` }, type);
}

export function sensitivityBadge(level) {
  const info = SENSITIVITY[level] || { label: `level ${level}`, title: "" };
  return h(
    "span",
    { class: `badge sens sens-${level}`, title: `Sensitivity ${level}: ${info.title}` },
    level >= 3 ? icon("lock", 12) : null,
    info.label,
  );
}

export function statusBadge(status) {
  return h("span", { class: `badge status status-${status}` }, status);
}

export function projectLabel(project) {
  if (!project) return "(no project)";
  const parts = project.split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : project;
}

export function fileName(path) {
  if (!path) return "";
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1];
}

export function truncate(text, max) {
  const flat = String(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function absTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

export function relTime(iso) {
  if (!iso) return "never";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const secs = (Date.now() - d.getTime()) / 1000;
  const future = secs < 0;
  const a = Math.abs(secs);
  let out;
  if (a < 45) out = "just now";
  else if (a < 5400) out = `${Math.round(a / 60)} min`;
  else if (a < 129600) out = `${Math.round(a / 3600)} h`;
  else if (a < 86400 * 45) out = `${Math.round(a / 86400)} days`;
  else if (a < 86400 * 548) out = `${Math.round(a / (86400 * 30))} months`;
  else out = `${Math.round(a / (86400 * 365))} years`;
  if (out === "just now") return out;
  return future ? `in ${out}` : `${out} ago`;
}

export function timeEl(iso, { relative = true } = {}) {
  if (!iso) return h("span", { class: "muted" }, "—");
  return h(
    "time",
    { datetime: iso, title: absTime(iso) },
    relative ? relTime(iso) : absTime(iso),
  );
}

export function lineRange(start, end) {
  if (start == null) return "";
  if (end == null || end === start) return `line ${start}`;
  return `lines ${start}–${end}`;
}

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many || `${one}s`}`;
}

// ------------------------------------------------------------------ small widgets

export function spinner(text = "Loading…") {
  return h("div", { class: "loading", role: "status" }, h("span", { class: "spin" }), text);
}

export function errorBox(err) {
  const message = err && err.message ? err.message : String(err);
  const status = err && err.status ? `${err.status}` : "";
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, status ? `Error ${status}: ` : "Error: "),
    message,
  );
}

export function emptyState(title, hint) {
  return h("div", { class: "empty" }, h("div", { class: "empty-title" }, title), hint ? h("p", {}, hint) : null);
}

const TOAST_MS = 3500;
/** How long a toast with an action (Undo) stays: long enough to change one's mind. */
export const TOAST_ACTION_MS = 8000;
let toastTimer = null;

/**
 * A short message at the bottom of the page. With `action` ({label, run}) it carries
 * a button (e.g. Undo) that runs `run` once and closes the toast.
 */
export function toast(text, kind = "ok", action = null) {
  let el = document.getElementById("toast");
  if (!el) {
    el = h("div", { id: "toast", role: "status", "aria-live": "polite" });
    document.body.append(el);
  }
  // Hidden, the button goes: nothing invisible stays clickable or focusable.
  const hide = () => {
    clearTimeout(toastTimer);
    el.classList.remove("show");
    el.querySelector(".toast-action")?.remove();
  };
  el.className = `toast show ${kind}`;
  clear(
    el,
    h("span", { class: "toast-text" }, text),
    action
      ? h(
          "button",
          {
            class: "toast-action",
            type: "button",
            onClick: () => {
              hide();
              action.run();
            },
          },
          action.label,
        )
      : null,
  );
  clearTimeout(toastTimer);
  toastTimer = setTimeout(hide, action ? TOAST_ACTION_MS : TOAST_MS);
}

/**
 * Our own modal (not window.confirm, so it can be styled and clicked by tests).
 * Resolves to true / the textarea's value when confirmed, null when cancelled.
 */
export function dialog({ title, body, confirm = "Confirm", danger = false, textarea = null }) {
  return new Promise((resolve) => {
    const previous = document.activeElement;
    let field = null;
    if (textarea !== null) {
      field = h("textarea", { class: "dialog-input", rows: 8, "aria-label": title });
      field.value = textarea;
    }
    const done = (value) => {
      overlay.remove();
      document.removeEventListener("keydown", onKey, true);
      if (previous && previous.focus) previous.focus();
      resolve(value);
    };
    const ok = h(
      "button",
      {
        class: ["btn", danger ? "danger" : "primary"],
        type: "submit",
        "data-action": "confirm",
      },
      confirm,
    );
    const cancel = h(
      "button",
      { class: "btn", type: "button", "data-action": "cancel", onClick: () => done(null) },
      "Cancel",
    );
    const form = h(
      "form",
      {
        class: "dialog",
        role: "dialog",
        "aria-modal": "true",
        "aria-label": title,
        onSubmit: (e) => {
          e.preventDefault();
          if (field) {
            if (!field.value.trim()) {
              field.classList.add("invalid");
              field.focus();
              return;
            }
            done(field.value);
          } else done(true);
        },
      },
      h("h2", {}, title),
      body ? h("div", { class: "dialog-body" }, body) : null,
      field,
      h("div", { class: "dialog-actions" }, cancel, ok),
    );
    const overlay = h(
      "div",
      { class: "overlay", onMousedown: (e) => e.target === overlay && done(null) },
      form,
    );
    const onKey = (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        done(null);
      }
    };
    document.addEventListener("keydown", onKey, true);
    document.body.append(overlay);
    (field || ok).focus();
  });
}

// ------------------------------------------------------------------ icons (inline SVG, no fonts)

const ICONS = {
  edit: ["M4 20h4L19 9l-4-4L4 16v4z", "M13.5 6.5l4 4"],
  pin: ["M9 3h6l-1 6 3 3H7l3-3-1-6z", "M12 12v9"],
  clock: ["M12 7v5l3 2", "M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z"],
  trash: ["M4 7h16", "M9 7V4h6v3", "M6 7l1 13h10l1-13", "M10 11v6", "M14 11v6"],
  file: ["M6 3h8l4 4v14H6z", "M14 3v4h4"],
  lock: ["M6 11h12v9H6z", "M8 11V8a4 4 0 0 1 8 0v3"],
  bolt: ["M13 3L5 14h6l-1 7 8-11h-6l1-7z"],
  key: ["M8 15a4 4 0 1 0 0-.01", "M11 12l9-9", "M17 6l3 3"],
  undo: ["M9 14L4 9l5-5", "M4 9h10a6 6 0 0 1 0 12h-3"],
  restore: ["M3 12a9 9 0 1 0 3-6.7", "M3 4v5h5"],
  check: ["M5 12l5 5L19 7"],
};

export function icon(name, size = 15) {
  return s(
    "svg",
    {
      class: `icon icon-${name}`,
      viewBox: "0 0 24 24",
      width: size,
      height: size,
      fill: "none",
      stroke: "currentColor",
      "stroke-width": 2,
      "stroke-linecap": "round",
      "stroke-linejoin": "round",
      "aria-hidden": "true",
    },
    (ICONS[name] || []).map((d) => s("path", { d })),
  );
}
