// The HTTP API client: JSON in and out, {"error": …} turned into ApiError,
// and the bearer token (kept in sessionStorage) asked for on the first 401.

import { h, icon } from "./dom.js";

const TOKEN_KEY = "memloom.token";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage disabled: the token lives for this page only */
  }
  memoryToken = token;
}

let memoryToken = "";

// `memloom ui` and `memloom serve` give the viewer's link with the token in its
// #fragment (a browser never sends a fragment to a server, so it reaches no log):
// keep it for this tab and take it out of the address bar and history at once.
// This module is evaluated before the router reads the hash.
(function takeTokenFromLink() {
  const match = /^#token=([^&]*)/.exec(window.location.hash || "");
  if (!match) return;
  let token = "";
  try {
    token = decodeURIComponent(match[1]);
  } catch {
    token = "";
  }
  if (token) setToken(token);
  history.replaceState(null, "", window.location.pathname + window.location.search + "#/memories");
})();

function currentToken() {
  return getToken() || memoryToken;
}

export function buildQuery(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) value.forEach((v) => q.append(key, v));
    else q.append(key, String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

// Relative to the page (served at "/"), so a reverse-proxy prefix keeps working.
function url(path, query) {
  return path.replace(/^\//, "") + buildQuery(query);
}

let pendingPrompt = null;

/** One token form for every call that got a 401 at the same time. */
function askForToken(wrong) {
  if (!pendingPrompt) {
    pendingPrompt = tokenForm(wrong).finally(() => {
      pendingPrompt = null;
    });
  }
  return pendingPrompt;
}

function tokenForm(wrong) {
  return new Promise((resolve) => {
    const input = h("input", {
      type: "password",
      name: "token",
      id: "token-input",
      autocomplete: "current-password",
      placeholder: "API token",
      "aria-label": "API token",
      required: true,
    });
    const form = h(
      "form",
      {
        class: "dialog token-form",
        role: "dialog",
        "aria-modal": "true",
        "aria-label": "API token",
        onSubmit: (e) => {
          e.preventDefault();
          const token = input.value.trim();
          if (!token) return;
          setToken(token);
          overlay.remove();
          resolve(token);
        },
      },
      h("h2", {}, icon("key", 18), " This server needs an API token"),
      h(
        "p",
        { class: "muted" },
        "Open the viewer with `memloom ui` (its link carries the token), or enter the token " +
          "(in api-token in memloom's data folder, see `memloom status`). It is kept in this " +
          "tab's session storage only and sent as a bearer token.",
      ),
      wrong ? h("p", { class: "error", role: "alert" }, "That token was not accepted.") : null,
      input,
      h("div", { class: "dialog-actions" }, h("button", { class: "btn primary", type: "submit" }, "Unlock")),
    );
    const overlay = h("div", { class: "overlay token-overlay" }, form);
    document.body.append(overlay);
    input.focus();
  });
}

/** fetch with the token; a 401 asks for the token and tries again. Returns the Response. */
export async function rawFetch(path, { method = "GET", body, query, signal } = {}) {
  let wrong = false;
  for (;;) {
    const headers = { Accept: "application/json" };
    const token = currentToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    // The server takes a POST only as JSON (a page of another origin cannot send that
    // without asking first): a POST without a body sends an empty object.
    const sent = method === "GET" || method === "HEAD" ? undefined : JSON.stringify(body ?? {});
    if (sent !== undefined) headers["Content-Type"] = "application/json";
    let res;
    try {
      res = await fetch(url(path, query), {
        method,
        headers,
        body: sent,
        signal,
        cache: "no-store",
      });
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, "cannot reach the memloom server — is `memloom serve` still running?");
    }
    if (res.status === 401) {
      if (token) setToken("");
      await askForToken(wrong || Boolean(token));
      wrong = true;
      continue;
    }
    return res;
  }
}

export async function api(path, options = {}) {
  const res = await rawFetch(path, options);
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const message = data && typeof data.error === "string" ? data.error : `HTTP ${res.status}`;
    throw new ApiError(res.status, message);
  }
  return data;
}

/** POST and read an NDJSON stream line by line; onEvent gets each parsed object. */
export async function stream(path, body, onEvent) {
  const res = await rawFetch(path, { method: "POST", body });
  if (!res.ok) {
    let message = `HTTP ${res.status}`;
    try {
      const data = await res.json();
      if (data && data.error) message = data.error;
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, message);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let last = null;
  const emit = (line) => {
    if (!line.trim()) return;
    const event = JSON.parse(line);
    last = event;
    onEvent(event);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      emit(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  }
  buffer += decoder.decode();
  emit(buffer);
  return last;
}
