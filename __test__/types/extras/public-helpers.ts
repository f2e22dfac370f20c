// What the command line and the pi extension use of the package, typed as a user gets it:
// listSessions, searchSessions without texts, the grep field names.
import {
    DEFAULT_GREP_FIELDS,
    GREP_FIELDS,
    grepSessions,
    listSessions,
    searchSessions,
    type SessionGrepField,
    type SessionInfo,
    type SessionInfoWithoutText,
} from "pi-session-native";

async function table(cwd: string): Promise<string[]> {
    const withTexts: SessionInfo[] = await listSessions({ cwd, onProgress: (loaded, total, partial) => void [loaded, total, partial?.[0]?.allMessagesText] });
    const rows: SessionInfoWithoutText[] = await listSessions({
        sessionDir: "/tmp/sessions",
        allMessagesText: false,
        onProgress: (_loaded, _total, partial) => void partial?.[0]?.firstMessage,
        signal: AbortSignal.timeout(1000),
    });
    const maybe = (flag: boolean) => listSessions({ allMessagesText: flag });
    const either: SessionInfoWithoutText[] = await maybe(true);
    const found: SessionInfoWithoutText[] = await searchSessions("deploy", { cwd, allMessagesText: false });
    const full: SessionInfo[] = await searchSessions("deploy", { cwd, allMessagesText: true });
    return [...withTexts, ...rows, ...either, ...found, ...full].map((s) => s.id);
}
void table;

const fields: readonly SessionGrepField[] = GREP_FIELDS;
void grepSessions("x", { fields: DEFAULT_GREP_FIELDS });
void grepSessions("x", { fields: fields.filter((f) => f !== "custom") });

// @ts-expect-error: without texts, there is no allMessagesText
void listSessions({ allMessagesText: false }).then((s) => s[0].allMessagesText);
// @ts-expect-error: the field names are read-only
GREP_FIELDS.push("text");

// Session folders and files, by pi's rules.
import { checkSession, findSessionFiles, getAgentDir, resolvePath } from "pi-session-native";
const files: string[] = [...findSessionFiles(), ...findSessionFiles({ cwd: "/p" }), ...findSessionFiles({ sessionDir: resolvePath("~/s", getAgentDir()) })];
void files.map((f) => checkSession(f).findings.length);
// @ts-expect-error: options, not a folder
findSessionFiles("/p");

// The judgment repairSession and `pi-sessions rm` make before touching a file.
import { judgeSessionFile } from "pi-session-native";
const verdict = judgeSessionFile("/tmp/x.jsonl", { sessionDir: "/tmp" });
const said: string = verdict.ok ? `${verdict.target} ${verdict.damaged} ${verdict.identity.ino}` : verdict.reason;
void said;
// @ts-expect-error: a refusal has no identity
void (!verdict.ok && verdict.identity);
