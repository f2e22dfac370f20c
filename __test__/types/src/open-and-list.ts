// User code written against @earendil-works/pi-coding-agent@1.6.0: creating, opening and
// listing sessions. Must compile unchanged against pi-session-native.
import { type NewSessionOptions, type SessionInfo, SessionManager } from "@earendil-works/pi-coding-agent";

const cwd = process.cwd();
const dir = "/tmp/sessions";

// --- factories -------------------------------------------------------------------------
const a: SessionManager = SessionManager.create(cwd);
const b = SessionManager.create(cwd, dir);
const opts: NewSessionOptions = { id: "0198a0e1-0000-7000-8000-000000000000", parentSession: "/tmp/p.jsonl" };
const c = SessionManager.create(cwd, undefined, opts);
const d = SessionManager.create(cwd, dir, {});
const e = SessionManager.open("/tmp/sessions/x.jsonl");
const f = SessionManager.open("/tmp/sessions/x.jsonl", dir);
const g = SessionManager.open("/tmp/sessions/x.jsonl", undefined, "/override/cwd");
const h = SessionManager.continueRecent(cwd);
const i = SessionManager.continueRecent(cwd, dir);
const j = SessionManager.inMemory();
const k = SessionManager.inMemory(cwd);
const l = SessionManager.inMemory(cwd, { id: "abc" });
const m = SessionManager.inMemory(cwd, undefined, a.getHeader() ? [a.getHeader()!, ...a.getEntries()] : []);
const n = SessionManager.forkFrom("/tmp/other/x.jsonl", cwd);
const o = SessionManager.forkFrom("/tmp/other/x.jsonl", cwd, dir, { parentSession: "/tmp/other/x.jsonl" });
const found: string | undefined = SessionManager.findById(cwd, "abc");
const found2 = SessionManager.findById(cwd, "abc", dir);
if (found2 !== undefined) {
    SessionManager.open(found2);
}

// @ts-expect-error the constructor is private
new SessionManager();
// @ts-expect-error cwd must be a string
SessionManager.create(42);

export const managers: SessionManager[] = [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o];
export { found };

// --- session state ---------------------------------------------------------------------
export function describeManager(sm: SessionManager): string {
    const persisted: boolean = sm.isPersisted();
    const file: string | undefined = sm.getSessionFile();
    const id: string = sm.getSessionId();
    const sdir: string = sm.getSessionDir();
    const usesDefault: boolean = sm.usesDefaultSessionDir();
    const name: string | undefined = sm.getSessionName();
    const count: number = sm.getEntryCount();
    const header = sm.getHeader();
    const version: number | undefined = header?.version;
    const parent: string | undefined = header?.parentSession;
    const headerType: "session" | undefined = header?.type;
    return [persisted, file ?? "", id, sdir, usesDefault, name, count, version, parent, headerType, sm.getCwd()].join(" ");
}

export function restart(sm: SessionManager): void {
    const newFile: string | undefined = sm.newSession();
    sm.newSession({ id: "custom-id", parentSession: newFile });
    if (newFile) sm.setSessionFile(newFile);
}

// --- listing ---------------------------------------------------------------------------
function formatInfo(info: SessionInfo): string {
    const created: Date = info.created;
    const modified: Date = info.modified;
    const title = info.name ?? info.firstMessage.slice(0, 40);
    const parent: string | undefined = info.parentSessionPath;
    const messageCount: number = info.messageCount;
    return `${info.id} ${info.path} ${info.cwd} ${title} ${parent ?? "-"} ${messageCount} ${created.toISOString()} ${modified.getTime()} ${info.allMessagesText.length}`;
}

export async function listing(): Promise<void> {
    const ac = new AbortController();
    const all1: SessionInfo[] = await SessionManager.list(cwd);
    const all2 = await SessionManager.list(cwd, dir);
    const all3 = await SessionManager.list(cwd, undefined, (loaded, total) => {
        console.log(`${loaded}/${total}`);
    });
    const all4 = await SessionManager.list(
        cwd,
        dir,
        (loaded: number, total: number, partial?: readonly SessionInfo[]) => {
            if (partial) console.log(partial.map(formatInfo).join("\n"), loaded / total);
        },
        ac.signal,
    );
    const all5 = await SessionManager.list(cwd, dir, undefined, AbortSignal.timeout(1000));

    // listAll overloads: (onProgress?, signal?) and (sessionDir?, onProgress?, signal?)
    const everywhere1 = await SessionManager.listAll();
    const everywhere2 = await SessionManager.listAll((loaded, total) => console.log(loaded, total));
    const everywhere3 = await SessionManager.listAll((loaded, total, partial) => console.log(loaded, total, partial?.length), ac.signal);
    const everywhere4 = await SessionManager.listAll(dir);
    const everywhere5 = await SessionManager.listAll(dir, (loaded, total) => console.log(loaded, total));
    const everywhere6 = await SessionManager.listAll(dir, undefined, ac.signal);
    const everywhere7 = await SessionManager.listAll(undefined, undefined, ac.signal);

    const listings: SessionInfo[][] = [all1, all2, all3, all4, all5, everywhere1, everywhere2, everywhere3, everywhere4, everywhere5, everywhere6, everywhere7];
    for (const list of listings) {
        list.sort((x, y) => y.modified.getTime() - x.modified.getTime());
        console.log(list.map(formatInfo));
    }

    // @ts-expect-error the progress callback cannot take a string as first parameter
    await SessionManager.list(cwd, dir, (loaded: string) => console.log(loaded));
    // @ts-expect-error list() requires a cwd
    await SessionManager.list();
    // @ts-expect-error the result is a promise, not an array
    const notAnArray: SessionInfo[] = SessionManager.listAll();
    void notAnArray;
}
