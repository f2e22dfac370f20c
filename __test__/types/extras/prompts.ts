// listPrompts as the pi package's prompt picker uses it: batches as they come, progress, abort.
import { listPrompts, type PromptInfo } from "pi-session-native";

async function prompts(cwd: string, sessionDir: string, signal: AbortSignal): Promise<string[]> {
    const shown: PromptInfo[] = [];
    const all: PromptInfo[] = await listPrompts({
        cwd,
        sessionDir,
        scope: "all",
        signal,
        onPrompts: (batch) => shown.push(...batch),
        onProgress: (loaded, total) => void `${loaded}/${total}`,
    });
    return [...all, ...shown].map((p) => `${p.text} ${p.timestamp ?? "-"} ${p.sessionId ?? "-"} ${p.entryId ?? "-"} ${p.cwd} ${p.sessionFile}`);
}
void prompts;

// @ts-expect-error: scope is "project" or "all"
void listPrompts({ scope: "everywhere" });
// @ts-expect-error: a batch is an array of prompts
void listPrompts({ onPrompts: (batch: string) => batch });
