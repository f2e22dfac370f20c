'use strict';
// The command line: argument parsing, help, dispatch and error reporting.
// Each command is a module of its own (commands/*.js) over the library.
const { parseArgs } = require('util');
const { configureCache } = require('./cache.js');
const { CliError, usageError } = require('./output.js');

// Order as in --help.
const COMMANDS = ['ls', 'search', 'grep', 'recall', 'info', 'show', 'read', 'tree', 'context', 'path', 'export', 'rm', 'stats', 'doctor', 'repair'];

const COMMON_OPTIONS = {
  'session-dir': { type: 'string' },
  'no-cache': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

function load(name) {
  return require(`./commands/${name}.js`);
}

function mainHelp() {
  const lines = [
    'Usage: pi-sessions <command> [options]',
    '',
    'Inspect, export, delete, check and repair the session files of the pi coding agent.',
    '',
    'Commands:',
  ];
  const commands = COMMANDS.map(load);
  const width = Math.max(...commands.map((c) => c.usage.length));
  for (const c of commands) lines.push(`  ${c.usage.padEnd(width)}  ${c.summary}`);
  lines.push(
    '',
    'A <session> is a path, a full id or an id prefix (as `pi --session` takes it).',
    'Sessions are found as pi finds them: PI_CODING_AGENT_DIR, --session-dir DIR,',
    'PI_CODING_AGENT_SESSION_DIR, settings.json; by default the current project.',
    '',
    'rm and repair act only on pi session files (anything else: exit 2, nothing changed);',
    'export -o never replaces a pi session file, and another existing file only with --force.',
    '',
    'Options everywhere: --session-dir DIR, --no-cache, --help. Most commands take --json.',
    'Listings are cached in the user\'s cache folder (${XDG_CACHE_HOME:-~/.cache}/pi-session-native,',
    '~/Library/Caches/pi-session-native, %LOCALAPPDATA%\\pi-session-native\\cache);',
    'PI_SESSION_NATIVE_CACHE_DIR moves it; set empty, or --no-cache, for none.',
    'Run `pi-sessions <command> --help` for a command\'s options.',
  );
  return lines.join('\n');
}

function commandHelp(command) {
  const lines = [`Usage: pi-sessions ${command.usage}`, '', command.summary];
  if (command.details) lines.push('', command.details);
  lines.push('', 'Options:');
  const rows = [
    ...command.help,
    ['--session-dir DIR', 'where sessions are (as pi --session-dir)'],
    ['--no-cache', 'no persistent listing cache for this call'],
    ['-h, --help', 'this help'],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  return lines.join('\n');
}

async function run(argv) {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined) {
      if (!COMMANDS.includes(topic)) throw usageError(`unknown command '${topic}' (see pi-sessions --help)`);
      process.stdout.write(`${commandHelp(load(topic))}\n`);
      return 0;
    }
    process.stdout.write(`${mainHelp()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${require('../../package.json').version}\n`);
    return 0;
  }
  if (!COMMANDS.includes(name)) throw usageError(`unknown command '${name}' (see pi-sessions --help)`);
  const command = load(name);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...COMMON_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usageError(`${name}: ${error.message.split('\n')[0].split('. To specify')[0]}`);
  }
  if (parsed.values.help) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  configureCache(parsed.values);
  const { min = 0, max = 0 } = command.positionals ?? {};
  if (parsed.positionals.length < min) throw usageError(`${name}: missing ${command.positionals.name} (see pi-sessions ${name} --help)`);
  if (parsed.positionals.length > max) {
    throw usageError(`${name}: unexpected argument '${parsed.positionals[max]}' (see pi-sessions ${name} --help)`);
  }
  return (await command.run(parsed.values, parsed.positionals)) ?? 0;
}

/** Runs the command line and exits: 0 done, 1 failed (or doctor found problems), 2 usage. */
async function main(argv) {
  // A closed pipe (`pi-sessions ls | head`) ends the output quietly.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  let code;
  try {
    code = await run(argv);
  } catch (error) {
    // A path refused as not a pi session (judgeSessionFile, file-guard.js) is a usage error: nothing was done.
    code = error instanceof CliError ? error.exitCode : error?.code === 'ERR_NOT_A_SESSION_FILE' ? 2 : 1;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`pi-sessions: ${oneLineMessage(message)}\n`);
    if (process.env.PI_SESSIONS_DEBUG === '1' && error instanceof Error && error.stack) {
      process.stderr.write(`${error.stack}\n`);
    }
  }
  process.exitCode = code;
}

function oneLineMessage(message) {
  return String(message).split('\n')[0].trim() || 'failed';
}

module.exports = { main, run, COMMANDS };
