'use strict';
// pi-session-native: a drop-in for the session API of @earendil-works/pi-coding-agent.
const { SessionManager, CURRENT_SESSION_VERSION, assertValidSessionId, configureEntries } = require('./lib/session-manager.js');
const context = require('./lib/context.js');
const { configureListing, findMostRecentSession, listSessions } = require('./lib/listing.js');
const { loadEntriesFromFile } = require('./lib/loader.js');
const { getDefaultSessionDir, getAgentDir, resolvePath, findSessionFiles } = require('./lib/paths.js');
const { getSessionStats, getUsageCostBreakdown, usageReport, getInheritedUsage } = require('./lib/stats.js');
const { checkSession, repairSession } = require('./lib/doctor.js');
const { judgeSessionFilePublic } = require('./lib/file-guard.js');
const { SessionSearch, searchSessions } = require('./lib/search.js');
const { grepSessions, GREP_FIELDS, DEFAULT_GREP_FIELDS } = require('./lib/grep.js');
const { recallSearch, recallRead, recallHitOf, recallSessionOf } = require('./lib/recall.js');
const { listPrompts } = require('./lib/prompts.js');
const { useNativeSessions, usesNativeSessions } = require('./lib/pi-class.js');

module.exports = {
  CURRENT_SESSION_VERSION,
  SessionManager,
  buildContextEntries: context.buildContextEntries,
  buildSessionContext: context.buildSessionContext,
  buildSessionProjection: context.buildSessionProjection,
  getLatestCompactionEntry: context.getLatestCompactionEntry,
  migrateSessionEntries: context.migrateSessionEntries,
  parseSessionEntries: context.parseSessionEntries,
  sessionEntryToContextMessages: context.sessionEntryToContextMessages,
  // The other exports of the reference's dist/core/session-manager.js:
  assertValidSessionId,
  projectContextEntry: context.projectContextEntry,
  getDefaultSessionDir,
  loadEntriesFromFile,
  findMostRecentSession,
  // Beyond the reference:
  getAgentDir,
  resolvePath,
  findSessionFiles,
  configureListing,
  configureEntries,
  listSessions,
  getSessionStats,
  getUsageCostBreakdown,
  usageReport,
  getInheritedUsage,
  checkSession,
  repairSession,
  judgeSessionFile: judgeSessionFilePublic,
  SessionSearch,
  searchSessions,
  grepSessions,
  GREP_FIELDS,
  DEFAULT_GREP_FIELDS,
  recallSearch,
  recallRead,
  recallHitOf,
  recallSessionOf,
  listPrompts,
  useNativeSessions,
  usesNativeSessions,
};
