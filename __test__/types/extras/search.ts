// The search API (beyond the reference), typed: searchSessions and SessionSearch.
import { type SessionInfo, SessionSearch, type SessionSearchSort, searchSessions } from "pi-session-native";

async function picker(cwd: string): Promise<SessionInfo[]> {
    const found: SessionInfo[] = await searchSessions("deploy re", { cwd, sort: "recent", nameFilter: "named" });
    const search = await SessionSearch.open({ sessionDir: "/tmp/sessions", onProgress: (loaded, total) => void (loaded + total) });
    const sort: SessionSearchSort = "threaded";
    const hits: SessionInfo[] = search.search('"tool result" re', sort, "all");
    await search.refresh({ signal: AbortSignal.timeout(1000) });
    const all: readonly SessionInfo[] = search.sessions;
    search.close();
    return [...found, ...hits, ...all];
}
void picker;

// @ts-expect-error: not a sort mode
void searchSessions("x", { sort: "fuzzy" });
// @ts-expect-error: the constructor is private
void new SessionSearch();
