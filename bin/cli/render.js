'use strict';
// What an entry says, in words: shared by show, tree, context and export.
const { oneLine, firstLine } = require('./output.js');

/** The text parts of a message's content (a string or an array of parts). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

function imageCount(content) {
  return Array.isArray(content) ? content.filter((p) => p && p.type === 'image').length : 0;
}

function toolCalls(content) {
  return Array.isArray(content) ? content.filter((p) => p && p.type === 'toolCall') : [];
}

/** `name(arg: value, ...)` on one line. */
function toolCallLine(call) {
  let args = '';
  if (call.arguments && typeof call.arguments === 'object') {
    args = Object.entries(call.arguments)
      .map(([k, v]) => `${k}: ${oneLine(typeof v === 'string' ? v : JSON.stringify(v))}`)
      .join(', ');
  }
  return `${call.name ?? '?'}(${args})`;
}

/**
 * One item of a conversation: `{ who, text, calls }` (calls: one line each),
 * or null for entries that say nothing (labels, custom data).
 */
function describe(entry) {
  if (!entry || typeof entry !== 'object') return null;
  switch (entry.type) {
    case 'message':
      return describeMessage(entry.message ?? {});
    case 'compaction':
      return { who: 'compaction', text: entry.summary ?? '', calls: [] };
    case 'branch_summary':
      return { who: 'branch summary', text: entry.summary ?? '', calls: [] };
    case 'custom_message':
      return { who: `custom ${entry.customType ?? ''}`.trim(), text: contentText(entry.content), calls: [] };
    case 'model_change':
      return { who: 'model', text: `${entry.provider}/${entry.modelId}`, calls: [] };
    case 'thinking_level_change':
      return { who: 'thinking', text: String(entry.thinkingLevel), calls: [] };
    default:
      return null;
  }
}

function describeMessage(message) {
  const role = message.role;
  const content = message.content;
  switch (role) {
    case 'user': {
      const images = imageCount(content);
      const text = contentText(content) + (images ? ` [${images} image${images > 1 ? 's' : ''}]` : '');
      return { who: 'user', text, calls: [] };
    }
    case 'assistant': {
      const calls = toolCalls(content).map(toolCallLine);
      let text = contentText(content);
      if (message.stopReason === 'error' && message.errorMessage) text += `${text ? '\n' : ''}[error] ${message.errorMessage}`;
      return { who: 'assistant', text, calls };
    }
    case 'toolResult': {
      const text = contentText(content);
      return { who: `tool ${message.toolName ?? ''}`.trim(), text, calls: [], isError: Boolean(message.isError) };
    }
    case 'bashExecution':
      return { who: 'bash', text: `$ ${message.command ?? ''}\n${message.output ?? ''}`, calls: [] };
    case 'custom':
      return { who: `custom ${message.customType ?? ''}`.trim(), text: contentText(content), calls: [] };
    default:
      return { who: String(role ?? 'message'), text: contentText(content), calls: [] };
  }
}

/** A short summary of any entry, for the tree: its first line of text. */
function entrySummary(entry) {
  if (!entry || typeof entry !== 'object') return '';
  switch (entry.type) {
    case 'session':
      return `cwd ${entry.cwd ?? ''}`;
    case 'label':
      return entry.label ? `label ${JSON.stringify(entry.label)} on ${entry.targetId}` : `label cleared on ${entry.targetId}`;
    case 'session_info':
      return entry.name ? `name ${JSON.stringify(entry.name)}` : 'name cleared';
    case 'custom':
      return `${entry.customType ?? ''}`;
    case 'context_edit':
      return `edit of ${entry.targetId}`;
    case 'usage':
      return `${entry.kind ?? ''} ${entry.provider ?? ''}/${entry.model ?? ''}`.trim();
    default: {
      const item = describe(entry);
      if (!item) return '';
      const text = firstLine(item.text);
      if (entry.type === 'message') {
        const calls = item.calls.length ? ` → ${item.calls.join(', ')}` : '';
        return `${text}${calls}`.trim();
      }
      return text;
    }
  }
}

function entryTypeName(entry) {
  if (!entry || typeof entry !== 'object') return '?';
  if (entry.type === 'message') return entry.message?.role ?? 'message';
  return String(entry.type);
}

module.exports = { contentText, describe, describeMessage, entrySummary, entryTypeName, toolCallLine };
