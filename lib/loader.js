'use strict';
// loadEntriesFromFile of the reference's session-manager module: the entries of
// a file as they are on disk (not migrated). Rust reads the file and picks the
// lines that parse to entries; each becomes an object here by JSON.parse.
const fs = require('fs');
const native = require('./native.js');
const { call } = require('./errors.js');
const paths = require('./paths.js');

function loadEntriesFromFile(filePath) {
  const file = paths.normalizePath(filePath);
  if (!fs.existsSync(file)) return [];
  const lines = call(() => native.loadEntryLines(file));
  const entries = new Array(lines.length);
  for (let i = 0; i < lines.length; i++) entries[i] = JSON.parse(lines[i]);
  return entries;
}

module.exports = { loadEntriesFromFile };
