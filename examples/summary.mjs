// The main job on a session folder: list it, open each session, summarize its context.
// Usage: node examples/summary.mjs [session-folder]
import { SessionManager } from 'pi-session-native';
import path from 'node:path';

const folder = path.resolve(process.argv[2] ?? new URL('./sessions', import.meta.url).pathname);
const sessions = await SessionManager.listAll(folder);
console.log(`${sessions.length} session(s) in ${folder}\n`);
for (const info of sessions) {
  const session = SessionManager.open(info.path);
  const { messages, model, thinkingLevel } = session.buildSessionContext();
  const roles = {};
  for (const m of messages) roles[m.role] = (roles[m.role] ?? 0) + 1;
  console.log(`${info.name ?? info.firstMessage.slice(0, 60)}`);
  console.log(`  file      ${path.basename(info.path)}`);
  console.log(`  modified  ${info.modified.toISOString()}  (${info.messageCount} messages, ${session.getEntryCount()} entries)`);
  console.log(`  model     ${model ? `${model.provider}/${model.modelId}` : '-'}, thinking ${thinkingLevel}`);
  console.log(`  context   ${messages.length} messages: ${Object.entries(roles).map(([r, n]) => `${n} ${r}`).join(', ')}\n`);
}
