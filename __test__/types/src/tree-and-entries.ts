// User code written against @earendil-works/pi-coding-agent@1.6.0: walking the tree,
// narrowing entries on `type` and messages on `role` (exhaustively, so the unions must
// have exactly the same members), reading entries and branches.
import type { TextContent } from "@earendil-works/pi-ai";
import {
    type BranchSummaryEntry,
    type CompactionEntry,
    type ContextEditEntry,
    type CustomEntry,
    type CustomMessageEntry,
    type ModelChangeEntry,
    type SessionEntry,
    type SessionEntryBase,
    type SessionInfoEntry,
    SessionManager,
    type SessionMessageEntry,
    type SessionTreeNode,
    type ThinkingLevelChangeEntry,
} from "@earendil-works/pi-coding-agent";

function assertNever(value: never): never {
    throw new Error(`unexpected ${JSON.stringify(value)}`);
}

function textOf(content: string | readonly { type: string }[]): string {
    if (typeof content === "string") return content;
    return content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("");
}

/** Describe a message entry; the switch on role is exhaustive over AgentMessage. */
export function describeMessage(entry: SessionMessageEntry): string {
    const msg = entry.message;
    switch (msg.role) {
        case "user":
            return `user: ${textOf(msg.content)}`;
        case "assistant": {
            const tools = msg.content.filter((c) => c.type === "toolCall").map((c) => `${c.name}(${JSON.stringify(c.arguments)})`);
            const thinking = msg.content.filter((c) => c.type === "thinking").map((c) => c.thinking);
            const cost: number = msg.usage.cost.total;
            return `assistant[${msg.provider}/${msg.model} ${msg.api} ${msg.stopReason} ${msg.errorMessage ?? ""}]: ${tools.join(",")} ${thinking.length} ${cost}`;
        }
        case "toolResult":
            return `${msg.toolName}#${msg.toolCallId} error=${msg.isError} ${textOf(msg.content)} ${JSON.stringify(msg.details)}`;
        case "system":
            return `system: ${textOf(msg.content)} tools+${msg.toolsAdded?.length ?? 0}`;
        case "custom":
            return `custom(${msg.customType}, display=${msg.display}): ${textOf(msg.content)}`;
        case "bashExecution":
            return `$ ${msg.command} -> ${msg.exitCode ?? "?"}${msg.cancelled ? " (cancelled)" : ""}: ${msg.output}`;
        case "branchSummary":
            return `branch summary from ${msg.fromId ?? "root"}: ${msg.summary}`;
        case "compactionSummary":
            return `compaction summary (${msg.tokensBefore} tokens): ${msg.summary}`;
        default:
            return assertNever(msg);
    }
}

/** Exhaustive switch on entry.type: our SessionEntry union must have the same members. */
export function describeEntry(entry: SessionEntry): string {
    const base: SessionEntryBase = entry;
    const prefix = `${base.id} <- ${base.parentId ?? "root"} @ ${base.timestamp}`;
    switch (entry.type) {
        case "message":
            return `${prefix} ${describeMessage(entry)}`;
        case "thinking_level_change": {
            const e: ThinkingLevelChangeEntry = entry;
            return `${prefix} thinking=${e.thinkingLevel}`;
        }
        case "model_change": {
            const e: ModelChangeEntry = entry;
            return `${prefix} model=${e.provider}/${e.modelId}`;
        }
        case "usage":
            return `${prefix} usage ${entry.kind} ${entry.provider}/${entry.model} ${entry.usage.totalTokens} ${entry.note ?? ""}`;
        case "compaction": {
            const e: CompactionEntry = entry;
            const system = e.systemMessage ? textOf(e.systemMessage.content) : "";
            return `${prefix} compaction kept=${e.firstKeptEntryId} before=${e.tokensBefore} hook=${e.fromHook ?? false} ${e.summary} ${JSON.stringify(e.details)} ${e.usage?.output ?? 0} ${system}`;
        }
        case "branch_summary": {
            const e: BranchSummaryEntry = entry;
            return `${prefix} branch summary from ${e.fromId}: ${e.summary} ${e.usage?.input ?? 0}`;
        }
        case "custom": {
            const e: CustomEntry = entry;
            return `${prefix} custom ${e.customType} ${JSON.stringify(e.data)}`;
        }
        case "custom_message": {
            const e: CustomMessageEntry = entry;
            return `${prefix} custom message ${e.customType} display=${e.display} ${textOf(e.content)}`;
        }
        case "context_edit": {
            const e: ContextEditEntry = entry;
            if (e.replacement === null) return `${prefix} omit ${e.targetId}`;
            const content = e.replacement.content;
            const summary = typeof content === "string" ? content : content.map((c) => c.type).join(",");
            return `${prefix} edit ${e.targetId}: ${summary}`;
        }
        case "label":
            return `${prefix} label ${entry.targetId} = ${entry.label ?? "(cleared)"}`;
        case "session_info": {
            const e: SessionInfoEntry = entry;
            return `${prefix} name=${e.name ?? ""}`;
        }
        default:
            return assertNever(entry);
    }
}

export function walkTree(sm: SessionManager): string[] {
    const lines: string[] = [];
    const visit = (node: SessionTreeNode, depth: number): void => {
        const label = node.label ? ` [${node.label} @ ${node.labelTimestamp ?? "?"}]` : "";
        lines.push(`${"  ".repeat(depth)}${describeEntry(node.entry)}${label}`);
        for (const child of node.children) visit(child, depth + 1);
    };
    const roots: SessionTreeNode[] = sm.getTree();
    for (const root of roots) visit(root, 0);

    // Iterative walk with an explicit stack
    const stack: Array<{ node: SessionTreeNode; depth: number }> = roots.map((node) => ({ node, depth: 0 }));
    let deepest = 0;
    while (stack.length > 0) {
        const { node, depth } = stack.pop()!;
        deepest = Math.max(deepest, depth);
        stack.push(...node.children.map((child) => ({ node: child, depth: depth + 1 })));
    }
    lines.push(`depth ${deepest}`);
    return lines;
}

export function readEntries(sm: SessionManager): void {
    const leafId: string | null = sm.getLeafId();
    const leaf: SessionEntry | undefined = sm.getLeafEntry();
    const entries: SessionEntry[] = sm.getEntries();
    const branch: SessionEntry[] = sm.getBranch();
    const branchFrom = leafId ? sm.getBranch(leafId) : [];
    const children: SessionEntry[] = leafId ? sm.getChildren(leafId) : [];
    const byId = leafId ? sm.getEntry(leafId) : undefined;
    const label: string | undefined = leafId ? sm.getLabel(leafId) : undefined;

    // Filtering with type predicates, the way extensions rebuild their state.
    const state = entries
        .filter((e): e is CustomEntry<{ counter: number }> => e.type === "custom" && e.customType === "my-extension-state")
        .map((e) => e.data?.counter ?? 0);
    const messages = branch.filter((e): e is SessionMessageEntry => e.type === "message").map((e) => e.message);
    const userTexts = messages.flatMap((m) => (m.role === "user" ? [textOf(m.content)] : []));
    const compactions = entries.filter((e) => e.type === "compaction");
    const lastCompaction = compactions.at(-1);
    if (lastCompaction) {
        // Narrowed by the filter callback (TS >= 5.5 infers the predicate)
        const kept: string = lastCompaction.type === "compaction" ? lastCompaction.firstKeptEntryId : "";
        void kept;
    }

    // @ts-expect-error a label entry has no message
    void (entries[0]?.type === "label" && entries[0].message);

    console.log(leaf?.type, branchFrom.length, children.length, byId?.id, label, state, userTexts, entries.length);
}
