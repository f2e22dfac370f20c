// Both declaration sets in one program: "pi-session-native" (ours, via tsconfig paths) and
// "@earendil-works/pi-coding-agent" (the reference, with its pi-ai / pi-agent-core types).
// 1. Every exported type of ours is assignable to the reference's and back.
// 2. Values flow between our API and the reference's APIs.
import type { AgentMessage as RefAgentMessage } from "@earendil-works/pi-agent-core";
import type * as ai from "@earendil-works/pi-ai";
import * as ref from "@earendil-works/pi-coding-agent";
import * as refModule from "@earendil-works/pi-coding-agent/dist/core/session-manager.js";
import * as ours from "pi-session-native";

// ---------------------------------------------------------------------------------------
// Type-level helpers
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameKeys<A, B> = Mutual<keyof A, keyof B>;
/** Assignable both ways AND declaring the same (top-level) property names, optional ones included. */
type Same<A, B> = Mutual<A, B> extends true ? SameKeys<A, B> : false;
type Check<T extends true> = T;
/** Public structure of a class instance (drops the nominal private members). */
type Public<T> = { [K in keyof T]: T[K] };
/** Static members of a class (drops `prototype`, whose instance type is nominal). */
type Statics<T> = Omit<T, "prototype">;
/** What ours has beyond the reference: close() and [Symbol.dispose]() (docs/library.md, "Beyond the reference"). */
type Beyond = "close" | typeof Symbol.dispose;
/** Our SessionManager without the additions: the reference's surface. */
type Core<T> = Omit<T, Beyond>;
/** A SessionManager instance (ours or the reference's) compared by its public structure. */
type Norm<T> = T extends ours.SessionManager | ref.SessionManager ? Public<Core<T>> : T;
/**
 * Names of the members of A and B whose parameter lists or return types are not mutually
 * assignable (method parameters are bivariant in plain assignability, so they are compared
 * as tuples here). Overloaded members are compared on their last overload.
 */
type MismatchedMembers<A, B> = {
    [K in keyof A & keyof B]: A[K] extends (...args: infer PA) => infer RA
        ? B[K] extends (...args: infer PB) => infer RB
            ? Mutual<PA, PB> extends true
                ? Mutual<Norm<RA>, Norm<RB>> extends true
                    ? never
                    : K
                : K
            : K
        : Mutual<A[K], B[K]> extends true
          ? never
          : K;
}[keyof A & keyof B];
type None<T extends never> = T;
/** Parameter lists of a function with two overloads. */
type Overloads2<T> = T extends { (...args: infer A1): unknown; (...args: infer A2): unknown } ? [A1, A2] : never;

// Reference types that its package root does not export, derived from exported ones.
type RefUsageEntry = Extract<ref.SessionEntry, { type: "usage" }>;
type RefLabelEntry = Extract<ref.SessionEntry, { type: "label" }>;
type RefReadonlySessionManager = ref.ExtensionContext["sessionManager"];
type RefSessionListProgress = NonNullable<Parameters<typeof ref.SessionManager.list>[2]>;
type RefCustomMessage = Extract<RefAgentMessage, { role: "custom" }>;
type RefBashExecutionMessage = Extract<RefAgentMessage, { role: "bashExecution" }>;
type RefBranchSummaryMessage = Extract<RefAgentMessage, { role: "branchSummary" }>;
type RefCompactionSummaryMessage = Extract<RefAgentMessage, { role: "compactionSummary" }>;

// ---------------------------------------------------------------------------------------
// 1. Types, both ways
export type TypeChecks = [
    Check<Same<ours.SessionHeader, ref.SessionHeader>>,
    Check<Same<ours.NewSessionOptions, ref.NewSessionOptions>>,
    Check<Same<ours.SessionEntryBase, ref.SessionEntryBase>>,
    Check<Same<ours.SessionMessageEntry, ref.SessionMessageEntry>>,
    Check<Same<ours.ThinkingLevelChangeEntry, ref.ThinkingLevelChangeEntry>>,
    Check<Same<ours.ModelChangeEntry, ref.ModelChangeEntry>>,
    Check<Same<ours.UsageEntry, RefUsageEntry>>,
    Check<Same<ours.CompactionEntry, ref.CompactionEntry>>,
    Check<Same<ours.CompactionEntry<{ files: string[] }>, ref.CompactionEntry<{ files: string[] }>>>,
    Check<Same<ours.BranchSummaryEntry, ref.BranchSummaryEntry>>,
    Check<Same<ours.BranchSummaryEntry<number>, ref.BranchSummaryEntry<number>>>,
    Check<Same<ours.CustomEntry, ref.CustomEntry>>,
    Check<Same<ours.CustomEntry<{ n: number }>, ref.CustomEntry<{ n: number }>>>,
    Check<Same<ours.LabelEntry, RefLabelEntry>>,
    Check<Same<ours.SessionInfoEntry, ref.SessionInfoEntry>>,
    Check<Same<ours.CustomMessageEntry, ref.CustomMessageEntry>>,
    Check<Same<ours.CustomMessageEntry<string[]>, ref.CustomMessageEntry<string[]>>>,
    Check<Same<ours.ContextEditEntry, ref.ContextEditEntry>>,
    Check<Same<ours.ContextEditableContent, ref.ContextEditableContent>>,
    Check<Same<ours.SessionEntry, ref.SessionEntry>>,
    Check<Same<ours.SessionEntry["type"], ref.SessionEntry["type"]>>,
    Check<Same<ours.FileEntry, ref.FileEntry>>,
    Check<Same<ours.SessionTreeNode, ref.SessionTreeNode>>,
    Check<Same<ours.ProjectedSessionEntry, ref.ProjectedSessionEntry>>,
    Check<Same<ours.SessionProjection, ref.SessionProjection>>,
    Check<Same<ours.SessionContext, ref.SessionContext>>,
    Check<Same<ours.SessionInfo, ref.SessionInfo>>,
    Check<Same<ours.ReadonlySessionManager, RefReadonlySessionManager>>,
    Check<Same<ours.SessionListProgress, RefSessionListProgress>>,

    // message types (pi-ai, pi-agent-core as augmented by the coding agent)
    Check<Same<ours.AgentMessage, RefAgentMessage>>,
    Check<Same<ours.AgentMessage["role"], RefAgentMessage["role"]>>,
    Check<Same<ours.Message, ai.Message>>,
    Check<Same<ours.UserMessage, ai.UserMessage>>,
    Check<Same<ours.AssistantMessage, ai.AssistantMessage>>,
    Check<Same<ours.ToolResultMessage, ai.ToolResultMessage>>,
    Check<Same<ours.ToolResultMessage<{ a: number; b?: string[] }>, ai.ToolResultMessage<{ a: number; b?: string[] }>>>,
    Check<Same<ours.ToolResultMessage<() => void>, ai.ToolResultMessage<() => void>>>, // both never
    Check<Same<ours.SystemMessage, ai.SystemMessage>>,
    Check<Same<ours.TextContent, ai.TextContent>>,
    Check<Same<ours.ImageContent, ai.ImageContent>>,
    Check<Same<ours.ThinkingContent, ai.ThinkingContent>>,
    Check<Same<ours.ToolCall, ai.ToolCall>>,
    Check<Same<ours.Usage, ai.Usage>>,
    Check<Same<ours.Usage["cost"], ai.Usage["cost"]>>,
    Check<Same<ours.SystemMessage["toolsAdded"], ai.SystemMessage["toolsAdded"]>>,
    Check<Same<ours.AssistantMessage["content"][number], ai.AssistantMessage["content"][number]>>,
    Check<Same<ours.JsonValue, ai.JsonValue>>,
    Check<Same<ours.JsonObject, ai.JsonObject>>,
    Check<Same<ours.Api, ai.Api>>,
    Check<Same<ours.KnownApi, ai.KnownApi>>,
    Check<Same<ours.StopReason, ai.StopReason>>,
    Check<Same<ours.ModelThinkingLevel, ai.ModelThinkingLevel>>,
    Check<Same<ours.Tool, ai.Tool>>,
    Check<Same<ours.AssistantMessageDiagnostic, NonNullable<ai.AssistantMessage["diagnostics"]>[number]>>,
    Check<Same<ours.DeferredHandle, ai.DeferredHandle>>,
    Check<Same<ours.NestedToolCalls, ai.NestedToolCalls>>,
    Check<Same<ours.CustomMessage, RefCustomMessage>>,
    Check<Same<ours.BashExecutionMessage, RefBashExecutionMessage>>,
    Check<Same<ours.BranchSummaryMessage, RefBranchSummaryMessage>>,
    Check<Same<ours.CompactionSummaryMessage, RefCompactionSummaryMessage>>,
];

// SessionManager: same public instance members and statics, with compatible signatures.
export type ClassChecks = [
    Check<SameKeys<Core<ours.SessionManager>, ref.SessionManager>>,
    Check<Mutual<Public<Core<ours.SessionManager>>, Public<ref.SessionManager>>>,
    Check<Mutual<Exclude<keyof ours.SessionManager, keyof ref.SessionManager>, Beyond>>,
    Check<SameKeys<typeof ours.SessionManager, typeof ref.SessionManager>>,
    None<MismatchedMembers<Core<ours.SessionManager>, ref.SessionManager>>,
    None<MismatchedMembers<Statics<typeof ours.SessionManager>, Statics<typeof ref.SessionManager>>>,
    // A reference manager has all of ours but the additions. (The reference's statics no
    // longer stand in for ours: the managers they return have no close().)
    Check<[ref.SessionManager] extends [Core<ours.SessionManager>] ? true : false>,
    Check<Mutual<Parameters<typeof ours.SessionManager.create>, Parameters<typeof ref.SessionManager.create>>>,
    // Statics not returning a SessionManager compare directly, all overloads included.
    Check<Mutual<typeof ours.SessionManager.list, typeof ref.SessionManager.list>>,
    Check<Mutual<typeof ours.SessionManager.listAll, typeof ref.SessionManager.listAll>>,
    Check<Mutual<Overloads2<typeof ours.SessionManager.listAll>, Overloads2<typeof ref.SessionManager.listAll>>>,
    Check<Mutual<typeof ours.SessionManager.findById, typeof ref.SessionManager.findById>>,
    Check<Mutual<Parameters<ours.SessionManager["appendMessage"]>, Parameters<ref.SessionManager["appendMessage"]>>>,
    Check<Mutual<Parameters<typeof ours.SessionManager.list>, Parameters<typeof ref.SessionManager.list>>>,
    Check<Mutual<ReturnType<typeof ours.SessionManager.list>, ReturnType<typeof ref.SessionManager.list>>>,
];

// Free functions and the constant.
export type FunctionChecks = [
    Check<Mutual<typeof ours.buildContextEntries, typeof ref.buildContextEntries>>,
    Check<Mutual<typeof ours.buildSessionContext, typeof ref.buildSessionContext>>,
    Check<Mutual<typeof ours.buildSessionProjection, typeof ref.buildSessionProjection>>,
    Check<Mutual<typeof ours.getLatestCompactionEntry, typeof ref.getLatestCompactionEntry>>,
    Check<Mutual<typeof ours.migrateSessionEntries, typeof ref.migrateSessionEntries>>,
    Check<Mutual<typeof ours.parseSessionEntries, typeof ref.parseSessionEntries>>,
    Check<Mutual<typeof ours.sessionEntryToContextMessages, typeof ref.sessionEntryToContextMessages>>,
    Check<Mutual<typeof ours.CURRENT_SESSION_VERSION, typeof ref.CURRENT_SESSION_VERSION>>,
    Check<Mutual<typeof ours.CURRENT_SESSION_VERSION, 3>>,
    // The module-level helpers that only the reference's session-manager module exports.
    Check<Mutual<typeof ours.assertValidSessionId, typeof refModule.assertValidSessionId>>,
    Check<Mutual<typeof ours.projectContextEntry, typeof refModule.projectContextEntry>>,
    Check<Mutual<typeof ours.getDefaultSessionDir, typeof refModule.getDefaultSessionDir>>,
    Check<Mutual<typeof ours.loadEntriesFromFile, typeof refModule.loadEntriesFromFile>>,
    Check<Mutual<typeof ours.findMostRecentSession, typeof refModule.findMostRecentSession>>,
];

// ---------------------------------------------------------------------------------------
// 2. Values crossing between the two packages

// An extension reads pi's ctx.sessionManager with helpers written against our types...
export function fromExtension(ctx: ref.ExtensionContext): ours.SessionContext {
    const view: ours.ReadonlySessionManager = ctx.sessionManager;
    const entries: ours.SessionEntry[] = ctx.sessionManager.getEntries();
    const tree: ours.SessionTreeNode[] = ctx.sessionManager.getTree();
    const header: ours.SessionHeader | null = ctx.sessionManager.getHeader();
    console.log(view.getSessionId(), tree.length, header?.cwd);
    return ours.buildSessionContext(entries, ctx.sessionManager.getLeafId());
}

// ...and our manager can be handed to code typed with the reference's read-only view.
export function toExtensionView(sm: ours.SessionManager): RefReadonlySessionManager {
    return sm;
}

// Our results feed reference APIs that take AgentMessage[] / SessionEntry[].
export function toReference(sm: ours.SessionManager): ai.Message[] {
    const ctx = sm.buildSessionContext();
    const messages: RefAgentMessage[] = ctx.messages;
    const refCtx: ref.SessionContext = ctx;
    const refEntries: ref.SessionEntry[] = sm.getEntries();
    const refProjection: ref.SessionProjection = ours.buildSessionProjection(refEntries);
    const kept: ref.CompactionEntry | null = ours.getLatestCompactionEntry(refEntries);
    const infoList: Promise<ref.SessionInfo[]> = ours.SessionManager.list(sm.getCwd());
    console.log(refCtx.thinkingLevel, refProjection.entries.length, kept?.id, infoList);
    return ref.convertToLlm(messages);
}

// The reference's SessionManager (e.g. AgentSession.sessionManager) satisfies our class type
// but for the additions (close, [Symbol.dispose]), because ours declares no private members.
export function fromReferenceManager(session: ref.AgentSession): Omit<ours.SessionManager, "close" | typeof Symbol.dispose> {
    return session.sessionManager;
}

// pi-ai values (built by providers) go into our append methods.
export function appendFromProvider(sm: ours.SessionManager, reply: ai.AssistantMessage, result: ai.ToolResultMessage, system: ai.SystemMessage): void {
    sm.appendMessage(reply);
    sm.appendMessage(result);
    sm.appendMessage(system);
    sm.appendUsage("cache_warm", reply.provider, reply.model, reply.usage);
    sm.appendCustomMessageEntry("x", reply.content.filter((c): c is ai.TextContent => c.type === "text"), true);
}

// Known limitation (cannot be expressed): the reference's SessionManager class has private
// members, so TypeScript treats it nominally and no other declaration of the class, ours
// included, is assignable to it. Reference APIs typed with the concrete class, such as
// createAgentSession({ sessionManager }), need the reference's own SessionManager.
export function limitation(sm: ours.SessionManager): void {
    // @ts-expect-error nominal private members of the reference class
    const refSm: ref.SessionManager = sm;
    void refSm;
}
