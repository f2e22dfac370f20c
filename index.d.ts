/**
 * pi-session-native: a native (Rust, napi-rs) drop-in replacement for the session API of
 * `@earendil-works/pi-coding-agent@1.6.0` (`SessionManager` and the session free functions).
 *
 * Replace
 *   import { SessionManager } from "@earendil-works/pi-coding-agent";
 * with
 *   import { SessionManager } from "pi-session-native";
 *
 * These declarations are self-contained: the message types of `@earendil-works/pi-ai` and
 * `@earendil-works/pi-agent-core` are re-declared structurally below, so the package does
 * not need those packages installed, and their values are assignable to ours (and ours to
 * theirs) wherever both are used.
 *
 * Differences that TypeScript cannot bridge:
 * - The reference's `SessionManager` class has private members, which makes it nominal:
 *   our `SessionManager` is not assignable to the reference's class type (e.g.
 *   `createAgentSession({ sessionManager })`). It is assignable to the reference's
 *   `ReadonlySessionManager` (`ctx.sessionManager`), and the reference's instances are
 *   assignable to ours.
 * - Custom agent messages added by augmenting pi-agent-core's `CustomAgentMessages` must also
 *   be added to ours (`declare module "pi-session-native" { interface CustomAgentMessages {...} }`).
 */

// ============================================================================
// JSON helpers (structural copies of @earendil-works/pi-ai)
// ============================================================================

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export type JsonObject = {
    [key: string]: JsonValue;
};

type IsAny<T> = 0 extends 1 & T ? true : false;
type IsExactlyJsonValue<T> = [T] extends [JsonValue] ? ([JsonValue] extends [T] ? true : false) : false;
type IsJsonProperty<T> = IsAny<T> extends true
    ? false
    : unknown extends T
      ? false
      : [Exclude<T, undefined>] extends [never]
        ? true
        : IsJsonCompatible<Exclude<T, undefined>>;
type InvalidJsonKeys<T extends object> = {
    [TKey in keyof T]-?: TKey extends string | number ? (IsJsonProperty<T[TKey]> extends true ? never : TKey) : TKey;
}[keyof T];
type IsJsonCompatible<T> = IsAny<T> extends true
    ? false
    : unknown extends T
      ? false
      : IsExactlyJsonValue<T> extends true
        ? true
        : T extends null | boolean | number | string
          ? true
          : T extends undefined
            ? false
            : T extends readonly (infer TItem)[]
              ? IsJsonCompatible<TItem>
              : T extends (...args: never[]) => unknown
                ? false
                : T extends object
                  ? [InvalidJsonKeys<T>] extends [never]
                    ? true
                    : false
                  : false;

/** The JSON representation of a typed in-memory value. Optional object properties remain optional. */
export type JsonRepresentation<T> = IsAny<T> extends true
    ? JsonValue
    : unknown extends T
      ? JsonValue
      : [T] extends [JsonValue]
        ? T
        : T extends readonly unknown[]
          ? { [TKey in keyof T]: JsonRepresentation<Exclude<T[TKey], undefined>> }
          : T extends object
            ? { [TKey in keyof T]: JsonRepresentation<Exclude<T[TKey], undefined>> }
            : never;

// ============================================================================
// LLM message types (structural copies of @earendil-works/pi-ai 1.6.0)
// ============================================================================

export type KnownApi =
    | "openai-completions"
    | "mistral-conversations"
    | "openai-responses"
    | "azure-openai-responses"
    | "openai-codex-responses"
    | "anthropic-messages"
    | "bedrock-converse-stream"
    | "google-generative-ai"
    | "google-vertex"
    | "pi-messages";
export type Api = KnownApi | (string & {});
export type ProviderId = string;
export type ModelThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";
export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

export interface TextContent {
    type: "text";
    text: string;
    textSignature?: string;
}

export interface ThinkingContent {
    type: "thinking";
    thinking: string;
    thinkingSignature?: string;
    /** When true, the thinking content was redacted by safety filters (payload kept in `thinkingSignature`). */
    redacted?: boolean;
}

export interface ImageContent {
    type: "image";
    /** Base64-encoded image data. */
    data: string;
    mimeType: string;
}

export interface ToolCall {
    type: "toolCall";
    id: string;
    name: string;
    arguments: JsonObject;
    thoughtSignature?: string;
    /** OpenAI Responses namespace for calls to dynamically loaded or namespaced tools. */
    namespace?: string;
    /** Set when the model's arguments text was not a valid JSON object (`arguments` is then `{}`). */
    argumentsError?: string;
}

export interface Usage {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    /** Subset of `cacheWrite` written with 1h retention. Only Anthropic reports this split. */
    cacheWrite1h?: number;
    /** Reasoning/thinking tokens, a subset of `output`, when the provider reports them. */
    reasoning?: number;
    totalTokens: number;
    cost: {
        input: number;
        output: number;
        cacheRead: number;
        cacheWrite: number;
        /** Billed cost reported by the provider when supported, otherwise the catalog estimate. */
        total: number;
        /** True when `total` is the billed cost reported by the provider. */
        totalFromProvider?: boolean;
    };
}

export type GrammarFormat = "openai_lark" | "openai_regex";
export type GrammarVariants = Partial<Record<GrammarFormat, string>>;
export type ConstrainedSamplingConfig =
    | {
          type: "json_schema";
          strict: "prefer" | "require";
      }
    | {
          type: "grammar";
          variants: GrammarVariants;
      };

/** A tool the model may call. `parameters` is the JSON Schema of its arguments. */
export interface Tool<TParameters extends object = object> {
    name: string;
    description: string;
    parameters: TParameters;
    constrainedSampling?: false | ConstrainedSamplingConfig;
}

export interface ToolReference {
    name: string;
}

/** System instructions and tool declarations at one point in the transcript. */
export interface SystemMessage {
    role: "system";
    /** Instruction text. On the leading message this is the base prompt; later, additional instructions. */
    content: string | TextContent[];
    /** Named, ordered prompt sections; later messages replace sections by name, `null` removes one. */
    sections?: Record<string, string | null>;
    /** Complete definitions of tools that become available at this point. */
    toolsAdded?: Tool[];
    /** Tools that stop being available at this point. */
    toolsRemoved?: ToolReference[];
    timestamp: number;
}

export interface UserMessage {
    role: "user";
    content: string | (TextContent | ImageContent)[];
    timestamp: number;
}

export interface DiagnosticErrorInfo {
    name?: string;
    message: string;
    stack?: string;
    code?: string | number;
}

export interface AssistantMessageDiagnostic {
    type: string;
    timestamp: number;
    error?: DiagnosticErrorInfo;
    details?: JsonObject;
}

export interface DeferredHandle {
    provider: string;
    modelId: string;
    api: string;
    /** Provider token, such as a response id or batch id plus row id. */
    id: string;
    expiresAt?: number;
    pollAfterMs?: number;
    /** Provider conversion data required to reconstruct the final assistant message. */
    data?: JsonValue;
}

export interface AssistantMessage {
    role: "assistant";
    content: (TextContent | ThinkingContent | ToolCall)[];
    api: Api;
    provider: ProviderId;
    model: string;
    responseModel?: string;
    responseId?: string;
    /** Exact provider-native effort level used for this response. */
    providerThinkingLevel?: string;
    /** Pi thinking level the agent loop requested for this response. */
    thinkingLevel?: ModelThinkingLevel;
    diagnostics?: AssistantMessageDiagnostic[];
    usage: Usage;
    stopReason: StopReason;
    deferred?: DeferredHandle;
    errorMessage?: string;
    rawStopReason?: string;
    /** Provider indication of whether the model explicitly ended its turn. */
    endTurn?: boolean;
    /** Unix timestamp in milliseconds when the request started. */
    timestamp: number;
    /** Milliseconds from `timestamp` until the response ended. */
    durationMs?: number;
}

/** A tool call that another tool made while it ran, for example from a codemode script. */
export interface NestedToolCallRecord {
    id: string;
    name: string;
    /** Omitted when over the size limits; `argumentsBytes` then gives their size. */
    arguments?: JsonObject;
    /** UTF-8 size of the arguments as JSON, set when `arguments` is omitted. */
    argumentsBytes?: number;
    /** `unfinished`: the call was still running when the calling tool finished. */
    status: "ok" | "error" | "unfinished";
    durationMs?: number;
    /** Error text, truncated. */
    error?: string;
}

/** Bounded record of the nested calls a tool made. Results are not recorded. */
export interface NestedToolCalls {
    calls: NestedToolCallRecord[];
    /** False when calls were dropped, arguments omitted, or calls had not finished. */
    complete: boolean;
}

/** Tool result message. `TDetails` must be JSON compatible (otherwise the type is `never`). */
export type ToolResultMessage<TDetails = JsonValue> = IsJsonCompatible<TDetails> extends true
    ? {
          role: "toolResult";
          toolCallId: string;
          toolName: string;
          content: (TextContent | ImageContent)[];
          details?: JsonRepresentation<TDetails>;
          /** Usage from the tool execution itself, if available. Not part of main LLM context accounting. */
          usage?: Usage;
          /** Calls this tool made to other tools. Kept for the session record; not sent to the model. */
          nestedCalls?: NestedToolCalls;
          isError: boolean;
          /** Unix timestamp in milliseconds when the result was created. */
          timestamp: number;
          /** Milliseconds the tool's execution took. Absent for legacy results. */
          durationMs?: number;
      }
    : never;

/** LLM message (pi-ai `Message`). */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

// ============================================================================
// Coding-agent custom messages (structural copies of pi-coding-agent core/messages)
// ============================================================================

/** Message type for bash executions via the ! command. */
export interface BashExecutionMessage {
    role: "bashExecution";
    command: string;
    output: string;
    exitCode: number | undefined;
    cancelled: boolean;
    truncated: boolean;
    fullOutputPath?: string;
    timestamp: number;
    /** If true, this message is excluded from LLM context (!! prefix) */
    excludeFromContext?: boolean;
}

/** Message type for extension-injected messages via sendMessage(). */
export interface CustomMessage<T = unknown> {
    role: "custom";
    customType: string;
    content: string | (TextContent | ImageContent)[];
    display: boolean;
    details?: T;
    timestamp: number;
}

export interface BranchSummaryMessage {
    role: "branchSummary";
    summary: string;
    fromId: string | null;
    timestamp: number;
}

export interface CompactionSummaryMessage {
    role: "compactionSummary";
    summary: string;
    tokensBefore: number;
    timestamp: number;
}

/**
 * Custom agent messages, mirroring pi-agent-core's `CustomAgentMessages` as augmented by
 * the coding agent. Extensible by declaration merging, like the original:
 *
 * ```ts
 * declare module "pi-session-native" {
 *   interface CustomAgentMessages { artifact: ArtifactMessage }
 * }
 * ```
 */
export interface CustomAgentMessages {
    bashExecution: BashExecutionMessage;
    custom: CustomMessage;
    branchSummary: BranchSummaryMessage;
    compactionSummary: CompactionSummaryMessage;
}

/** AgentMessage: union of LLM messages and custom messages (pi-agent-core `AgentMessage`). */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

// ============================================================================
// Session file format
// ============================================================================

export declare const CURRENT_SESSION_VERSION = 3;

export interface SessionHeader {
    type: "session";
    version?: number;
    id: string;
    timestamp: string;
    cwd: string;
    parentSession?: string;
}

export interface NewSessionOptions {
    id?: string;
    parentSession?: string;
}

export interface SessionEntryBase {
    type: string;
    id: string;
    parentId: string | null;
    timestamp: string;
}

export interface SessionMessageEntry extends SessionEntryBase {
    type: "message";
    message: AgentMessage;
}

export interface ThinkingLevelChangeEntry extends SessionEntryBase {
    type: "thinking_level_change";
    thinkingLevel: string;
}

export interface ModelChangeEntry extends SessionEntryBase {
    type: "model_change";
    provider: string;
    modelId: string;
}

export interface UsageEntry extends SessionEntryBase {
    type: "usage";
    /** Arbitrary usage category, such as "cache_warm". */
    kind: string;
    provider: string;
    model: string;
    usage: Usage;
    /** Optional human-readable qualifier for usage notices. */
    note?: string;
}

export interface CompactionEntry<T = unknown> extends SessionEntryBase {
    type: "compaction";
    summary: string;
    firstKeptEntryId: string;
    tokensBefore: number;
    /** Extension-specific data (e.g., ArtifactIndex, version markers for structured compaction) */
    details?: T;
    /** Usage from the LLM call(s) that generated this summary, if available */
    usage?: Usage;
    /** True if generated by an extension, undefined/false if pi-generated (backward compatible) */
    fromHook?: boolean;
    /** Complete prompt and tool state at this compaction boundary. */
    systemMessage?: SystemMessage;
}

export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
    type: "branch_summary";
    fromId: string;
    summary: string;
    /** Extension-specific data (not sent to LLM) */
    details?: T;
    /** Usage from the LLM call that generated this summary, if available */
    usage?: Usage;
    /** True if generated by an extension, false if pi-generated */
    fromHook?: boolean;
}

/**
 * Custom entry for extensions to store extension-specific data in the session.
 * Use customType to identify your extension's entries.
 * Does NOT participate in LLM context (ignored by buildSessionContext).
 * For injecting content into context, see CustomMessageEntry.
 */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
    type: "custom";
    customType: string;
    data?: T;
}

/** Label entry for user-defined bookmarks/markers on entries. */
export interface LabelEntry extends SessionEntryBase {
    type: "label";
    targetId: string;
    label: string | undefined;
}

/** Session metadata entry (e.g., user-defined display name). */
export interface SessionInfoEntry extends SessionEntryBase {
    type: "session_info";
    name?: string;
}

/**
 * Custom message entry for extensions to inject messages into LLM context.
 * Unlike CustomEntry, this DOES participate in LLM context (converted to a user message
 * in buildSessionContext()). `details` is extension-specific metadata (not sent to LLM).
 * `display`: false = hidden in the TUI, true = rendered with distinct styling.
 */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
    type: "custom_message";
    customType: string;
    content: string | (TextContent | ImageContent)[];
    details?: T;
    display: boolean;
}

/** Content that an append-only context edit may replace without changing message metadata. */
export type ContextEditableContent =
    | UserMessage["content"]
    | AssistantMessage["content"]
    | ToolResultMessage["content"]
    | CustomMessage["content"];

/** Append-only change to one earlier entry's contribution to model context. */
export interface ContextEditEntry extends SessionEntryBase {
    type: "context_edit";
    targetId: string;
    /** Null omits the target from model context. A value replaces only its content. */
    replacement: {
        content: ContextEditableContent;
    } | null;
}

/** Session entry - has id/parentId for tree structure (returned by "read" methods in SessionManager) */
export type SessionEntry =
    | SessionMessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | UsageEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | ContextEditEntry
    | LabelEntry
    | SessionInfoEntry;

/** Raw file entry (includes header) */
export type FileEntry = SessionHeader | SessionEntry;

/** Tree node for getTree() - defensive copy of session structure */
export interface SessionTreeNode {
    entry: SessionEntry;
    children: SessionTreeNode[];
    /** Resolved label for this entry, if any */
    label?: string;
    /** Timestamp of the latest label change for this entry, if any */
    labelTimestamp?: string;
}

export interface ProjectedSessionEntry {
    /** Raw append-only entry that owns this projected contribution. */
    sourceEntry: SessionEntry;
    /** Model-visible messages after context edits. Empty for state-only entries and omissions. */
    messages: AgentMessage[];
}

export interface SessionProjection {
    entries: ProjectedSessionEntry[];
    messages: AgentMessage[];
    thinkingLevel: string;
    model: {
        provider: string;
        modelId: string;
    } | null;
}

export interface SessionContext {
    messages: AgentMessage[];
    thinkingLevel: string;
    model: {
        provider: string;
        modelId: string;
    } | null;
}

export interface SessionInfo {
    path: string;
    id: string;
    /** Working directory where the session was started. Empty string for old sessions. */
    cwd: string;
    /** User-defined display name from session_info entries. */
    name?: string;
    /** Path to the parent session (if this session was forked). */
    parentSessionPath?: string;
    created: Date;
    modified: Date;
    messageCount: number;
    firstMessage: string;
    allMessagesText: string;
}

/** The read-only view of a SessionManager that pi hands to extensions (`ctx.sessionManager`). */
export type ReadonlySessionManager = Pick<
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

/** A SessionInfo without `allMessagesText`: what `listSessions` and `searchSessions` give with `allMessagesText: false`. */
export type SessionInfoWithoutText = Omit<SessionInfo, "allMessagesText">;

/** Progress callback of SessionManager.list()/listAll() (`T`: SessionInfoWithoutText for listings without texts). */
export type SessionListProgress<T extends SessionInfoWithoutText = SessionInfo> = (
    loaded: number,
    total: number,
    /** Sessions loaded so far, sorted by activity. Present on periodic updates. */
    partialSessions?: readonly T[],
) => void;

// ============================================================================
// Free functions
// ============================================================================

/** Migrate entries in place to the current session version (v1 -> v2 -> v3). */
export declare function migrateSessionEntries(entries: FileEntry[]): void;

/** Parse JSONL session file content into entries (malformed lines are skipped). */
export declare function parseSessionEntries(content: string): FileEntry[];

/** The latest compaction entry in `entries`, or null. */
export declare function getLatestCompactionEntry(entries: SessionEntry[]): CompactionEntry | null;

/**
 * Project one selected session entry into LLM/runtime messages.
 * Plain custom entries are display/state entries and do not participate in context.
 */
export declare function sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[];

/**
 * Build the active, compaction-aware session entry list.
 * Follows the path to `leafId` (default: last entry; null: empty). The latest compaction is
 * represented by the compaction entry itself, followed by the kept entries starting at
 * firstKeptEntryId and all entries after the compaction entry.
 */
export declare function buildContextEntries(
    entries: SessionEntry[],
    leafId?: string | null,
    byId?: Map<string, SessionEntry>,
): SessionEntry[];

/** Build provenance-preserving, compaction-aware model context. */
export declare function buildSessionProjection(
    entries: SessionEntry[],
    leafId?: string | null,
    byId?: Map<string, SessionEntry>,
): SessionProjection;

/**
 * Build the finalized model context from the canonical session projection.
 * If leafId is provided, walks from that entry to root; handles compaction, branch
 * summaries and context edits along the path.
 */
export declare function buildSessionContext(
    entries: SessionEntry[],
    leafId?: string | null,
    byId?: Map<string, SessionEntry>,
): SessionContext;

// ============================================================================
// The other exports of the reference's dist/core/session-manager.js
// ============================================================================

/**
 * Throws unless `id` is a valid session id: non-empty, only alphanumeric characters,
 * '-', '_' and '.', starting and ending with an alphanumeric character.
 */
export declare function assertValidSessionId(id: string): void;

/** Project one entry into model-visible messages, applying its latest context edit if any. */
export declare function projectContextEntry(entry: SessionEntry, edit: ContextEditEntry | undefined): AgentMessage[];

/**
 * The default session folder of `cwd` (`<agentDir>/sessions/--<cwd>--`, agentDir by default
 * `PI_CODING_AGENT_DIR` or `~/.pi/agent`), created if missing.
 */
export declare function getDefaultSessionDir(cwd: string, agentDir?: string): string;

/**
 * The entries of a session file as they are on disk (not migrated): every line that
 * parses, in order; `[]` when the file is missing or its first entry is not a header.
 * A last line without a newline gets one.
 */
export declare function loadEntriesFromFile(filePath: string): FileEntry[];

/**
 * The most recently modified session file in `sessionDir` (whose header's cwd is `cwd`,
 * if given), or null.
 */
export declare function findMostRecentSession(sessionDir: string, cwd?: string): string | null;

/** pi's agent folder, as this package reads it: `PI_CODING_AGENT_DIR` (`~` expanded), else `~/.pi/agent`. */
export declare function getAgentDir(): string;

/**
 * A path as pi reads one (a `--session-dir`, a setting): `~` and `file://` URLs expanded,
 * Git Bash and Cygwin paths (`/c/...`) on Windows, resolved against `baseDir` (default the
 * current directory).
 */
export declare function resolvePath(input: string, baseDir?: string): string;

/**
 * The `.jsonl` files of pi's session folders, damaged ones too (nothing is read, so
 * `checkSession` can look at what a listing skips), each folder's in name order: those of
 * `sessionDir` when given, else of the project folder of `cwd`
 * (`getDefaultSessionDir(cwd)`, not created), else of every project folder of
 * `<agent dir>/sessions`. A folder that cannot be read has none.
 */
export declare function findSessionFiles(options?: { cwd?: string; sessionDir?: string }): string[];

// ============================================================================
// Globals that not every consumer's lib has
// ============================================================================
// A consumer may compile with lib es2020 and no @types/node or DOM: these resolve to the
// global types where the program has them and to a minimal shape otherwise, so the
// declarations compile in either case (and stay exact where the globals exist).

/** The global `AbortSignal` (DOM lib or @types/node), or the part of it the listing reads. */
type AbortSignalLike = typeof globalThis extends { AbortSignal: { prototype: infer Signal } }
    ? Signal
    : { readonly aborted: boolean; readonly reason?: unknown };

/** `{ [Symbol.dispose](): void }` where the lib declares `Symbol.dispose`, `{}` otherwise. */
type DisposableWhereSupported = SymbolConstructor extends { readonly dispose: infer Dispose extends symbol }
    ? { [Key in Dispose]: () => void }
    : {};

// ============================================================================
// SessionManager
// ============================================================================

/**
 * Manages conversation sessions as append-only trees stored in JSONL files.
 *
 * Each session entry has an id and parentId forming a tree structure. The "leaf"
 * pointer tracks the current position. Appending creates a child of the current leaf.
 * Branching moves the leaf to an earlier entry, allowing new branches without
 * modifying history.
 *
 * Use buildSessionContext() to get the resolved message list for the LLM, which
 * handles compaction summaries and follows the path from root to current leaf.
 */
export declare class SessionManager {
    private constructor();

    /** Switch to a different session file (used for resume and branching) */
    setSessionFile(sessionFile: string): void;
    /** Start a new session (new id and header) in the same directory. Returns the new file path, or undefined when not persisting. */
    newSession(options?: NewSessionOptions): string | undefined;
    isPersisted(): boolean;
    getCwd(): string;
    getSessionDir(): string;
    usesDefaultSessionDir(): boolean;
    getSessionId(): string;
    getSessionFile(): string | undefined;
    /** @internal Persist one entry to the session file (public in the reference, used by pi internals). */
    _persist(entry: SessionEntry): void;

    /**
     * Append a message as child of current leaf, then advance leaf. Returns entry id.
     * CompactionSummaryMessage and BranchSummaryMessage cannot be appended directly:
     * use appendCompaction() and branchWithSummary().
     */
    appendMessage(message: Message | CustomMessage | BashExecutionMessage): string;
    /** Append a thinking level change as child of current leaf, then advance leaf. Returns entry id. */
    appendThinkingLevelChange(thinkingLevel: string): string;
    /** Append a model change as child of current leaf, then advance leaf. Returns entry id. */
    appendModelChange(provider: string, modelId: string): string;
    /** Append model-attributed usage that does not participate in LLM context. Returns the appended entry. */
    appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): UsageEntry;
    /** Append a compaction summary as child of current leaf, then advance leaf. Returns entry id. */
    appendCompaction<T = unknown>(
        summary: string,
        firstKeptEntryId: string | null,
        tokensBefore: number,
        details?: T,
        fromHook?: boolean,
        usage?: Usage,
    ): string;
    /** Append a custom entry (for extensions) as child of current leaf, then advance leaf. Returns entry id. */
    appendCustomEntry(customType: string, data?: unknown): string;
    /** Append a session info entry (e.g., display name). Returns entry id. */
    appendSessionInfo(name: string): string;
    /** Get the current session name from the latest session_info entry, if any. */
    getSessionName(): string | undefined;
    /**
     * Append a custom message entry (for extensions) that participates in LLM context.
     * @param customType Extension identifier for filtering on reload
     * @param content Message content (string or TextContent/ImageContent array)
     * @param display Whether to show in TUI (true = styled display, false = hidden)
     * @param details Optional extension-specific metadata (not sent to LLM)
     * @returns Entry id
     */
    appendCustomMessageEntry<T = unknown>(
        customType: string,
        content: string | (TextContent | ImageContent)[],
        display: boolean,
        details?: T,
    ): string;
    /** Append a branch-local edit to an earlier model-visible entry. */
    appendContextEdit(targetId: string, replacement: ContextEditEntry["replacement"]): string;

    getLeafId(): string | null;
    getLeafEntry(): SessionEntry | undefined;
    getEntry(id: string): SessionEntry | undefined;
    /** Get all direct children of an entry. */
    getChildren(parentId: string): SessionEntry[];
    /** Get the label for an entry, if any. */
    getLabel(id: string): string | undefined;
    /**
     * Set or clear a label on an entry (user-defined bookmark).
     * Pass undefined or empty string to clear the label.
     */
    appendLabelChange(targetId: string, label: string | undefined): string;
    /**
     * Walk from entry (default: current leaf) to root, returning all entries in path order.
     * Includes all entry types. Use buildSessionContext() for the resolved LLM messages.
     */
    getBranch(fromId?: string): SessionEntry[];
    /** Build the active, compaction-aware entry list for context/rendering, from the current leaf. */
    buildContextEntries(): SessionEntry[];
    /** Build the session projection (per-entry provenance of model context), from the current leaf. */
    buildSessionProjection(): SessionProjection;
    /** Build the session context (what gets sent to the LLM), from the current leaf. */
    buildSessionContext(): SessionContext;
    /** Get session header. */
    getHeader(): SessionHeader | null;
    /** Number of session entries (excludes header), without copying them like `getEntries()`. */
    getEntryCount(): number;
    /**
     * Get all session entries (excludes header). Returns a shallow copy.
     * The session is append-only: use appendXXX() to add entries, branch() to move the leaf.
     */
    getEntries(): SessionEntry[];
    /**
     * Get the session as a tree structure (shallow defensive copy of all entries).
     * A well-formed session has exactly one root; orphaned entries are also returned as roots.
     */
    getTree(): SessionTreeNode[];
    /**
     * Start a new branch from an earlier entry: moves the leaf pointer to the entry.
     * The next appendXXX() call creates a child of it. Existing entries are not modified.
     */
    branch(branchFromId: string): void;
    /**
     * Reset the leaf pointer to null (before any entries).
     * The next appendXXX() call will create a new root entry (parentId = null).
     */
    resetLeaf(): void;
    /**
     * Start a new branch with a summary of the abandoned path.
     * Same as branch(), but also appends a branch_summary entry. Returns entry id.
     */
    branchWithSummary(
        branchFromId: string | null,
        summary: string,
        details?: unknown,
        fromHook?: boolean,
        usage?: Usage,
    ): string;
    /**
     * Create a new session file containing only the path from root to the specified leaf.
     * Returns the new session file path, or undefined if not persisting.
     */
    createBranchedSession(leafId: string): string | undefined;

    /**
     * Create a new session.
     * @param cwd Working directory (stored in session header)
     * @param sessionDir Optional session directory. If omitted, uses default (~/.pi/agent/sessions/<encoded-cwd>/).
     */
    static create(cwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager;
    /**
     * Open a specific session file.
     * @param path Path to session file
     * @param sessionDir Optional session directory for /new or /branch. If omitted, derives from file's parent.
     * @param cwdOverride Optional cwd override instead of the session header cwd.
     */
    static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager;
    /**
     * Continue the most recent session, or create new if none.
     * @param cwd Working directory
     * @param sessionDir Optional session directory. If omitted, uses default.
     */
    static continueRecent(cwd: string, sessionDir?: string): SessionManager;
    /** Create an in-memory session (no file persistence), optionally from entries held outside the filesystem. */
    static inMemory(cwd?: string, options?: NewSessionOptions, entries?: FileEntry[]): SessionManager;
    /**
     * Fork a session from another project directory into the current project.
     * @param sourcePath Path to the source session file
     * @param targetCwd Target working directory (where the new session will be stored)
     * @param sessionDir Optional session directory. If omitted, uses default for targetCwd.
     */
    static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager;
    /**
     * Find an exact session ID without loading transcript bodies. Returns the session file path.
     * @param cwd Working directory (used to compute default session directory)
     * @param id Exact session ID
     * @param sessionDir Optional session directory. If omitted, uses default.
     */
    static findById(cwd: string, id: string, sessionDir?: string): string | undefined;
    /**
     * List all sessions for a directory, most recently active first.
     * @param cwd Working directory (used to compute default session directory)
     * @param sessionDir Optional session directory. If omitted, uses default.
     * @param onProgress Optional callback for progress updates (loaded, total)
     * @param signal Optional AbortSignal to cancel the listing
     */
    static list(
        cwd: string,
        sessionDir?: string,
        onProgress?: SessionListProgress,
        signal?: AbortSignalLike,
    ): Promise<SessionInfo[]>;
    /**
     * List all sessions across all project directories.
     * @param onProgress Optional callback for progress updates (loaded, total)
     */
    static listAll(onProgress?: SessionListProgress, signal?: AbortSignalLike): Promise<SessionInfo[]>;
    static listAll(sessionDir?: string, onProgress?: SessionListProgress, signal?: AbortSignalLike): Promise<SessionInfo[]>;

    // Beyond the reference:
    /**
     * Frees the manager's native memory and file descriptors now, instead of when it
     * is collected. A later call that needs them throws `SessionManager is closed: <file>`;
     * calling close() again does nothing.
     */
    close(): void;
}

/**
 * `[Symbol.dispose]()`: close(), for `using sm = SessionManager.open(file)`. Declared only
 * where the program knows `Symbol.dispose` (lib esnext.disposable, TypeScript 5.2+, or
 * @types/node), so that these declarations compile with any lib from es2020 up.
 */
export interface SessionManager extends DisposableWhereSupported {}

// ===== Beyond the reference =====

/**
 * Makes pi's own `SessionManager` class (pass the one pi runs: `import { SessionManager }
 * from "@earendil-works/pi-coding-agent"`) answer `create`, `open`, `continueRecent`,
 * `inMemory`, `forkFrom`, `findById`, `list` and `listAll` with this package's class, so
 * that every manager pi makes from then on (its runtime's `newSession`, `switchSession`,
 * `fork`, `importFromJsonl` included) is native; `instanceof` pi's class holds for them.
 * Returns the class it was given, with its own type. Idempotent. Throws a `TypeError`
 * (`code` `ERR_PI_SESSION_NATIVE_UNSUPPORTED`) and changes nothing if the class's session
 * API is not the one this package implements (pi 1.6's).
 */
export declare function useNativeSessions<T extends Function>(PiSessionManager: T, options?: UseNativeSessionsOptions): T;
export interface UseNativeSessionsOptions {
    /**
     * Whether the managers pi makes let go of entry values nothing outside holds and read
     * them again from the file when asked (see `configureEntries`). Default `true`;
     * `PI_SESSION_NATIVE_RELEASE=0` or `1` in the environment overrides it.
     */
    releaseEntries?: boolean;
}
/** Whether `useNativeSessions` has switched this class (in any copy of this package), or it is this package's own. */
export declare function usesNativeSessions(PiSessionManager: unknown): boolean;


export interface ListingOptions {
    /**
     * Folder where listing summaries are kept across processes, so that the next
     * process reads only what was appended to each session file. `null` keeps
     * them in memory only. Must not be inside pi's session folders.
     */
    cacheDir?: string | null;
}

/**
 * Configures `SessionManager.list()`/`listAll()`. Without a call, the folder in
 * the environment variable `PI_SESSION_NATIVE_CACHE_DIR` is used, if set.
 */
export declare function configureListing(options?: ListingOptions): void;

export interface EntryOptions {
    /**
     * Managers made from now on by this package's statics let go of the heavy values of
     * their entries (message content and details, summaries, custom data, a compaction's
     * system message) once nothing outside the manager holds them, and read them again from
     * the session file when next asked: a long-lived process costs what it holds, not what
     * it wrote. While held, a value is the same object with whatever was done to it; once
     * let go, it comes back equal to its line. Entries and messages themselves are kept.
     * Default `false` (the reference's identity for every value);
     * `PI_SESSION_NATIVE_RELEASE=0` or `1` in the environment overrides it.
     */
    release?: boolean;
    /**
     * Whether managers that let go (every one in this thread, pi's included) ask V8 to hand
     * back the memory its collections emptied, once they have let go of 32 MB since the last
     * request: V8 keeps those pages resident until a memory-reducing collection, which it
     * may not run for a long time in a busy process. Each request starts one incremental
     * collection after the current turn of the event loop. Default `true`;
     * `PI_SESSION_NATIVE_RETURN_MEMORY=0` or `1` in the environment overrides it. Does
     * nothing where the host is not V8 (Node).
     */
    returnMemory?: boolean;
}

/** Configures the managers made from now on; returns the settings (as configured, before the environment's word). */
export declare function configureEntries(options: EntryOptions): { release: boolean; returnMemory: boolean };

/** Which sessions `listSessions` lists, and how. */
export interface ListSessionsOptions {
    /** `SessionManager.list(cwd, sessionDir)` with a `cwd`, else `SessionManager.listAll(sessionDir)`. */
    cwd?: string;
    sessionDir?: string;
    /** As for `list()` / `listAll()`. */
    onProgress?: SessionListProgress;
    signal?: AbortSignalLike;
    /**
     * Default true. `false`: every SessionInfo (and each progress list) comes without
     * `allMessagesText`, most of a listing's bytes, for callers that never read it (a table).
     */
    allMessagesText?: boolean;
}

/** Options with `allMessagesText: false`: progress lists without the texts too. */
type WithoutTextOptions<O extends { onProgress?: unknown; allMessagesText?: boolean }> = Omit<O, "onProgress" | "allMessagesText"> & {
    allMessagesText: false;
    onProgress?: SessionListProgress<SessionInfoWithoutText>;
};

/**
 * `SessionManager.list(cwd, sessionDir)` when `cwd` is given, else `SessionManager.listAll(sessionDir)`
 * (the same sessions, order and progress), from one options object; with
 * `allMessagesText: false`, without that field.
 */
export declare function listSessions(options: WithoutTextOptions<ListSessionsOptions>): Promise<SessionInfoWithoutText[]>;
export declare function listSessions(options?: ListSessionsOptions & { allMessagesText?: true }): Promise<SessionInfo[]>;
export declare function listSessions(options?: ListSessionsOptions): Promise<SessionInfoWithoutText[]>;

// ===== Accounting (beyond the reference) =====

/** What `AgentSession.getSessionStats()` returns, without `contextUsage`. */
export interface SessionStats {
    sessionFile: string | undefined;
    sessionId: string;
    userMessages: number;
    assistantMessages: number;
    toolCalls: number;
    toolResults: number;
    totalMessages: number;
    tokens: {
        input: number;
        output: number;
        cacheRead: number;
        cacheWrite: number;
        total: number;
    };
    cost: number;
}

/** Anything with pi's `SessionManager` read API (ours, the reference's, or another). */
export interface SessionEntriesSource {
    getEntries(): SessionEntry[];
    getSessionFile?(): string | undefined;
    getSessionId?(): string;
}

/**
 * pi's `AgentSession.getSessionStats()` of a session: the same counts and the same
 * totals, to the last bit of the cost. Given a path, the file is read in Rust and no
 * entry object is built (and nothing is written); a file that is not a pi session
 * throws `Session file is not a valid pi session: <path>`.
 */
export declare function getSessionStats(sessionOrPath: string | SessionEntriesSource): SessionStats;

/** One row of pi's `getUsageCostBreakdown()`. */
export interface UsageCostBreakdownEntry {
    /** `provider/responseModel ?? model`, or `Tools/summaries`. */
    key: string;
    cost: number;
    tokens: number;
}

/** pi's `getUsageCostBreakdown(entries)` of a session file, a manager or entries. */
export declare function getUsageCostBreakdown(
    sessionOrPathOrEntries: string | SessionEntriesSource | readonly SessionEntry[],
): UsageCostBreakdownEntry[];

export type UsageReportGroupBy = "day" | "week" | "month" | "session" | "model" | "project";

export interface UsageReportOptions {
    /** The sessions of `SessionManager.list(cwd, sessionDir)`; without it, of `listAll(sessionDir)`. */
    cwd?: string;
    sessionDir?: string;
    groupBy: UsageReportGroupBy;
    /** First local date counted, `YYYY-MM-DD` in `timezone` (inclusive). */
    since?: string;
    /** Last local date counted, `YYYY-MM-DD` in `timezone` (inclusive). */
    until?: string;
    /** IANA time zone name; default the local zone (`Intl.DateTimeFormat().resolvedOptions().timeZone`). */
    timezone?: string;
    onProgress?: (loaded: number, total: number) => void;
    signal?: AbortSignalLike;
}

export interface UsageReportTotals {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    /** input + output + cacheRead + cacheWrite (reasoning is part of output, cacheWrite1h of cacheWrite). */
    totalTokens: number;
    cost: number;
    /** Sessions with at least one counted entry. */
    sessions: number;
}

export interface UsageReportRow extends UsageReportTotals {
    /** `YYYY-MM-DD`, ISO week `YYYY-Www`, `YYYY-MM`, the session file path, the breakdown key, or the session cwd. */
    key: string;
}

export interface UsageReport {
    /** Ascending by key for day/week/month; by cost descending (then key) otherwise. */
    rows: UsageReportRow[];
    totals: UsageReportTotals;
}

/**
 * Token and cost totals across sessions (see README "Accounting"). A fork's copies of
 * its parent's entries (same id, timestamp, model and usage) count once, in the session
 * where they were first written, even when that session is outside `cwd`'s project
 * (then they do not count in this report).
 */
export declare function usageReport(options: UsageReportOptions): Promise<UsageReport>;

/** What a fork holds of copies of its parent's entries. */
export interface InheritedUsage extends Omit<UsageReportTotals, "sessions"> {
    /** The header's `parentSession`. */
    parentSession: string;
    /** False when that file is gone or not a session: then nothing is known to be a copy (all zero). */
    parentFound: boolean;
    /** Usage entries that are copies. */
    entries: number;
}

/**
 * How much of a session's usage (as `getSessionStats` counts it) is copied from its
 * parent session; `null` for a session that is no fork. Reports across sessions count
 * that part in the parent. Throws Node's error for a path that cannot be read.
 */
export declare function getInheritedUsage(sessionPath: string): InheritedUsage | null;
/** What `checkSession` found wrong with one line (or with the file, `line` 0). */
export interface DoctorFinding {
  /**
   * `torn-last-line`, `torn-line`, `glued-entry`, `nul-padding`, `invalid-utf8`,
   * `not-json`, `not-object`, `missing-header`, `header-not-first`,
   * `duplicate-id`, `parent-cycle`, `orphan`, `crlf` or `too-large`.
   */
  problem: DoctorProblem;
  /** 1-based line number; 0 for the file as a whole. */
  line: number;
  message: string;
  /** What `repairSession` does about it; absent when it is left as it is. */
  repair?: string;
}

export type DoctorProblem =
  | "torn-last-line"
  | "torn-line"
  | "glued-entry"
  | "nul-padding"
  | "invalid-utf8"
  | "not-json"
  | "not-object"
  | "missing-header"
  | "header-not-first"
  | "duplicate-id"
  | "parent-cycle"
  | "orphan"
  | "crlf"
  | "too-large";

export interface SessionCheck {
  /** The file, resolved. */
  path: string;
  size: number;
  lines: number;
  /** Lines the reference reads as entries, the header included. */
  entries: number;
  /** Whether pi (the reference) opens the file as it is. */
  opensInReference: boolean;
  findings: DoctorFinding[];
  /** Whether `repairSession` would change the file. */
  repairable: boolean;
}

export interface RepairAction {
  problem: DoctorProblem;
  line: number;
  action: string;
}

export interface SessionRepair {
  path: string;
  dryRun: boolean;
  findings: DoctorFinding[];
  /** The plan: what is (or with `dryRun` would be) done. */
  actions: RepairAction[];
  /** Whether the file was rewritten. */
  applied: boolean;
  /** The original, kept as `<name>.bak-<UTC timestamp>`, when applied. */
  backup?: string;
  /** The repaired file checked again, when applied. */
  after?: SessionCheck;
}

/**
 * Reads a session file and reports what is wrong with it, with line numbers. Never writes.
 * A FIFO, a device or a socket is not read (it could block or never end): it throws an
 * Error with `code` `"ERR_NOT_A_SESSION_FILE"`.
 */
export declare function checkSession(path: string): SessionCheck;

/**
 * Applies the repairs that are safe (recovers entries glued after a torn line,
 * drops torn lines and NUL padding, rebuilds a lost header from the file name),
 * never dropping a line that parses as an entry. The original is kept beside the
 * file; a file that changes while being repaired is left alone with an error.
 *
 * Only a pi session file is repaired (dry run or not): a regular file (or a
 * symlink to one) whose first entry is a session header, or a damaged
 * `<timestamp>_<id>.jsonl` file in pi's session folders (the project folders
 * of `<agent dir>/sessions`, or `sessionDir`). Anything else throws an Error
 * with `code` `"ERR_NOT_A_SESSION_FILE"` and is left as it is.
 */
export declare function repairSession(path: string, options?: { dryRun?: boolean; sessionDir?: string }): SessionRepair;

/** What `judgeSessionFile` found: `path` resolved, `target` the file it names (a symlink's target). */
export type SessionFileVerdict =
    | {
          ok: true;
          path: string;
          target: string;
          viaLink: boolean;
          /** Not a session by its header, but a `<timestamp>_<id>.jsonl` file in pi's session folders. */
          damaged: boolean;
          /** The target's device and inode when judged: compare before acting on it, in case it was replaced. */
          identity: { dev: number; ino: number };
      }
    | {
          ok: false;
          path: string;
          target: string;
          viaLink: boolean;
          /** Completes the sentence "<path> ...", e.g. `is a folder, not a pi session file`. */
          reason: string;
      };

/**
 * Whether `path` is a pi session file, as `repairSession` (and `pi-sessions rm`) decide before
 * touching one: a regular file whose first entry is a session header, or a damaged
 * `<timestamp>_<id>.jsonl` file in pi's session folders (the project folders of
 * `<agent dir>/sessions`, or `sessionDir`). A symlink is judged by its target. Never opens
 * anything but a regular file, never writes.
 */
export declare function judgeSessionFile(path: string, options?: { sessionDir?: string }): SessionFileVerdict;


export type SessionSearchSort = "threaded" | "recent" | "relevance";
/** `"named"` keeps only sessions with a name. */
export type SessionSearchNameFilter = "all" | "named";

/** Which sessions a search reads: `list(cwd, sessionDir)` with a `cwd`, else `listAll(sessionDir)`. */
export interface SessionSearchSource {
    cwd?: string;
    sessionDir?: string;
    /** Progress of the listing, as for `list()` / `listAll()`. */
    onProgress?: SessionListProgress;
    signal?: AbortSignalLike;
}

export interface SearchSessionsOptions extends SessionSearchSource {
    /** Default `"relevance"`. */
    sort?: SessionSearchSort;
    /** Default `"all"`. */
    nameFilter?: SessionSearchNameFilter;
    /**
     * Default true. `false`: the SessionInfos (and progress lists) come without
     * `allMessagesText`, which then stays on the native side, for callers that do not show it.
     */
    allMessagesText?: boolean;
}

/**
 * What pi 1.6.0's /resume shows for `query`: `filterAndSortSessions(sessions, query, sort,
 * nameFilter)` over `SessionManager.list(cwd, sessionDir)` when `cwd` is given, else over
 * `SessionManager.listAll(sessionDir)`. Words match as substrings of the name, id, message
 * text and cwd, or as fuzzy subsequences of the name and cwd; `"quoted phrases"`;
 * `re:<pattern>` is a JavaScript RegExp with the `i` flag (an invalid or empty one gives `[]`).
 */
export declare function searchSessions(query: string, options: WithoutTextOptions<SearchSessionsOptions>): Promise<SessionInfoWithoutText[]>;
export declare function searchSessions(query: string, options?: SearchSessionsOptions & { allMessagesText?: true }): Promise<SessionInfo[]>;
export declare function searchSessions(query: string, options?: SearchSessionsOptions): Promise<SessionInfoWithoutText[]>;

/** The sessions of a folder (or of all folders), searched on every keystroke of a picker. */
export declare class SessionSearch {
    private constructor();
    /** Lists the sessions (see `SessionSearchSource`) and prepares them for searching. */
    static open(options?: SessionSearchSource): Promise<SessionSearch>;
    /** The sessions searched, in the listing's order. */
    readonly sessions: SessionInfo[];
    /** `filterAndSortSessions(sessions, query, sort, nameFilter)`, synchronously; the same SessionInfo objects every call. */
    search(query: string, sort?: SessionSearchSort, nameFilter?: SessionSearchNameFilter): SessionInfo[];
    /** Lists again: appended files are read from where the last listing stopped; new and deleted files show. */
    refresh(options?: { onProgress?: SessionListProgress; signal?: AbortSignalLike }): Promise<void>;
    /** Lets go of the sessions and their native texts; later calls throw. */
    close(): void;
}

/** What `grepSessions` searches (default `["text", "toolResult", "summary"]`). */
export type SessionGrepField = "text" | "toolResult" | "summary" | "thinking" | "toolCall" | "custom";
/** Every field `grepSessions` can search, in this order (for a `--in` option, a menu ...). */
export declare const GREP_FIELDS: readonly SessionGrepField[];
/** The fields searched when `options.fields` is not given: `["text", "toolResult", "summary"]`. */
export declare const DEFAULT_GREP_FIELDS: readonly SessionGrepField[];

export interface SessionMatch {
    /** The session file, and its header's id and cwd (as `SessionInfo` has them). */
    path: string;
    sessionId: string;
    cwd: string;
    /** The entry's `id` and `timestamp` as the line holds them (no `id` in version 1 sessions). */
    entryId: string | undefined;
    timestamp: string | undefined;
    /** The message's role, or the entry's type (`"compaction"`, `"branch_summary"`, `"custom_message"`). */
    role: string;
    /** The tool call's name (field `"toolCall"`), or a tool result's `toolName`; else null. */
    toolName: string | null;
    field: SessionGrepField;
    /** The block's index in the message content (0 for string content, summaries and bash output). */
    blockIndex: number;
    /** The whole searched text of the block. */
    text: string;
    /** `[start, end]` of each non-empty match of `text.matchAll(regexp)`, in UTF-16 code units. */
    ranges: [number, number][];
}

export interface GrepSessionsOptions {
    /** `list(cwd, sessionDir)` with a `cwd`, else `listAll(sessionDir)`. */
    cwd?: string;
    sessionDir?: string;
    /**
     * `"text"`: user and assistant text; `"toolResult"`: text blocks of tool results;
     * `"summary"`: compaction and branch summaries; `"thinking"`: thinking blocks;
     * `"toolCall"`: `name + " " + JSON.stringify(arguments)`; `"custom"`: custom
     * messages and bash execution output.
     */
    fields?: readonly SessionGrepField[];
    /** Default false: the pattern matches with the `i` flag. */
    caseSensitive?: boolean;
    /** On the entry's timestamp (entries without a valid one are left out when given). */
    since?: Date | string | number;
    until?: Date | string | number;
    /** Stops after that many matches, reading no further. */
    limit?: number;
    /**
     * Called with each match as it is found, before the promise settles. When it returns a
     * promise, the next match waits for it (and the reading, a few files ahead at most): a
     * writer to a slow stream can wait for `'drain'`. A rejection rejects grepSessions.
     */
    onMatch?: (match: SessionMatch) => void | PromiseLike<void>;
    /**
     * Default true. False keeps no match (the promise resolves to an empty array): with
     * `onMatch`, memory stays that of one file's matches however many there are.
     */
    collect?: boolean;
    /**
     * Sessions searched of those listed. The listing leaves out files that do not hold the
     * pattern's literal words (when it reads them), so `total` may be fewer than `listAll()`'s.
     */
    onProgress?: (done: number, total: number) => void;
    signal?: AbortSignalLike;
}

/**
 * The message blocks that match `pattern`, exactly as JavaScript would find them: a literal
 * is `new RegExp(escapeRegExp(pattern), "gi")`, `re:<body>` is `new RegExp(body, "gi")`
 * (`"g"` with `caseSensitive`; an invalid one rejects with V8's SyntaxError). Sessions in
 * listing order (newest first), entries in file order, blocks in content order. Nothing is
 * written; unreadable files and lines that do not parse are skipped.
 */
export declare function grepSessions(pattern: string, options?: GrepSessionsOptions): Promise<SessionMatch[]>;

/** Which messages `recallSearch` finds: a user's or an assistant's text, a tool call, a tool result. */
export type RecallRole = "user" | "assistant" | "toolCall" | "toolResult";

/** Where `recallSearch` and `recallRead` find sessions, and which files they may read. */
export interface RecallPlace {
    /** The project (default `process.cwd()`): "this project" of `scope: "project"`, ids looked for here first. */
    cwd?: string;
    /** The session folder in use, as pi's `getSessionDir()` gives it (default: the project's own). */
    sessionDir?: string;
    /** The file `"current"` names (pi's session file), and the one `"parent"` names (its header's parentSession). */
    currentSessionFile?: string;
    parentSessionFile?: string;
    /** Refuse paths outside pi's session folders (the tools set it); "current" and "parent" are read anyway. */
    sessionFoldersOnly?: boolean;
    signal?: AbortSignalLike;
}

export interface RecallSearchOptions extends RecallPlace {
    /**
     * Matched as pi's /grep reads text: a literal, ignoring case, in user and assistant text,
     * tool calls (`name + " " + JSON.stringify(arguments)`), tool results, summaries and custom
     * messages (not thinking). Without it, the sessions are listed.
     */
    query?: string;
    /** Default `"project"`: this project's sessions; `"all"`: every project's. */
    scope?: "project" | "all";
    role?: RecallRole;
    /**
     * Messages written at or after / at or before: a date (`"2025-05-01"`, `"2025-05-01T12:00Z"`; a bare
     * date for `before` takes in its whole day, UTC) or a number of days ago. Without `query`: the
     * sessions active then.
     */
    after?: string | number;
    before?: string | number;
    /** Only sessions whose tools read or wrote this file (tool call arguments `path`, `file_path` ...); a relative path matches any path ending with it. */
    file?: string;
    /** Only this session: an id, a unique id prefix, a path, `"current"` or `"parent"`. */
    session?: string;
    /** Default 20, at most 500. */
    limit?: number;
}

export interface RecallHit {
    sessionId: string;
    sessionFile: string;
    cwd: string;
    sessionName: string | null;
    /** null in version 1 sessions (entries without ids). */
    entryId: string | null;
    /** `"toolCall"` for a tool call block; else the message's role, or the entry's type (`"compaction"` ...). */
    role: string;
    /** The tool of a `"toolCall"` or `"toolResult"` hit, else null. */
    toolName: string | null;
    timestamp: string | null;
    /** The text around the first match, on one line, each match marked «…». */
    snippet: string;
    /**
     * How many other sessions of the scope (forks, and forks of forks) carry a copy of this entry:
     * a copied entry is a hit once, in the session where it was first written (when that one is not
     * searched, in the searched session nearest to it). A fork whose file last changed more than a
     * second before the entry was written is not counted.
     */
    forks: number;
}

export interface RecallSession {
    sessionId: string;
    sessionFile: string;
    cwd: string;
    name: string | null;
    firstMessage: string;
    /** Last activity, ISO 8601. */
    modified: string | null;
    /** Bytes. */
    size: number | null;
}

export interface RecallSearchResult {
    /** Newest session first, newest message first in a session. Empty without `query`. */
    hits: RecallHit[];
    /** Without `query` only: the sessions, newest first. */
    sessions?: RecallSession[];
    /** More hits (or sessions) than `limit`. */
    truncated: boolean;
    /** What a model reads: within pi's tool-output limits (50 KB, 2,000 lines), the cut stated. */
    text: string;
}

export interface RecallReadOptions extends RecallPlace {
    /** An id, a unique id prefix, a path, `"current"` or `"parent"`. */
    session: string;
    /** A page around this entry. At most one of `around`, `from`, `last`. */
    around?: string;
    /** A page from this entry, or `"start"` (the default). */
    from?: string;
    /** The last N messages of the branch. */
    last?: number;
    /** Messages a page shows: default 50, at most 500. */
    limit?: number;
    /** The branch to this entry (default: the session's leaf, or for `"current"` `currentLeafId`). */
    leaf?: string;
    /** pi's leaf of the current session (it may not be the file's last entry). */
    currentLeafId?: string;
    /** Show thinking blocks (default: left out, and counted). */
    thinking?: boolean;
}

export interface RecallEntry {
    id: string | null;
    type: string;
    /** The message's role; null for other entries. */
    role: string | null;
}

export interface RecallReadResult {
    /** The page as text for a model: what it left out and how to get the next page stated. */
    text: string;
    sessionId: string;
    sessionFile: string;
    /** The entries the page shows, in order. */
    entries: RecallEntry[];
    /** The output limit ended the page early (`next` goes on from there). */
    truncated: boolean;
    /** The `from` of the next page, or null at the end of the branch. */
    next: string | null;
}

/**
 * Finds messages across sessions, newest first (by last activity, at most a second after a
 * session's file last changed), stopping at `limit`: built on grepSessions' scan, without a
 * listing, it reads session files newest first until `limit` hits are certain. An entry copied
 * into forks is a hit once, where it was first written (`forks` counts the copies); the calls
 * and results of the recall tools (`session_search`, `session_read`) never are. Without `query`,
 * lists the sessions. Errors are one clear sentence: no such session, an id prefix of several
 * (named), a file that is not a pi session.
 */
export declare function recallSearch(options?: RecallSearchOptions): Promise<RecallSearchResult>;

/**
 * A page of one session's branch as text for a model: user and assistant text, a line per tool
 * call, tool results cut to their first lines, compaction and branch summaries, custom messages;
 * everything before a compaction too. Opens the session with this package's SessionManager and
 * writes nothing pi would not (a file of an older version is migrated in memory); a damaged file
 * is read as pi reads it, and the text says so.
 */
export declare function recallRead(options: RecallReadOptions): Promise<RecallReadResult>;

/**
 * A grepSessions match as `session_search` reports a hit (its snippet, role `"toolCall"` for a
 * tool call block), without `forks`. `session` is the match's session as the listing gives it
 * (its name is `sessionName`); by default the match's own path, id and cwd, with no name. What
 * `pi-sessions grep --json` prints, with the match's exact fields.
 */
export declare function recallHitOf(match: SessionMatch, session?: Pick<SessionInfo, "path" | "id" | "cwd" | "name">): Omit<RecallHit, "forks">;

/** A listing's session as `session_search` lists it (`recallSearch`'s `sessions`): what `pi-sessions search --json` prints. */
export declare function recallSessionOf(session: Pick<SessionInfo, "path" | "id" | "cwd" | "name" | "firstMessage" | "modified">): RecallSession;

export interface ListPromptsOptions {
    /** The project (default `process.cwd()`). */
    cwd?: string;
    /**
     * The session folder in use, as pi's `getSessionDir()` gives it (default: the project's own).
     * One that is not the project's own holds every project's sessions: `"project"` then keeps
     * the sessions whose cwd is `cwd`, and `"all"` is that folder.
     */
    sessionDir?: string;
    /** Default `"project"`: this project's sessions; `"all"`: every project's. */
    scope?: "project" | "all";
    /**
     * Each batch of prompts as it becomes final, in order (the next batch follows this one's last
     * prompt): the first comes once the newest sessions are read, before the others are.
     */
    onPrompts?: (prompts: PromptInfo[]) => void;
    /** Session files read so far, of `total` (first `(0, total)`, last `(total, total)`). */
    onProgress?: (loaded: number, total: number) => void;
    signal?: AbortSignalLike;
}

/** A prompt the user typed: a user message's text. */
export interface PromptInfo {
    /** The text blocks of the message joined, as pi puts a user message back in its editor. */
    text: string;
    /** The entry's timestamp (ISO 8601), null where it has none. */
    timestamp: string | null;
    sessionId: string | null;
    sessionFile: string;
    /** The session's cwd (its header's). */
    cwd: string;
    /** null in version 1 sessions (entries without ids). */
    entryId: string | null;
}

/**
 * Every prompt of a scope's sessions (user messages' text, every branch), newest first, each
 * text once: two prompts whose texts are equal once their ends are trimmed are one, the newest.
 * A prompt's time is its entry's timestamp, but never later than its file's last write, so that
 * prompts stream in order as the files are read, newest file first: `onPrompts` gets each batch
 * as it becomes final. Resolves to them all; rejects with the signal's reason on abort.
 * Reads only the files of pi's session folders that begin with a session header.
 */
export declare function listPrompts(options?: ListPromptsOptions): Promise<PromptInfo[]>;

export {};
