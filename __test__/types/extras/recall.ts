// recallSearch and recallRead as the pi package's tools and the command line use them.
import { recallRead, recallSearch, type RecallHit, type RecallReadResult, type RecallSession } from "pi-session-native";

async function recall(cwd: string, signal: AbortSignal): Promise<string[]> {
    const found = await recallSearch({ query: "deploy", scope: "all", role: "toolCall", after: 7, before: "2025-05-01", file: "src/app.ts", cwd, signal });
    const hits: RecallHit[] = found.hits;
    const listed: RecallSession[] | undefined = (await recallSearch({ cwd })).sessions;
    const page: RecallReadResult = await recallRead({ session: "current", from: "start", limit: 10, thinking: true, currentSessionFile: "/tmp/s.jsonl", sessionFoldersOnly: true });
    const next: string | null = page.next;
    return [found.text, ...hits.map((h) => `${h.sessionId} ${h.entryId ?? "-"} ${h.forks} ${h.toolName ?? ""}`), ...(listed ?? []).map((s) => s.name ?? s.firstMessage), page.text, next ?? "end"];
}
void recall;

// @ts-expect-error: session is required
void recallRead({ from: "start" });
// @ts-expect-error: a role is one of four
void recallSearch({ role: "system" });
// @ts-expect-error: scope is "project" or "all"
void recallSearch({ scope: "everywhere" });
