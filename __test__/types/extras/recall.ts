// recallSearch and recallRead as the pi package's tools and the command line use them.
import { grepSessions, listSessions, recallHitOf, recallRead, recallSearch, recallSessionOf, type RecallHit, type RecallReadResult, type RecallSession } from "pi-session-native";

async function recall(cwd: string, signal: AbortSignal): Promise<string[]> {
    const found = await recallSearch({ query: "deploy", scope: "all", role: "toolCall", after: 7, before: "2025-05-01", file: "src/app.ts", cwd, signal });
    const hits: RecallHit[] = found.hits;
    const listed: RecallSession[] | undefined = (await recallSearch({ cwd })).sessions;
    const page: RecallReadResult = await recallRead({ session: "current", from: "start", limit: 10, thinking: true, currentSessionFile: "/tmp/s.jsonl", sessionFoldersOnly: true });
    const next: string | null = page.next;
    return [found.text, ...hits.map((h) => `${h.sessionId} ${h.entryId ?? "-"} ${h.forks} ${h.toolName ?? ""}`), ...(listed ?? []).map((s) => s.name ?? s.firstMessage), page.text, next ?? "end"];
}
void recall;

// What pi-sessions grep --json and search --json print: the tools' fields from a match and a listing.
async function asTools(cwd: string): Promise<string[]> {
    const [match] = await grepSessions("deploy", { cwd, fields: ["toolCall"] });
    const [info] = await listSessions({ cwd });
    const hit: Omit<RecallHit, "forks"> = recallHitOf(match, info);
    const bare = recallHitOf(match);
    const session: RecallSession = recallSessionOf(info);
    const toolName: string | null = match.toolName;
    return [hit.snippet, bare.sessionFile, session.modified ?? "", toolName ?? ""];
}
void asTools;
// @ts-expect-error: a hit of a match has no forks (only recallSearch counts them)
void ((h: ReturnType<typeof recallHitOf>) => h.forks);

// @ts-expect-error: session is required
void recallRead({ from: "start" });
// @ts-expect-error: a role is one of four
void recallSearch({ role: "system" });
// @ts-expect-error: scope is "project" or "all"
void recallSearch({ scope: "everywhere" });
