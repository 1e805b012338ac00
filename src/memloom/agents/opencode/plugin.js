// memloom's OpenCode plugin: `memloom connect opencode` writes this file, `memloom
// disconnect opencode` removes it. It runs memloom's hook commands and fails open:
// whatever memloom does (missing, slow, failing, printing garbage), OpenCode goes on.
//
// * chat.message: the user's prompt -> `memloom hook prompt-recall` (the memories it
//   fits, and the session's digest with the first prompt), started at once.
// * experimental.chat.system.transform: what memloom gave this session so far, as one
//   system text, on every model request of the session (OpenCode does not keep system
//   text in its history); not on the title request.
// * tool.execute.after of the `read` tool: `memloom hook read`, the memories anchored
//   to the file just read (each file once a session), appended to the tool's output,
//   which the model gets next. Only memloom's own block is appended.
// * event session.idle: `memloom hook notify` queues the session for capture (once
//   per idle; the queue ignores a session already waiting).
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { join } from "node:path";

const COMMAND = __MEMLOOM_COMMAND__;
const RECALL = __MEMLOOM_RECALL__;
const TIMEOUT_MS = 2500;
const MAX_OUTPUT = 256 * 1024;

function storePath() {
  const env = process.env;
  if (env.OPENCODE_DB) return env.OPENCODE_DB;
  const data = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith("/") ? env.XDG_DATA_HOME : join(homedir(), ".local", "share");
  return join(data, "opencode", "opencode.db");
}

// Run `memloom hook <sub> --agent opencode` with `payload` on stdin: its stdout, or ""
// on any failure or after TIMEOUT_MS. Never rejects.
function hook(sub, payload, { detached = false } = {}) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      try { child && child.kill("SIGKILL"); } catch {}
      finish("");
    }, TIMEOUT_MS);
    let child;
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), "hook", sub, "--agent", "opencode"], {
        stdio: ["pipe", "pipe", "ignore"],
        detached,
      });
    } catch {
      finish("");
      return;
    }
    child.on("error", () => finish(""));
    child.stdout.on("data", (chunk) => {
      if (out.length < MAX_OUTPUT) out += chunk.toString("utf8");
    });
    child.on("close", (code) => finish(code === 0 ? out : ""));
    child.stdin.on("error", () => {});
    try { child.stdin.end(JSON.stringify(payload)); } catch { finish(""); }
    if (detached) child.unref();
  });
}

function typed(parts) {
  return (parts || [])
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic && !p.ignored)
    .map((p) => p.text)
    .join("\n");
}

export const MemloomPlugin = async ({ directory }) => {
  const given = new Map(); // session id -> [texts memloom gave it]
  const pending = new Map(); // session id -> the prompt-recall still running
  const notified = new Map(); // session id -> the prompt count at its last notify
  const prompts = new Map(); // session id -> prompts seen
  const base = (sessionID) => ({ session_id: sessionID, cwd: directory, db: storePath() });
  return {
    "chat.message": async (input, output) => {
      try {
        const sessionID = input && input.sessionID;
        const prompt = typed(output && output.parts);
        if (!sessionID || !prompt.trim()) return;
        prompts.set(sessionID, (prompts.get(sessionID) || 0) + 1); // a new turn to capture
        if (!RECALL) return;
        const run = hook("prompt-recall", { ...base(sessionID), prompt }).then((text) => {
          // Only memloom's own block: anything else it printed is not passed on.
          if (typeof text === "string" && text.trim().startsWith("<memloom-context>")) {
            given.set(sessionID, [...(given.get(sessionID) || []), text.trim()]);
          }
        });
        pending.set(sessionID, run.catch(() => {}));
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const sessionID = input && input.sessionID;
        if (!sessionID || !output || !Array.isArray(output.system)) return;
        if (output.system.some((s) => typeof s === "string" && s.startsWith("You are a title generator"))) return;
        const run = pending.get(sessionID);
        if (run) await run;
        const texts = given.get(sessionID);
        if (texts && texts.length) output.system.push(texts.join("\n\n"));
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        if (!RECALL || !input || input.tool !== "read" || !input.sessionID) return;
        const filePath = input.args && input.args.filePath;
        if (typeof filePath !== "string" || !output || typeof output.output !== "string") return;
        const text = await hook("read", { ...base(input.sessionID), tool: "read", args: { filePath } });
        if (typeof text === "string" && text.trim().startsWith("<memloom-context>")) {
          output.output += "\n\n" + text.trim();
        }
      } catch {}
    },
    event: async ({ event }) => {
      try {
        if (!event || event.type !== "session.idle") return;
        const sessionID = event.properties && event.properties.sessionID;
        if (!sessionID) return;
        const count = prompts.get(sessionID) || 0;
        if (notified.has(sessionID) && notified.get(sessionID) === count) return;
        notified.set(sessionID, count);
        await hook("notify", base(sessionID), { detached: true });
      } catch {}
    },
  };
};
