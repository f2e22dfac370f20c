// Drives a reference SessionManager through a realistic coding-agent session: system
// prompt with tool declarations, user prompts (some with images), assistant turns with
// thinking/text/tool calls, tool results, model and thinking changes, compactions,
// branches (with and without summaries), labels, session names, custom entries, custom
// messages, context edits and usage entries. All content comes from the seeded Rng, so a
// given seed always yields the same entries (ids and entry timestamps are the reference's
// own random ids and wall clock).

import { statSync } from "node:fs";
import { MODELS, THINKING_LEVELS, TOOL_NAMES, makeUsage, toolDeclarations } from "./content.mjs";

export const PROFILES = {
  // Long real-world sessions: ~2 KB per line on average, a long tail of big tool results,
  // an image every hundred prompts or so.
  large: {
    userText: [20, 1500],
    imageP: 0.01,
    imageBytes: [75_000, 375_000], // 100-500 KB once base64-encoded
    steps: [0, 8],
    toolResult: [200, 50_000, 5],
    diff: [100, 4000, 2],
    assistantText: [30, 1500],
    thinking: [80, 3000],
    editText: [40, 2500],
    writeText: [300, 8000],
    compactEvery: [8, 16],
    branchEvery: [20, 40],
    systemPrompt: [4000, 10000],
    summary: [800, 4000],
  },
  // Many small entries (the 100,000-entry tree): short messages, frequent branches.
  small: {
    userText: [10, 200],
    imageP: 0,
    imageBytes: [0, 0],
    steps: [0, 3],
    toolResult: [200, 700, 1],
    diff: [50, 300, 1],
    assistantText: [10, 300],
    thinking: [20, 200],
    editText: [10, 120],
    writeText: [50, 300],
    compactEvery: [8, 16],
    branchEvery: [4, 12],
    systemPrompt: [500, 1500],
    summary: [100, 400],
  },
};

class Stop extends Error {}

/** the tool set after replaying the system messages of a context */
function currentTools(messages) {
  const tools = new Map();
  for (const m of messages) {
    if (m.role !== "system") continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.values()];
}

export class SessionWriter {
  /**
   * @param sm       a reference SessionManager (persisted or in memory)
   * @param rng      Rng
   * @param corpus   Corpus
   * @param opts     { profile, targetBytes?, targetEntries?, granularity: "turn" | "entry", startTime }
   */
  constructor(sm, rng, corpus, opts) {
    this.sm = sm;
    this.rng = rng;
    this.corpus = corpus;
    this.p = PROFILES[opts.profile];
    this.opts = opts;
    this.t = opts.startTime;
    this.model = rng.pick(MODELS);
    this.thinkingLevel = rng.pick(THINKING_LEVELS);
    this.turnStarts = []; // user-message ids on the current path, oldest first
    this.editable = []; // recent context-editable entry ids on the current path
    this.labeled = [];
    this.turn = 0;
    this.nextCompaction = rng.int(...this.p.compactEvery);
    this.nextBranch = rng.int(...this.p.branchEvery);
    this.stats = { turns: 0, compactions: 0, branches: 0, branchSummaries: 0, images: 0, contextEdits: 0, labels: 0 };
  }

  fileSize() {
    const file = this.sm.getSessionFile();
    if (!file) return 0;
    const st = statSync(file, { throwIfNoEntry: false });
    return st ? st.size : 0;
  }

  done() {
    const { targetBytes, targetEntries } = this.opts;
    if (targetEntries !== undefined && this.sm.getEntryCount() >= targetEntries) return true;
    if (targetBytes !== undefined && this.fileSize() >= targetBytes) return true;
    return false;
  }

  /** every append goes through here so an entry-count target is hit exactly */
  add(fn) {
    if (this.opts.granularity === "entry" && this.turnStarts.length > 0 && this.done()) throw new Stop();
    return fn();
  }

  tick(lo = 500, hi = 60_000) {
    this.t += this.rng.int(lo, hi);
    return this.t;
  }

  text(kind, [lo, hi, skew = 1]) {
    return this.corpus.text(this.rng, kind, this.rng.size(lo, hi, skew));
  }

  run() {
    try {
      this.start();
      while (!this.done()) this.oneTurn();
    } catch (e) {
      if (!(e instanceof Stop)) throw e;
    }
    return this.stats;
  }

  start() {
    const { sm, rng, p } = this;
    this.add(() => sm.appendModelChange(this.model.provider, this.model.model));
    if (this.thinkingLevel !== "off") this.add(() => sm.appendThinkingLevelChange(this.thinkingLevel));
    const tools = toolDeclarations(rng, this.corpus);
    const system = {
      role: "system",
      content: this.corpus.text(rng, "prose", rng.int(...p.systemPrompt)),
      sections: {
        tools: `<tools>\n${tools.map((t) => `- ${t.name}: ${t.description.slice(0, 60)}`).join("\n")}\n</tools>`,
        cwd: `<cwd>/home/dev/project-${rng.int(1, 99)}</cwd>`,
      },
      toolsAdded: tools,
      timestamp: this.tick(),
    };
    this.add(() => sm.appendMessage(system));
  }

  oneTurn() {
    const { sm, rng, p } = this;
    this.turn++;
    this.stats.turns++;

    // things that happen between prompts
    if (rng.chance(1 / 25)) {
      this.model = rng.pick(MODELS);
      this.add(() => sm.appendModelChange(this.model.provider, this.model.model));
    }
    if (rng.chance(1 / 30)) {
      this.thinkingLevel = rng.pick(THINKING_LEVELS);
      this.add(() => sm.appendThinkingLevelChange(this.thinkingLevel));
    }
    if (rng.chance(1 / 10)) {
      const data = rng.chance(0.5)
        ? { provider: this.model.provider, modelId: this.model.model, state: { turn: this.turn, route: rng.pick(["fast", "smart"]) } }
        : { items: Array.from({ length: rng.int(1, 6) }, () => ({ text: this.corpus.sentence(rng, rng.int(3, 9)), done: rng.chance(0.5) })) };
      this.add(() => sm.appendCustomEntry(data.items ? "todo-ext" : "pi.virtual-model-state", data));
    }
    if (rng.chance(1 / 40)) {
      this.add(() => sm.appendUsage("cache_warm", this.model.provider, this.model.model, makeUsage(rng, this.model)));
    }
    if (rng.chance(1 / 60)) {
      // a system delta: replaces a prompt section and changes the tool set
      // (the tool set keeps its size: one tool is replaced by a new version of itself; the
      // current set is read back from the session because branching may have dropped deltas)
      const tools = currentTools(sm.buildSessionContext().messages);
      const removed = tools[rng.int(0, tools.length - 1)];
      const added = { ...removed, name: `${removed.name.replace(/_v\d+$/, "")}_v${this.turn}` };
      this.add(() =>
        sm.appendMessage({
          role: "system",
          content: "",
          sections: { skills: `<skills>\n${this.corpus.text(rng, "prose", rng.int(100, 1500))}\n</skills>` },
          toolsAdded: [added],
          toolsRemoved: [{ name: removed.name }],
          timestamp: this.tick(),
        }),
      );
    }
    if (rng.chance(1 / 20)) {
      const content = rng.chance(0.5)
        ? this.corpus.text(rng, "prose", rng.int(50, 800))
        : [{ type: "text", text: this.corpus.text(rng, "prose", rng.int(50, 800)) }];
      const id = this.add(() =>
        sm.appendCustomMessageEntry(rng.pick(["pi.reminder", "todo-ext", "git-status"]), content, rng.chance(0.6), rng.chance(0.5) ? { source: "extension", turn: this.turn } : undefined),
      );
      this.editable.push(id);
    }
    if ((this.turn === 1 && rng.chance(this.opts.nameP ?? 1)) || rng.chance(1 / 150)) {
      this.add(() => sm.appendSessionInfo(this.corpus.sentence(rng, rng.int(2, 6))));
    }

    // the prompt
    const userText = this.text("prose", p.userText);
    let content;
    if (rng.chance(p.imageP)) {
      this.stats.images++;
      const bytes = rng.int(...p.imageBytes);
      content = [
        { type: "text", text: userText },
        { type: "image", data: rng.bytes(bytes).toString("base64"), mimeType: rng.pick(["image/png", "image/jpeg"]) },
      ];
    } else {
      content = rng.chance(0.7) ? [{ type: "text", text: userText }] : userText;
    }
    const userId = this.add(() => sm.appendMessage({ role: "user", content, timestamp: this.tick(2_000, 300_000) }));
    this.turnStarts.push(userId);
    this.editable = this.editable.slice(-6);
    this.editable.push(userId);

    // the agent loop
    const steps = rng.int(...p.steps);
    for (let s = 0; s <= steps; s++) {
      const last = s === steps;
      const blocks = [];
      if (this.thinkingLevel !== "off" && rng.chance(0.7)) {
        blocks.push({ type: "thinking", thinking: this.text("prose", [...p.thinking, 2]), thinkingSignature: rng.token(rng.int(100, 400)) });
      }
      if (last || rng.chance(0.6)) blocks.push({ type: "text", text: this.text(rng.chance(0.8) ? "prose" : "code", [...p.assistantText, 2]) });
      const calls = last ? [] : Array.from({ length: rng.chance(0.75) ? 1 : rng.int(2, 3) }, () => this.toolCall());
      blocks.push(...calls);
      const m = this.model;
      const assistant = {
        role: "assistant",
        content: blocks,
        api: m.api,
        provider: m.provider,
        model: m.model,
        thinkingLevel: this.thinkingLevel,
        usage: makeUsage(rng, m),
        stopReason: last ? "stop" : "toolUse",
        timestamp: this.tick(1_000, 90_000),
      };
      if (rng.chance(0.5)) assistant.responseId = `msg_${rng.token(24)}`;
      this.editable.push(this.add(() => sm.appendMessage(assistant)));
      for (const call of calls) {
        this.editable.push(this.add(() => sm.appendMessage(this.toolResult(call))));
      }
    }

    // things that happen after a turn
    if (rng.chance(1 / 15)) {
      const target = rng.pick(this.turnStarts.slice(-5));
      this.add(() => sm.appendLabelChange(target, `checkpoint-${this.turn}`));
      this.labeled.push(target);
      this.stats.labels++;
    }
    if (this.labeled.length > 0 && rng.chance(1 / 60)) {
      const target = this.labeled.splice(rng.int(0, this.labeled.length - 1), 1)[0];
      this.add(() => sm.appendLabelChange(target, undefined));
    }
    if (rng.chance(1 / 25) && this.editable.length > 0) {
      const target = rng.pick(this.editable);
      const replacement = rng.chance(0.4) ? null : { content: rng.chance(0.5) ? "[output elided]" : [{ type: "text", text: this.corpus.sentence(rng, 8) }] };
      this.add(() => sm.appendContextEdit(target, replacement));
      this.stats.contextEdits++;
    }
    if (this.turn >= this.nextCompaction) {
      this.nextCompaction = this.turn + rng.int(...p.compactEvery);
      this.compact();
    }
    if (this.turn >= this.nextBranch) {
      this.nextBranch = this.turn + rng.int(...p.branchEvery);
      this.branchBack();
    }
  }

  toolCall() {
    const { rng, p } = this;
    const name = rng.pick(TOOL_NAMES.concat(["bash", "read", "bash", "edit"]));
    const path = `packages/${rng.pick(["coding-agent", "tui", "ai"])}/src/${this.corpus.sentence(rng, 1).slice(0, -1).toLowerCase()}.ts`;
    let args;
    switch (name) {
      case "read":
        args = rng.chance(0.7) ? { path } : { path, offset: rng.int(1, 800), limit: rng.int(50, 400) };
        break;
      case "bash":
        args = { command: rng.pick(["npm test", "npm run check", `grep -rn "${rng.pick(["leafId", "byId", "getBranch"])}" packages/`, `git diff --stat`, `ls -la ${path}`, `cd packages/tui && npx tsc --noEmit`]) };
        if (rng.chance(0.2)) args.timeout = rng.int(10, 600);
        break;
      case "edit":
        args = { path, oldText: this.text("code", [...p.editText, 2]), newText: this.text("code", [...p.editText, 2]) };
        break;
      case "write":
        args = { path, content: this.text("code", [...p.writeText, 2]) };
        break;
      case "grep":
        args = { pattern: rng.pick(["TODO", "leafId", "export function", "\\bconst\\b"]), path: "packages/", glob: "*.ts" };
        break;
      default:
        args = { pattern: "**/*.ts", path: "packages/" };
    }
    return { type: "toolCall", id: `toolu_01${rng.token(22)}`, name, arguments: args };
  }

  toolResult(call) {
    const { rng, p } = this;
    const isError = rng.chance(0.05);
    let text;
    let details;
    if (isError) {
      text = `Error: ${this.corpus.text(rng, "log", rng.int(200, 1200))}`;
    } else if (call.name === "edit") {
      text = `Successfully replaced text in ${call.arguments.path}.`;
      details = { diff: this.corpus.text(rng, "code", rng.size(...p.diff)) };
    } else if (call.name === "write") {
      text = `Successfully wrote ${call.arguments.content.length} bytes to ${call.arguments.path}`;
    } else {
      text = this.corpus.text(rng, call.name === "read" ? "code" : "log", rng.size(...p.toolResult));
    }
    const msg = {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: [{ type: "text", text }],
    };
    if (details) msg.details = details;
    msg.isError = isError;
    msg.timestamp = this.tick(50, 30_000);
    return msg;
  }

  compact() {
    const { sm, rng, p } = this;
    let firstKept;
    if (this.turnStarts.length > 1 && rng.chance(0.9)) {
      firstKept = this.turnStarts[this.turnStarts.length - rng.int(1, Math.min(3, this.turnStarts.length - 1))];
    }
    const summary = `## Goal\n${this.corpus.sentence(rng, 12)}\n\n## Progress\n${this.text("prose", p.summary)}\n\n## Next steps\n- ${this.corpus.sentence(rng, 10)}`;
    const details = { readFiles: [`packages/tui/src/${rng.int(1, 50)}.ts`, "README.md"], modifiedFiles: [`packages/coding-agent/src/${rng.int(1, 50)}.ts`] };
    const usage = rng.chance(0.7) ? makeUsage(rng, this.model) : undefined;
    this.add(() => sm.appendCompaction(summary, firstKept, rng.int(50_000, 190_000), details, false, usage));
    this.stats.compactions++;
  }

  /** go back 1-4 prompts and continue from there, like /tree or re-editing a prompt */
  branchBack() {
    const { sm, rng, p } = this;
    if (this.turnStarts.length < 2) return;
    const k = rng.int(1, Math.min(4, this.turnStarts.length - 1));
    const target = this.turnStarts[this.turnStarts.length - k];
    const from = sm.getEntry(target)?.parentId;
    if (!from) return;
    this.turnStarts.length -= k;
    this.editable = [];
    this.stats.branches++;
    if (rng.chance(0.5)) {
      this.add(() => sm.branch(from));
    } else {
      this.stats.branchSummaries++;
      const details = { readFiles: ["README.md"], modifiedFiles: [] };
      this.add(() => sm.branchWithSummary(from, this.text("prose", p.summary), details, false, rng.chance(0.5) ? makeUsage(rng, this.model) : undefined));
    }
  }
}
