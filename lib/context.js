'use strict';
// Assembling context messages from entry objects. Which entries make up the
// context (the path, the compaction cut, the latest edit of each entry, where
// the model and thinking level come from) is planned in Rust
// (src/session/index.rs `context_plan`); this file only builds the message objects.
const native = require('./native.js');
const { call } = require('./errors.js');
const { keyOf, metaOf } = require('./keys.js');

function messageTime(timestamp) {
  return new Date(timestamp).getTime();
}

/** Project one selected session entry into LLM/runtime messages. */
function sessionEntryToContextMessages(entry) {
  if (entry.type === 'message') {
    const message = entry.message;
    // Old, forked or hand-edited files can hold messages without content.
    if (message.role === 'system' && message.content == null) return [{ ...message, content: '' }];
    if (
      (message.role === 'user' || message.role === 'assistant' || message.role === 'toolResult') &&
      message.content == null
    ) {
      return [{ ...message, content: [] }];
    }
    return [message];
  }
  if (entry.type === 'custom_message') {
    return [
      {
        role: 'custom',
        customType: entry.customType,
        content: entry.content ?? [],
        display: entry.display,
        details: entry.details,
        timestamp: messageTime(entry.timestamp),
      },
    ];
  }
  if (entry.type === 'branch_summary' && entry.summary) {
    return [
      { role: 'branchSummary', summary: entry.summary, fromId: entry.fromId, timestamp: messageTime(entry.timestamp) },
    ];
  }
  if (entry.type === 'compaction') {
    const summary = {
      role: 'compactionSummary',
      summary: entry.summary,
      tokensBefore: entry.tokensBefore,
      timestamp: messageTime(entry.timestamp),
    };
    return entry.systemMessage ? [entry.systemMessage, summary] : [summary];
  }
  return [];
}

/** One entry's messages with its latest context edit applied. */
function projectContextEntry(entry, edit) {
  const messages = sessionEntryToContextMessages(entry);
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    const role = message.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'toolResult' && role !== 'custom') return message;
    const content =
      (role === 'assistant' || role === 'toolResult') && typeof replacement.content === 'string'
        ? [{ type: 'text', text: replacement.content }]
        : replacement.content;
    return { ...message, content };
  });
}

/**
 * Builds the projection from a native plan; `at(position)` gives the entry
 * object at a position the plan names.
 */
function assembleProjection(plan, at) {
  const thinkingLevel = plan.thinking >= 0 ? at(plan.thinking).thinkingLevel : 'off';
  let model = null;
  if (plan.model >= 0) {
    const source = at(plan.model);
    model =
      source.type === 'model_change'
        ? { provider: source.provider, modelId: source.modelId }
        : { provider: source.message.provider, modelId: source.message.model };
  }
  const positions = plan.entries;
  const entries = new Array(positions.length);
  const messages = [];
  for (let i = 0; i < positions.length; i++) {
    const sourceEntry = at(positions[i]);
    const edit = plan.edits[i];
    // -2: an older compaction kept inside the retained range adds nothing.
    const projected = edit === -2 ? [] : projectContextEntry(sourceEntry, edit >= 0 ? at(edit) : undefined);
    entries[i] = { sourceEntry, messages: projected };
    for (const m of projected) messages.push(m);
  }
  return { entries, messages, thinkingLevel, model };
}

/** The input of the native planners for entries held by the caller. */
function planInput(entries, leafId, byId) {
  let nodes;
  let keys;
  let fallback;
  if (byId) {
    nodes = [...byId.values()];
    keys = [...byId.keys()].map(keyOf);
    // `leaf ??= entries[entries.length - 1]` need not be in the map.
    fallback = entries.length > 0 ? nodes.push(entries[entries.length - 1]) - 1 : -1;
  } else {
    nodes = entries;
    fallback = entries.length - 1;
  }
  const leafMode = leafId === null ? 0 : leafId ? 2 : 1;
  return {
    nodes,
    input: {
      metas: nodes.map(metaOf),
      keys,
      leafMode,
      leafKey: leafMode === 2 ? keyOf(leafId) : undefined,
      fallback,
    },
  };
}

function buildContextEntries(entries, leafId, byId) {
  const { nodes, input } = planInput(entries, leafId, byId);
  const positions = call(() => native.planContextEntries(input));
  return Array.from(positions, (p) => nodes[p]);
}

function buildSessionProjection(entries, leafId, byId) {
  const { nodes, input } = planInput(entries, leafId, byId);
  const plan = call(() => native.planProjection(input));
  return assembleProjection(plan, (p) => nodes[p]);
}

function buildSessionContext(entries, leafId, byId) {
  const { messages, thinkingLevel, model } = buildSessionProjection(entries, leafId, byId);
  return { messages, thinkingLevel, model };
}

function getLatestCompactionEntry(entries) {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type === 'compaction') return entries[i];
  }
  return null;
}

/**
 * Parses JSONL text, skipping blank and malformed lines. This one works on a
 * string the caller already holds, so V8's own JSON.parse is the whole job.
 */
function parseSessionEntries(content) {
  const entries = [];
  for (const line of content.trim().split('\n')) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      // Malformed lines are skipped, as in the reference.
    }
  }
  return entries;
}

/** Applies a native migration plan to entry objects, in place. */
function applyMigration(entries, plan) {
  if (plan.v1) {
    for (let i = 0; i < entries.length; i++) {
      const step = plan.v1[i];
      const entry = entries[i];
      if (step.kind === 'header') {
        entry.version = 2;
        continue;
      }
      entry.id = step.newId;
      entry.parentId = step.parent ?? null;
      if (step.firstKept === '') continue;
      if (step.firstKept === 'set') entry.firstKeptEntryId = step.firstKeptId;
      else if (step.firstKept === 'undefined') entry.firstKeptEntryId = undefined;
      delete entry.firstKeptEntryIndex;
    }
  }
  if (plan.v2) {
    for (const entry of entries) {
      if (entry.type === 'session') {
        entry.version = 3;
      } else if (entry.type === 'message' && entry.message && entry.message.role === 'hookMessage') {
        entry.message.role = 'custom';
      }
    }
  }
}

/** Migrates entries to the current version in place; true if anything was due. */
function migrateEntries(entries) {
  const header = entries.find((e) => e.type === 'session');
  const metas = entries.map(metaOf);
  if (header === undefined) for (const m of metas) if (m.kind === 'session') m.kind = '';
  const plan = native.planMigration(metas);
  if (!plan) return false;
  applyMigration(entries, plan);
  return true;
}

function migrateSessionEntries(entries) {
  migrateEntries(entries);
}

/** The replayed system message (prompt, sections, tools) of a transcript. */
function currentSystemMessage(messages) {
  const content = [];
  const sections = new Map();
  const tools = new Map();
  let timestamp;
  for (const message of messages) {
    if (message.role !== 'system') continue;
    timestamp ??= message.timestamp;
    const text = contentText(message.content, '\n');
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  for (const message of messages) {
    if (message.role !== 'system') continue;
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  const toolList = [...tools.values()];
  if (timestamp === undefined && toolList.length === 0) return undefined;
  return {
    role: 'system',
    content: content.join('\n\n'),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(toolList.length > 0 ? { toolsAdded: toolList } : {}),
    timestamp: timestamp ?? 0,
  };
}

function contentText(content, separator) {
  if (typeof content === 'string') return content;
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join(separator);
}

module.exports = {
  sessionEntryToContextMessages,
  projectContextEntry,
  assembleProjection,
  buildContextEntries,
  buildSessionProjection,
  buildSessionContext,
  getLatestCompactionEntry,
  parseSessionEntries,
  migrateSessionEntries,
  migrateEntries,
  currentSystemMessage,
};
