// User code written against @earendil-works/pi-coding-agent@1.6.0: every append method,
// fed with message values typed by @earendil-works/pi-ai (as pi extensions and scripts do).
import type {
    AssistantMessage,
    ImageContent,
    Message,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
} from "@earendil-works/pi-ai";
import { SessionManager } from "@earendil-works/pi-coding-agent";

const usage: Usage = {
    input: 10,
    output: 20,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 30,
    cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 },
};

export function appendEverything(sm: SessionManager): string[] {
    const ids: string[] = [];

    const system: SystemMessage = {
        role: "system",
        content: "You are helpful.",
        sections: { tools: "<tools/>", old: null },
        toolsAdded: [{ name: "read", description: "Read a file", parameters: { type: "object" } }],
        toolsRemoved: [{ name: "write" }],
        timestamp: Date.now(),
    };
    ids.push(sm.appendMessage(system));

    const user: UserMessage = { role: "user", content: "hello", timestamp: Date.now() };
    ids.push(sm.appendMessage(user));

    const image: ImageContent = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
    const text: TextContent = { type: "text", text: "look at this" };
    ids.push(sm.appendMessage({ role: "user", content: [text, image], timestamp: Date.now() }));

    const assistant: AssistantMessage = {
        role: "assistant",
        content: [
            { type: "thinking", thinking: "hmm", thinkingSignature: "sig", redacted: false },
            { type: "text", text: "Reading it." },
            { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt", lines: [1, 2], opts: { x: null } } },
        ],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage,
        stopReason: "toolUse",
        thinkingLevel: "high",
        diagnostics: [{ type: "retry", timestamp: 1, error: { message: "overloaded", code: 529 } }],
        timestamp: Date.now(),
        durationMs: 1234,
    };
    ids.push(sm.appendMessage(assistant));

    const custom: AssistantMessage = { ...assistant, api: "my-custom-api", provider: "my-provider", stopReason: "stop" };
    ids.push(sm.appendMessage(custom));

    const toolResult: ToolResultMessage = {
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "read",
        content: [{ type: "text", text: "file contents" }],
        details: { lines: 2, truncated: false },
        usage,
        nestedCalls: { calls: [{ id: "n1", name: "grep", status: "ok", durationMs: 3 }], complete: true },
        isError: false,
        timestamp: Date.now(),
    };
    ids.push(sm.appendMessage(toolResult));

    const typedResult: ToolResultMessage<{ bytes: number; path?: string }> = {
        role: "toolResult",
        toolCallId: "call_2",
        toolName: "write",
        content: [],
        details: { bytes: 12 },
        isError: false,
        timestamp: Date.now(),
    };
    ids.push(sm.appendMessage(typedResult));

    const anyLlmMessage: Message = user;
    ids.push(sm.appendMessage(anyLlmMessage));

    // Coding-agent custom messages, as object literals (their types are not exported by the root).
    ids.push(
        sm.appendMessage({
            role: "custom",
            customType: "my-extension",
            content: [{ type: "text", text: "injected" }],
            display: true,
            details: { anything: new Date() },
            timestamp: Date.now(),
        }),
    );
    ids.push(
        sm.appendMessage({
            role: "bashExecution",
            command: "ls",
            output: "a.txt\n",
            exitCode: 0,
            cancelled: false,
            truncated: false,
            timestamp: Date.now(),
            excludeFromContext: true,
        }),
    );
    ids.push(
        sm.appendMessage({
            role: "bashExecution",
            command: "sleep 100",
            output: "",
            exitCode: undefined,
            cancelled: true,
            truncated: false,
            fullOutputPath: "/tmp/out.txt",
            timestamp: Date.now(),
        }),
    );

    // @ts-expect-error compaction summaries must go through appendCompaction()
    sm.appendMessage({ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 1 });
    // @ts-expect-error branch summaries must go through branchWithSummary()
    sm.appendMessage({ role: "branchSummary", summary: "s", fromId: null, timestamp: 1 });
    // @ts-expect-error a user message needs a timestamp
    sm.appendMessage({ role: "user", content: "no timestamp" });

    ids.push(sm.appendThinkingLevelChange("medium"));
    ids.push(sm.appendModelChange("anthropic", "claude-sonnet-4-5"));

    const usageEntry = sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage);
    const usageEntry2 = sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage, "warm-up");
    const kind: string = usageEntry.kind;
    const note: string | undefined = usageEntry2.note;
    const usageType: "usage" = usageEntry.type;
    const totalTokens: number = usageEntry.usage.totalTokens;
    ids.push(usageEntry.id, usageEntry2.id, kind, note ?? "", usageType, String(totalTokens));

    ids.push(sm.appendCompaction("summary of earlier work", ids[1] ?? null, 12345));
    ids.push(sm.appendCompaction<{ files: string[] }>("summary", null, 1, { files: ["a.ts"] }, true, usage));
    // @ts-expect-error details must match the explicit type argument
    sm.appendCompaction<{ files: string[] }>("summary", null, 1, { files: "a.ts" });

    ids.push(sm.appendCustomEntry("my-extension-state"));
    ids.push(sm.appendCustomEntry("my-extension-state", { counter: 1, seen: new Set<string>() }));

    ids.push(sm.appendSessionInfo("My session"));

    ids.push(sm.appendCustomMessageEntry("my-extension", "plain text", false));
    ids.push(sm.appendCustomMessageEntry("my-extension", [text, image], true, { source: "hook" }));
    ids.push(sm.appendCustomMessageEntry<{ n: number }>("my-extension", [text], true, { n: 1 }));

    ids.push(sm.appendContextEdit(ids[0]!, null));
    ids.push(sm.appendContextEdit(ids[1]!, { content: "shorter" }));
    ids.push(sm.appendContextEdit(ids[2]!, { content: [{ type: "text", text: "redacted" }] }));
    ids.push(sm.appendContextEdit(ids[3]!, { content: assistant.content }));
    // @ts-expect-error replacement is required (null to omit)
    sm.appendContextEdit(ids[0]!);

    ids.push(sm.appendLabelChange(ids[0]!, "checkpoint"));
    ids.push(sm.appendLabelChange(ids[0]!, undefined));

    const branchFrom = ids[2]!;
    sm.branch(branchFrom);
    ids.push(sm.branchWithSummary(branchFrom, "we tried X"));
    ids.push(sm.branchWithSummary(null, "restart", { reason: "user" }, true, usage));
    sm.resetLeaf();

    const branchedFile: string | undefined = sm.createBranchedSession(branchFrom);
    if (branchedFile) ids.push(branchedFile);

    const persistedEntry = sm.getLeafEntry();
    if (persistedEntry) sm._persist(persistedEntry);

    return ids;
}

export const idsOfMemorySession = appendEverything(SessionManager.inMemory());
