// The reference way of accounting: pi's own loops over entry objects, as a program that
// only has the reference package would compute them.
//
// referenceSessionStats: AgentSession.getSessionStats() (agent-session.js) over
// SessionManager.getEntries(), with usage-totals.js's functions.
// referenceReport: listAll(), then open() and the same rules per file, grouped by the
// entry's timestamp (UTC day, ISO week, month), session path, breakdown key or cwd.

export function referenceSessionStats(sm, { createUsageTotals, addUsageToTotals }) {
  let userMessages = 0;
  let assistantMessages = 0;
  let toolResults = 0;
  let totalMessages = 0;
  let toolCalls = 0;
  const totals = createUsageTotals();
  for (const entry of sm.getEntries()) {
    if (entry.type === "usage") addUsageToTotals(totals, entry.usage);
    else if ((entry.type === "branch_summary" || entry.type === "compaction") && entry.usage) addUsageToTotals(totals, entry.usage);
    if (entry.type !== "message") continue;
    totalMessages++;
    const message = entry.message;
    if (message.role === "user") userMessages++;
    else if (message.role === "toolResult") {
      toolResults++;
      if (message.usage) addUsageToTotals(totals, message.usage);
    } else if (message.role === "assistant") {
      assistantMessages++;
      if (Array.isArray(message.content)) toolCalls += message.content.filter((c) => c.type === "toolCall").length;
      addUsageToTotals(totals, message.usage);
    }
  }
  return {
    sessionFile: sm.getSessionFile(),
    sessionId: sm.getSessionId(),
    userMessages,
    assistantMessages,
    toolCalls,
    toolResults,
    totalMessages,
    tokens: {
      input: totals.input,
      output: totals.output,
      cacheRead: totals.cacheRead,
      cacheWrite: totals.cacheWrite,
      total: totals.input + totals.output + totals.cacheRead + totals.cacheWrite,
    },
    cost: totals.cost,
  };
}

const num = (v) => (typeof v === "number" ? v : 0);

function keyOf(entry) {
  const m = entry.message;
  if (entry.type === "message" && m && typeof m === "object") {
    if (m.role === "assistant") return [`${m.provider}/${m.responseModel ?? m.model}`, m.usage];
    if (m.role === "toolResult") return ["Tools/summaries", m.usage];
  } else if (entry.type === "usage") return [`${entry.provider}/${entry.model}`, entry.usage];
  else if (entry.type === "branch_summary" || entry.type === "compaction") return ["Tools/summaries", entry.usage];
  return [undefined, undefined];
}

export async function referenceReport({ SessionManager }, _totals, { groupBy }) {
  const rows = new Map();
  const totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0, sessions: 0 };
  for (const info of await SessionManager.listAll()) {
    let counted = false;
    const seen = new Set();
    for (const entry of SessionManager.open(info.path).getEntries()) {
      const [model, usage] = keyOf(entry);
      if (!model || !usage || typeof entry.timestamp !== "string") continue;
      const time = Date.parse(entry.timestamp);
      if (Number.isNaN(time)) continue;
      const day = new Date(time).toISOString().slice(0, 10);
      const key = { day, month: day.slice(0, 7), session: info.path, model, project: info.cwd }[groupBy];
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { key, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, sessions: 0 }));
      const cost = usage.cost && typeof usage.cost === "object" ? num(usage.cost.total) : 0;
      const add = { input: num(usage.input), output: num(usage.output), cacheRead: num(usage.cacheRead), cacheWrite: num(usage.cacheWrite), cost };
      for (const f of Object.keys(add)) {
        row[f] += add[f];
        totals[f] += add[f];
      }
      if (!seen.has(key)) row.sessions++;
      seen.add(key);
      counted = true;
    }
    if (counted) totals.sessions++;
  }
  totals.totalTokens = totals.input + totals.output + totals.cacheRead + totals.cacheWrite;
  const out = [...rows.values()].map((r) => ({ ...r, totalTokens: r.input + r.output + r.cacheRead + r.cacheWrite }));
  out.sort((a, b) => (a.key < b.key ? -1 : 1));
  return { rows: out, totals };
}
