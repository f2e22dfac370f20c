// What pi-session-native exports beyond the reference's package root, used on its own:
// no @earendil-works package is part of this program (the declarations are self-contained),
// and index.d.ts itself is type-checked (skipLibCheck: false).
import {
    type AgentMessage,
    type AssistantMessage,
    type BashExecutionMessage,
    type CustomMessage,
    type ImageContent,
    type LabelEntry,
    type Message,
    type ReadonlySessionManager,
    type SessionEntry,
    type SessionListProgress,
    SessionManager,
    type TextContent,
    type ThinkingContent,
    type ToolCall,
    type ToolResultMessage,
    type Usage,
    type UsageEntry,
    type UserMessage,
} from "pi-session-native";

// Apps can add their own agent messages, as with pi-agent-core's CustomAgentMessages.
interface ArtifactMessage {
    role: "artifact";
    uri: string;
    timestamp: number;
}
declare module "pi-session-native" {
    interface CustomAgentMessages {
        artifact: ArtifactMessage;
    }
}

const usage: Usage = {
    input: 1,
    output: 2,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 3,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, totalFromProvider: true },
};

export function messages(sm: SessionManager): AgentMessage[] {
    const text: TextContent = { type: "text", text: "hi" };
    const image: ImageContent = { type: "image", data: "", mimeType: "image/png" };
    const thinking: ThinkingContent = { type: "thinking", thinking: "…", redacted: true };
    const call: ToolCall = { type: "toolCall", id: "c1", name: "ls", arguments: { dir: "." } };
    const user: UserMessage = { role: "user", content: [text, image], timestamp: 0 };
    const assistant: AssistantMessage = {
        role: "assistant",
        content: [thinking, text, call],
        api: "openai-responses",
        provider: "openai",
        model: "gpt-5",
        usage,
        stopReason: "toolUse",
        timestamp: 0,
    };
    const result: ToolResultMessage<{ files: string[] }> = {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "ls",
        content: [text],
        details: { files: ["a"] },
        isError: false,
        timestamp: 0,
    };
    // @ts-expect-error tool result details must be JSON compatible (functions are not)
    const bad: ToolResultMessage<() => void> = result;
    void bad;
    const custom: CustomMessage<{ n: number }> = { role: "custom", customType: "x", content: "c", display: false, details: { n: 1 }, timestamp: 0 };
    const bash: BashExecutionMessage = { role: "bashExecution", command: "ls", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 0 };
    const llm: Message[] = [user, assistant, result];
    for (const m of [...llm, custom, bash]) {
        if (m.role !== "system") sm.appendMessage(m);
    }
    const artifact: ArtifactMessage = { role: "artifact", uri: "file:///a", timestamp: 0 };
    const all: AgentMessage[] = [...llm, custom, bash, artifact];
    return all.filter((m) => m.role !== "artifact" || m.uri.length > 0);
}

export function extraEntries(entries: SessionEntry[]): string[] {
    const usageEntries = entries.filter((e): e is UsageEntry => e.type === "usage");
    const labels = entries.filter((e): e is LabelEntry => e.type === "label");
    return [...usageEntries.map((e) => `${e.kind}:${e.usage.totalTokens}:${e.note ?? ""}`), ...labels.map((l) => `${l.targetId}=${l.label ?? ""}`)];
}

export async function progress(view: ReadonlySessionManager): Promise<number> {
    const onProgress: SessionListProgress = (loaded, total, partial) => {
        console.log(loaded, total, partial?.map((s) => s.id));
    };
    const infos = await SessionManager.list(view.getCwd(), view.getSessionDir(), onProgress, new AbortController().signal);
    // @ts-expect-error the read-only view has no append methods
    view.appendSessionInfo("x");
    // @ts-expect-error SessionListProgress receives numbers
    const wrong: SessionListProgress = (loaded: string) => console.log(loaded);
    void wrong;
    return infos.length;
}

export const readonlyView: ReadonlySessionManager = SessionManager.inMemory();

// Accounting: what only this package exports.
import {
    getSessionStats,
    getUsageCostBreakdown,
    type SessionStats,
    type UsageCostBreakdownEntry,
    type UsageReport,
    type UsageReportRow,
    usageReport,
} from "pi-session-native";

export async function accounting(file: string, manager: SessionManager): Promise<number> {
    const stats: SessionStats = getSessionStats(file);
    const again: SessionStats = getSessionStats(manager);
    const rows: UsageCostBreakdownEntry[] = getUsageCostBreakdown(manager.getEntries());
    const report: UsageReport = await usageReport({ groupBy: "week", timezone: "Europe/Berlin", since: "2024-01-01", onProgress: (loaded: number, total: number) => void (loaded + total) });
    const first: UsageReportRow | undefined = report.rows[0];
    return stats.tokens.total + again.cost + (rows[0]?.tokens ?? 0) + (first?.cost ?? 0) + report.totals.sessions;
}

// close() and [Symbol.dispose]() free a manager now (`using` on TypeScript 5.2+).
export function closing(file: string): number {
    const sm = SessionManager.open(file);
    const count = sm.getEntryCount();
    sm.close();
    const disposable: Disposable = SessionManager.inMemory();
    disposable[Symbol.dispose]();
    return count;
}
