// User code written against the reference's session-manager module itself
// (dist/core/session-manager.js), whose helpers the package root does not re-export:
// tests and tools import them from there. tsconfig paths map the module's specifier to
// the reference's declarations, or (ours) to index.d.ts.
import {
    assertValidSessionId,
    type ContextEditEntry,
    type FileEntry,
    findMostRecentSession,
    getDefaultSessionDir,
    loadEntriesFromFile,
    projectContextEntry,
    type SessionEntry,
    type SessionHeader,
    SessionManager,
} from "@earendil-works/pi-coding-agent/dist/core/session-manager.js";

export function headerOf(file: string): SessionHeader | undefined {
    const entries: FileEntry[] = loadEntriesFromFile(file);
    const first = entries[0];
    return first?.type === "session" ? first : undefined;
}

export function newestIn(dir: string, cwd?: string): SessionManager | undefined {
    const found: string | null = findMostRecentSession(dir, cwd);
    return found === null ? undefined : SessionManager.open(found);
}

export function folderFor(cwd: string, agentDir?: string): string {
    const dir: string = getDefaultSessionDir(cwd, agentDir);
    return getDefaultSessionDir(cwd) === dir ? dir : agentDir ?? dir;
}

export function checkedId(id: string): string {
    const result: void = assertValidSessionId(id);
    void result;
    return id;
}

export function textsOf(entry: SessionEntry, edit?: ContextEditEntry): number {
    const messages = projectContextEntry(entry, edit);
    // @ts-expect-error the edit argument is required (it may be undefined)
    projectContextEntry(entry);
    return messages.length;
}
