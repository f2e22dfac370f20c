'use strict';
// pi-session-native: a drop-in for the session API of @earendil-works/pi-coding-agent.
const { SessionManager, CURRENT_SESSION_VERSION } = require('./lib/session-manager.js');
const context = require('./lib/context.js');
const { configureListing } = require('./lib/listing.js');
const { SessionSearch, searchSessions } = require('./lib/search.js');

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
  // Beyond the reference:
  configureListing,
  SessionSearch,
  searchSessions,
};
