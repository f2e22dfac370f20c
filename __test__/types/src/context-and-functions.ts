// User code written against @earendil-works/pi-coding-agent@1.6.0: building the LLM
// context, the session free functions, FileEntry/header narrowing and the read-only view
// that pi hands to extensions (ctx.sessionManager: Pick<SessionManager, ...>).
import { readFileSync } from "node:fs";
import type { Message } from "@earendil-works/pi-ai";
import {
    buildContextEntries,
    buildSessionContext,
    buildSessionProjection,
    type CompactionEntry,
    CURRENT_SESSION_VERSION,
    type ContextEditableContent,
    type FileEntry,
    getLatestCompactionEntry,
    migrateSessionEntries,
    parseSessionEntries,
    type ProjectedSessionEntry,
    type SessionContext,
    type SessionEntry,
    type SessionHeader,
    SessionManager,
    type SessionProjection,
    sessionEntryToContextMessages,
} from "@earendil-works/pi-coding-agent";

const version: 3 = CURRENT_SESSION_VERSION;
// @ts-expect-error CURRENT_SESSION_VERSION is the literal 3
const notFour: 4 = CURRENT_SESSION_VERSION;
void notFour;

export function loadFile(path: string): { header: SessionHeader | undefined; entries: SessionEntry[] } {
    const fileEntries: FileEntry[] = parseSessionEntries(readFileSync(path, "utf8"));
    migrateSessionEntries(fileEntries);
    let header: SessionHeader | undefined;
    const entries: SessionEntry[] = [];
    for (const e of fileEntries) {
        if (e.type === "session") {
            header = e;
            if ((e.version ?? 1) < version) throw new Error("not migrated");
        } else {
            entries.push(e);
        }
    }
    return { header, entries };
}

export function contexts(entries: SessionEntry[], leaf: string | null): void {
    const byId = new Map<string, SessionEntry>(entries.map((e) => [e.id, e]));

    const ctx1: SessionContext = buildSessionContext(entries);
    const ctx2 = buildSessionContext(entries, leaf);
    const ctx3 = buildSessionContext(entries, "some-id", byId);
    const ctx4 = buildSessionContext(entries, undefined, byId);
    for (const ctx of [ctx1, ctx2, ctx3, ctx4]) {
        const level: string = ctx.thinkingLevel;
        const model = ctx.model ? `${ctx.model.provider}/${ctx.model.modelId}` : "default";
        console.log(level, model, ctx.messages.length);
    }

    const projection: SessionProjection = buildSessionProjection(entries, leaf, byId);
    const first: ProjectedSessionEntry | undefined = projection.entries[0];
    if (first) console.log(first.sourceEntry.id, first.messages.map((m) => m.role));
    console.log(projection.messages.length, projection.thinkingLevel, projection.model?.modelId);

    const contextEntries: SessionEntry[] = buildContextEntries(entries);
    const contextEntries2 = buildContextEntries(entries, leaf, byId);
    const latest: CompactionEntry | null = getLatestCompactionEntry(contextEntries.concat(contextEntries2));
    if (latest) console.log(latest.summary, latest.tokensBefore, latest.firstKeptEntryId);

    const perEntry = entries.map((e) => sessionEntryToContextMessages(e));
    console.log(perEntry.flat().length);

    // Converting the AgentMessage[] context to plain LLM messages, user-side.
    const llm: Message[] = ctx1.messages.flatMap((m): Message[] => {
        switch (m.role) {
            case "user":
            case "assistant":
            case "toolResult":
            case "system":
                return [m];
            case "custom":
                return [{ role: "user", content: m.content, timestamp: m.timestamp }];
            case "bashExecution":
                return m.excludeFromContext ? [] : [{ role: "user", content: `$ ${m.command}\n${m.output}`, timestamp: m.timestamp }];
            case "branchSummary":
            case "compactionSummary":
                return [{ role: "user", content: m.summary, timestamp: m.timestamp }];
        }
    });
    console.log(llm.length);

    const editable: ContextEditableContent[] = ["text", [{ type: "text", text: "x" }], [{ type: "image", data: "", mimeType: "image/png" }]];
    console.log(editable.length);

    // @ts-expect-error leafId must be a string, null or undefined
    buildSessionContext(entries, 5);
    // @ts-expect-error the entries must be session entries
    buildSessionContext([{ type: "message" }]);
}

export function methodContexts(sm: SessionManager): SessionContext {
    const entries = sm.buildContextEntries();
    const projection = sm.buildSessionProjection();
    console.log(entries.length, projection.entries.length);
    return sm.buildSessionContext();
}

// ---------------------------------------------------------------------------------------
// The read-only view given to extensions. The reference root does not export its
// ReadonlySessionManager alias, so extensions spell it out (this is its exact definition).
type ReadonlySessionManager = Pick<
    SessionManager,
    | "getCwd"
    | "getSessionDir"
    | "getSessionId"
    | "getSessionFile"
    | "getLeafId"
    | "getLeafEntry"
    | "getEntry"
    | "getLabel"
    | "getBranch"
    | "buildContextEntries"
    | "buildSessionProjection"
    | "getHeader"
    | "getEntries"
    | "getTree"
    | "getSessionName"
>;

export function summarize(view: ReadonlySessionManager): string {
    const leaf = view.getLeafId();
    const branch = view.getBranch(leaf ?? undefined);
    const projection = view.buildSessionProjection();
    const header = view.getHeader();
    // @ts-expect-error the read-only view cannot append
    view.appendMessage({ role: "user", content: "x", timestamp: 0 });
    return [
        view.getCwd(),
        view.getSessionDir(),
        view.getSessionId(),
        view.getSessionFile() ?? "",
        view.getLeafEntry()?.type ?? "",
        leaf ? (view.getEntry(leaf)?.timestamp ?? "") : "",
        leaf ? (view.getLabel(leaf) ?? "") : "",
        String(branch.length),
        String(view.buildContextEntries().length),
        String(projection.messages.length),
        header?.cwd ?? "",
        String(view.getEntries().length),
        String(view.getTree().length),
        view.getSessionName() ?? "",
    ].join("\n");
}

export const summary = summarize(SessionManager.inMemory("/tmp"));
