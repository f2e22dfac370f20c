// Deterministic messages for the append workloads (no PRNG needed: index-based
// variety). Shared by worker.mjs and append-floor.mjs.

export function appendMessages(n) {
  const out = [];
  const usage = { input: 12, output: 340, cacheRead: 48_211, cacheWrite: 1_024, totalTokens: 49_587, cost: { input: 0.000036, output: 0.0051, cacheRead: 0.014463, cacheWrite: 0.00384, total: 0.023439 } };
  for (let i = 0; i < n; i++) {
    const t = 1_760_000_000_000 + i * 1_000;
    const text = `Step ${i}: ${"inspect the session index and update the tree; ".repeat(1 + (i % 7))}é→✓ "quoted" \\ back\n`;
    switch (i % 3) {
      case 0:
        out.push({ role: "user", content: [{ type: "text", text }], timestamp: t });
        break;
      case 1:
        out.push({
          role: "assistant",
          content: [
            { type: "text", text },
            { type: "toolCall", id: `toolu_${i}`, name: "bash", arguments: { command: `grep -rn "leafId" packages/ | head -${i % 50}` } },
          ],
          api: "anthropic-messages",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          usage,
          stopReason: "toolUse",
          timestamp: t,
        });
        break;
      default:
        out.push({ role: "toolResult", toolCallId: `toolu_${i - 1}`, toolName: "bash", content: [{ type: "text", text: text.repeat(1 + (i % 11)) }], isError: false, timestamp: t });
    }
  }
  return out;
}
