// The pi extension of pi-session-native: from the first session_start on, pi's own
// SessionManager class answers every static that makes or lists managers with this
// package's class (useNativeSessions), so every session pi opens after its start
// (/resume, /new, /fork, /tree, /grep then Enter) runs on the native core; the session pi
// started with needs the register hook (pi-native). pi's own /resume (current folder and
// All) lists through this package, its progress paced for pi's picker, from
// session_start to session_shutdown (which also comes before /reload). pi's picker,
// rows and order stay pi's.
// /usage shows usage across sessions (usageReport) with pi's TUI components;
// /doctor checks session files (checkSession) and says what is wrong.
// /grep finds the messages that match (grepSessions) and can resume their session.
// The session_search and session_read tools let the model recall past sessions (and
// what this one held before its last compaction): recallSearch and recallRead.
// alt+r (or the keys keybindings.json gives "pi-session-native.prompts") opens a picker
// of the prompts typed before (listPrompts); Enter puts one in the editor.
//
// Nothing here imports @earendil-works/pi-coding-agent. pi maps that import to its own
// copy only when its loader (jiti) transpiles a file; a .mjs file is imported natively
// wherever the import resolves, and in a checkout with its devDependencies installed it
// resolves to the package's own copy of pi, whose class pi never calls (nor should a
// second pi be loaded at start). The class pi runs is the one of the session manager pi
// hands every extension: ctx.sessionManager (documented in pi's docs/extensions.md).
import { createRequire } from "node:module";
import { checkFiles, doctorFiles, doctorNotice } from "./doctor.mjs";
import { parseGrepArgs, runGrep } from "./grep.mjs";
import { installNativeListing, piSessionManagerClass } from "./listing.mjs";
import { agentDirOf, promptPickerKeys, runPromptPicker } from "./prompt-picker.mjs";
import { registerRecallTools } from "./recall.mjs";
import { usageData } from "./usage.mjs";
import { UsageView } from "./usage-view.mjs";

// Node's own require, not the extension loader's: the package is loaded as any
// program loads it (the addon included) and stays loaded across /reload, and
// with it the listing cache that makes a second /resume fast.
const requireNode = createRequire(import.meta.url);

// Once per process, whatever the number of reloads and session switches.
const NOTICE_SHOWN = Symbol.for("pi-session-native.loadFailureNoticeShown");
const CLASS_NOTICE_SHOWN = Symbol.for("pi-session-native.classNotFoundNoticeShown");
const SWITCH_NOTICE_SHOWN = Symbol.for("pi-session-native.switchFailedNoticeShown");

function loadPackage() {
  try {
    return { pkg: requireNode("pi-session-native") };
  } catch (error) {
    return { error };
  }
}

/** The napi loader's messages go on about npm bugs; the first sentence says what failed. */
function firstSentence(error) {
  const text = String(error?.message ?? error).split("\n")[0];
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end);
}

/** The package, or undefined after telling the user that `command` needs its addon. */
function packageFor(command, ctx) {
  const { pkg, error } = loadPackage();
  if (error) ctx.ui.notify(`pi-session-native: its native addon did not load (${firstSentence(error)}), so ${command} is not available.`, "warning");
  return pkg;
}

export default function piSessionNative(pi) {
  let restore = null;

  pi.on("session_start", (_event, ctx) => {
    const { pkg, error } = loadPackage();
    if (error) {
      if (ctx.hasUI && !globalThis[NOTICE_SHOWN]) {
        globalThis[NOTICE_SHOWN] = true;
        ctx.ui.notify(
          `pi-session-native: its native addon did not load (${firstSentence(error)}), so pi's sessions and /resume run on pi's own code.`,
          "warning",
        );
      }
      return;
    }
    const PiSessionManager = piSessionManagerClass(ctx.sessionManager);
    if (!PiSessionManager) {
      // Patching any other copy of the class would change nothing pi does: say so instead.
      if (ctx.hasUI && !globalThis[CLASS_NOTICE_SHOWN]) {
        globalThis[CLASS_NOTICE_SHOWN] = true;
        ctx.ui.notify(
          "pi-session-native: pi's SessionManager class was not found (ctx.sessionManager has no class with static list and listAll), so pi's sessions and /resume run on pi's own code.",
          "warning",
        );
      }
      return;
    }
    // Every session pi opens from now on (/resume, /new, /fork, /tree, /grep) is native. Once
    // per class: a class the register hook (or an earlier session_start) switched is left as it is.
    if (!pkg.usesNativeSessions(PiSessionManager)) {
      try {
        pkg.useNativeSessions(PiSessionManager);
      } catch (failure) {
        if (ctx.hasUI && !globalThis[SWITCH_NOTICE_SHOWN]) {
          globalThis[SWITCH_NOTICE_SHOWN] = true;
          ctx.ui.notify(`${firstSentence(failure)}; pi's sessions run on pi's own code.`, "warning");
        }
      }
    }
    // /resume's listing, paced for pi's picker, while this session lasts.
    if (ctx.mode === "tui" && !restore) restore = installNativeListing(PiSessionManager, pkg.SessionManager);
  });

  pi.registerCommand("usage", {
    description: "Tokens and cost across sessions: today, this week, this month, all time; by model and by project",
    handler: async (_args, ctx) => {
      const pkg = packageFor("/usage", ctx);
      if (!pkg) return;
      if (ctx.mode !== "tui") {
        ctx.ui.notify("/usage needs pi's interactive mode", "error");
        return;
      }
      // The view opens at once and fills when the reports are in (the first one reads
      // every session file not in the accounting cache); closing it stops the reading.
      const reading = new AbortController();
      await ctx.ui.custom((tui, theme, _keybindings, done) => {
        const view = new UsageView(null, {
          theme,
          onClose: () => {
            reading.abort();
            done(undefined);
          },
          requestRender: () => tui.requestRender(),
        });
        usageData(pkg.usageReport, { signal: reading.signal, onProgress: (loaded, total) => view.setProgress(loaded, total) }).then(
          (data) => view.setData(data),
          (failure) => {
            if (!reading.signal.aborted) view.setError(firstSentence(failure));
          },
        );
        return view;
      });
    },
  });

  pi.registerCommand("doctor", {
    description: "Check session files for damage (torn lines, lost headers, ...): this project's, or every project's with /doctor all",
    handler: async (args, ctx) => {
      const pkg = packageFor("/doctor", ctx);
      if (!pkg) return;
      const scope = String(args ?? "").trim();
      if (scope !== "" && scope !== "all") {
        ctx.ui.notify("Usage: /doctor [all]", "error");
        return;
      }
      const files = doctorFiles(pkg.findSessionFiles, {
        sessionDir: ctx.sessionManager.getSessionDir(),
        all: scope === "all",
      });
      if (files.length > 100) ctx.ui.notify(`Checking ${files.length} session files ...`, "info");
      const { message, type } = doctorNotice(await checkFiles(pkg.checkSession, files));
      ctx.ui.notify(message, type);
    },
  });

  pi.registerCommand("grep", {
    description: "Find the messages that match: /grep <text> or /grep re:<regex>; /grep --all <...> for every project",
    handler: async (args, ctx) => {
      const pkg = packageFor("/grep", ctx);
      if (!pkg) return;
      const parsed = parseGrepArgs(args);
      if (!parsed) {
        ctx.ui.notify("Usage: /grep [--all] <text or re:regex>", "error");
        return;
      }
      if (ctx.mode !== "tui") {
        ctx.ui.notify("/grep needs pi's interactive mode", "error");
        return;
      }
      const chosen = await runGrep(pkg, ctx, parsed);
      if (chosen?.path) await ctx.switchSession(chosen.path);
    },
  });

  registerRecallTools(pi, loadPackage, firstSentence);

  // Extensions' shortcuts are not in pi's keybindings, so the picker reads its own id from
  // the same file; its keys are read at each load (pi's /reload applies an edit).
  for (const key of promptPickerKeys(agentDirOf(loadPackage().pkg))) {
    pi.registerShortcut(key, {
      description: "Pick a prompt typed before (this project's sessions, Tab: every project's) and put it in the editor",
      handler: async (ctx) => {
        if (ctx.mode !== "tui") return;
        const pkg = packageFor("the prompt picker", ctx);
        if (pkg) await runPromptPicker(pkg, ctx);
      },
    });
  }

  pi.on("session_shutdown", () => {
    restore?.();
    restore = null;
  });
}
