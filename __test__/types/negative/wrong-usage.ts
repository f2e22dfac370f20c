// Deliberately wrong code, compiled against OUR declarations (tsconfig.negative.json maps
// "@earendil-works/pi-coding-agent" to index.d.ts). tsc must fail, reporting an error on
// exactly the lines marked with an "error" comment and nowhere else. This proves that the
// type checks can fail (our declarations are not `any`-typed and the harness sees errors).
import { buildSessionContext, CURRENT_SESSION_VERSION, type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";

const sm = SessionManager.inMemory();
new SessionManager(); // error: private constructor
SessionManager.create(42); // error: cwd is a string
sm.appendMessage({ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 1 }); // error: use appendCompaction
sm.appendMessage({ role: "user", content: "no timestamp" }); // error: missing timestamp
sm.appendModelChange("anthropic"); // error: modelId missing
const id: number = sm.appendThinkingLevelChange("high"); // error: ids are strings
const four: 4 = CURRENT_SESSION_VERSION; // error: the version is 3
void SessionManager.listAll(1, 2); // error: no such overload
buildSessionContext(sm.getEntries(), 7); // error: leafId is a string or null

export function narrow(entry: SessionEntry): string {
    if (entry.type === "label") {
        return entry.message.role; // error: label entries have no message
    }
    return entry.unknownField; // error: not on any entry
}

export { four, id };
