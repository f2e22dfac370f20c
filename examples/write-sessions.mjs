// Writes the example sessions through this package's own API: one session with every
// entry type, a compaction and a branch (with its summary), a short second session, and
// a v1 file (linear, no ids, as pi wrote before sessions became trees), written line by
// line here since the API writes the current version only. Opening it migrates it.
// Usage: node examples/write-sessions.mjs [folder]   (default: examples/sessions)
// The folder is emptied first if this script wrote it; any other non-empty folder is refused.
import { SessionManager } from 'pi-session-native';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const folder = path.resolve(process.argv[2] ?? new URL('./sessions', import.meta.url).pathname);
const MARKER = path.join(folder, '.written-by-write-sessions');
const CWD = '/home/user/project';

if (fs.existsSync(folder) && fs.readdirSync(folder).length > 0) {
  if (!fs.existsSync(MARKER)) throw new Error(`${folder} holds files this script did not write: not touching it`);
  fs.rmSync(folder, { recursive: true });
}
fs.mkdirSync(folder, { recursive: true });
fs.writeFileSync(MARKER, 'examples/write-sessions.mjs empties this folder before it writes the example sessions again\n');

const usage = (input, output) => ({
  input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
  cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 },
});
const user = (text) => ({ role: 'user', content: [{ type: 'text', text }], timestamp: Date.now() });
const assistant = (content, stopReason = 'stop') => ({
  role: 'assistant', content, provider: 'anthropic', model: 'claude-sonnet-4-5', api: 'anthropic-messages',
  stopReason, usage: usage(1200, 300), timestamp: Date.now(),
});
const text = (t) => ({ type: 'text', text: t });

// 1. Every entry type, a compaction, a branch with its summary.
const session = SessionManager.create(CWD, folder);
session.appendModelChange('anthropic', 'claude-sonnet-4-5');
session.appendThinkingLevelChange('medium');
const ask = session.appendMessage(user('Add a --verbose flag to the CLI'));
session.appendMessage(assistant([
  { type: 'thinking', thinking: 'The flag parsing lives in src/cli.ts.' },
  text('Let me look at the CLI first.'),
  { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'src/cli.ts' } },
], 'toolUse'));
const read = session.appendMessage({
  role: 'toolResult', toolCallId: 'call_1', toolName: 'read', isError: false,
  content: [text('export function parseArgs(argv) { /* ... */ }')], timestamp: Date.now(),
});
session.appendMessage(assistant([text('I added `--verbose` to parseArgs in src/cli.ts.')]));
session.appendMessage({
  role: 'bashExecution', command: 'npm test', output: '12 passed, 0 failed\n', exitCode: 0,
  cancelled: false, truncated: false, timestamp: Date.now(),
});
session.appendLabelChange(ask, 'feature request');
session.appendCustomEntry('example-extension/state', { reviewed: false });
session.appendCustomMessageEntry('example-extension/note', 'Remember to update the changelog.', true, { source: 'example' });
session.appendUsage('cache_warm', 'anthropic', 'claude-sonnet-4-5', usage(800, 0), 'prompt cache warm-up');
session.appendContextEdit(read, { content: [text('(file contents elided)')] });
const kept = session.appendMessage(user('Also document it in the README'));
session.appendMessage(assistant([text('README updated with a --verbose section.')]));
session.appendCompaction('The user asked for a --verbose flag; it was added to src/cli.ts and documented.', kept, 5400, { readFiles: ['src/cli.ts'] });
session.appendMessage(user('Now add tests for the flag'));
session.appendMessage(assistant([text('Added tests in test/cli.test.ts.')]));
// Back to the first question, trying another way: the abandoned path gets a summary.
session.branchWithSummary(ask, 'Tried an environment variable instead of a flag; the user preferred the flag.');
session.appendMessage(user('What about a VERBOSE environment variable instead?'));
session.appendMessage(assistant([text('That works too: VERBOSE=1 now turns on verbose output.')]));
session.appendSessionInfo('verbose flag');

// 2. A short second session in the same folder.
const second = SessionManager.create(CWD, folder);
second.appendModelChange('openai', 'gpt-5');
second.appendMessage(user('Why does `npm test` take so long?'));
second.appendMessage({ ...assistant([text('Most of the time goes to the build step; run the tests alone with node --test.')]), provider: 'openai', model: 'gpt-5', api: 'openai-responses' });

// 3. A v1 file: no version, no ids, a compaction pointing at an entry by index.
const t0 = Date.parse('2025-01-15T09:00:00.000Z');
const at = (s) => new Date(t0 + s * 1000).toISOString();
const v1 = [
  { type: 'session', id: randomUUID(), timestamp: at(0), cwd: CWD, provider: 'anthropic', modelId: 'claude-sonnet-4-5', thinkingLevel: 'off' },
  { type: 'message', timestamp: at(1), message: { role: 'user', content: [text('List the TODOs in src/')], timestamp: t0 + 1000 } },
  { type: 'message', timestamp: at(2), message: { ...assistant([text('There are three TODOs in src/cli.ts.')]), timestamp: t0 + 2000 } },
  { type: 'thinking_level_change', timestamp: at(3), thinkingLevel: 'high' },
  { type: 'model_change', timestamp: at(4), provider: 'anthropic', modelId: 'claude-opus-4-5' },
  { type: 'message', timestamp: at(5), message: { role: 'user', content: [text('Fix the first one')], timestamp: t0 + 5000 } },
  { type: 'compaction', timestamp: at(6), summary: 'The user asked about TODOs in src/; three were found.', firstKeptEntryIndex: 5, tokensBefore: 2100 },
  { type: 'message', timestamp: at(7), message: { ...assistant([text('Fixed: the first TODO in src/cli.ts is resolved.')]), timestamp: t0 + 7000 } },
];
fs.writeFileSync(path.join(folder, '2025-01-15T09-00-00-000Z_v1-example.jsonl'), v1.map((e) => JSON.stringify(e)).join('\n') + '\n');

console.log(`wrote ${fs.readdirSync(folder).filter((f) => f.endsWith('.jsonl')).length} example sessions to ${folder}`);
