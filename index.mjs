// ESM entry: the same objects as the CommonJS entry, as named exports.
import cjs from './index.js';

export const {
  CURRENT_SESSION_VERSION,
  SessionManager,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  getLatestCompactionEntry,
  migrateSessionEntries,
  parseSessionEntries,
  sessionEntryToContextMessages,
  assertValidSessionId,
  projectContextEntry,
  getDefaultSessionDir,
  loadEntriesFromFile,
  findMostRecentSession,
  configureListing,
  listSessions,
  getSessionStats,
  getUsageCostBreakdown,
  usageReport,
  checkSession,
  repairSession,
  SessionSearch,
  searchSessions,
  grepSessions,
  GREP_FIELDS,
  DEFAULT_GREP_FIELDS,
} = cjs;
export default cjs;
