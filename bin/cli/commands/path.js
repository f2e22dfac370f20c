'use strict';
const sessions = require('../sessions.js');

module.exports = {
  usage: 'path <session>',
  summary: "the session's file, alone on stdout (pi --session \"$(pi-sessions path 0198f3)\")",
  help: [],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: {},
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    process.stdout.write(`${await sessions.resolveSession(arg, ctx)}\n`);
    return 0;
  },
};
