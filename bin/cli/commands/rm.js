'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { judgeSessionFile } = require('../../../index.js');
const guard = require('../file-guard.js');
const out = require('../output.js');
const sessions = require('../sessions.js');

/** The freedesktop.org trash of the home folder: the file under files/, its origin under info/. */
function moveToFreedesktopTrash(file) {
  const dataHome = process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  const trash = path.join(dataHome, 'Trash');
  const filesDir = path.join(trash, 'files');
  const infoDir = path.join(trash, 'info');
  fs.mkdirSync(filesDir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(infoDir, { recursive: true, mode: 0o700 });
  const base = path.basename(file);
  const ext = path.extname(base);
  const stem = base.slice(0, base.length - ext.length);
  const date = new Date();
  const pad = (n) => String(n).padStart(2, '0');
  const deletionDate = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  const encoded = file.split('/').map(encodeURIComponent).join('/');
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${stem}.${n}${ext}`;
    let fd;
    try {
      // The info file is created first and exclusively: it reserves the name.
      fd = fs.openSync(path.join(infoDir, `${name}.trashinfo`), 'wx', 0o600);
    } catch (error) {
      if (error.code === 'EEXIST') continue;
      throw error;
    }
    try {
      fs.writeSync(fd, `[Trash Info]\nPath=${encoded}\nDeletionDate=${deletionDate}\n`);
    } finally {
      fs.closeSync(fd);
    }
    const target = path.join(filesDir, name);
    const info = path.join(infoDir, `${name}.trashinfo`);
    try {
      // A link (or an exclusive copy across file systems), not a rename: a
      // rename would replace a file already under that name in the trash.
      try {
        fs.linkSync(file, target);
      } catch (error) {
        if (error.code !== 'EXDEV' && error.code !== 'EPERM' && error.code !== 'ENOTSUP') throw error;
        fs.copyFileSync(file, target, fs.constants.COPYFILE_EXCL);
      }
    } catch (error) {
      fs.rmSync(info, { force: true });
      if (error.code === 'EEXIST') continue;
      throw error;
    }
    fs.unlinkSync(file);
    return target;
  }
}

/**
 * As pi's session picker: the `trash` command where there is one (macOS 15 has one; on
 * Windows, a `trash` that moves to the Recycle Bin), else on Linux and other Unixes the
 * freedesktop.org trash folder. macOS and Windows keep their bins elsewhere: there the
 * user is told to install a `trash` command or use --force.
 */
function trashFile(file, platform = process.platform) {
  const args = file.startsWith('-') ? ['--', file] : [file];
  // On Windows a `trash` from npm is a .cmd, which only cmd.exe runs; file names there
  // cannot hold a double quote, so quoting the path is enough.
  const result =
    platform === 'win32'
      ? spawnSync('cmd.exe', ['/d', '/s', '/c', `"trash "${file}""`], { encoding: 'utf-8', windowsVerbatimArguments: true })
      : spawnSync('trash', args, { encoding: 'utf-8' });
  if (result.status === 0 || !fs.existsSync(file)) return 'trash';
  const missing = (result.error && result.error.code === 'ENOENT') || (platform === 'win32' && result.status === 1 && /not recognized/i.test(result.stderr ?? ''));
  if (missing && (platform === 'darwin' || platform === 'win32')) {
    const bin = platform === 'darwin' ? 'the Trash' : 'the Recycle Bin';
    throw new out.CliError(`no \`trash\` command to move ${file} to ${bin}: install one (npm install -g trash-cli) or delete it for good with --force`);
  }
  if (missing) {
    moveToFreedesktopTrash(file);
    return 'trash folder';
  }
  const hint = (result.stderr ?? '').trim().split('\n')[0] || result.error?.message || `exit ${result.status}`;
  throw new out.CliError(`trash failed for ${file}: ${hint} (--force deletes it for good)`);
}

/** One line for the file that goes: a symlink's target, and which link pointed to it. */
function named(verdict) {
  return verdict.viaLink ? `${verdict.target} (the file the symlink ${verdict.path} points to; the link stays)` : verdict.target;
}

module.exports = {
  usage: 'rm <session>... [--force] [--yes]',
  summary: 'move sessions to the trash (as pi does), or delete them with --force',
  details:
    'Only pi session files are removed: a file whose first entry is a session header, or a\n' +
    'damaged <timestamp>_<id>.jsonl file in pi\'s session folders. A symlink is judged by its\n' +
    'target, and the target goes (the link stays). Anything else (another file, a folder,\n' +
    'a FIFO, a device) is refused with exit 2, and then nothing given is removed.\n' +
    'The trash is the `trash` command on PATH where there is one, else\n' +
    '${XDG_DATA_HOME:-~/.local/share}/Trash.',
  help: [
    ['--force', 'delete for good instead of moving to the trash (still only sessions)'],
    ['-y, --yes', 'do not ask (needed when stdin is not a terminal)'],
  ],
  positionals: { min: 1, max: Infinity, name: '<session>' },
  options: { force: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } },
  async run(values, args) {
    const ctx = sessions.context(values);
    const nothing = args.length > 1 ? `; none of the ${args.length} given is removed` : '; nothing removed';
    // Every argument is judged before anything is removed.
    const verdicts = [];
    for (const arg of args) {
      let file;
      try {
        file = await sessions.resolveSession(arg, ctx);
      } catch (error) {
        error.message = `rm: ${error.message}${nothing}`;
        throw error;
      }
      verdicts.push(judgeSessionFile(file, { sessionDir: ctx.sessionDir }));
    }
    const refused = verdicts.filter((v) => !v.ok);
    if (refused.length) {
      const more = refused.length > 1 ? ` (and ${refused.length - 1} more refused)` : '';
      throw out.usageError(`rm: ${refused[0].path} ${refused[0].reason}${more}${nothing}`);
    }
    const files = verdicts.filter((v, i) => verdicts.findIndex((w) => w.target === v.target) === i);
    if (!values.yes) {
      if (!process.stdin.isTTY) throw out.usageError('rm: not on a terminal, so nothing is asked: add --yes');
      for (const v of files) process.stderr.write(`  ${named(v)}\n`);
      const what = values.force ? 'Delete for good' : 'Move to the trash';
      if (!(await out.ask(`${what} ${files.length} session file${files.length > 1 ? 's' : ''}?`))) {
        process.stderr.write('nothing removed\n');
        return 1;
      }
    }
    for (const v of files) {
      // The file judged must still be the one there (not swapped meanwhile).
      guard.assertUnchanged(v);
      if (values.force) {
        fs.unlinkSync(v.target);
        process.stdout.write(`deleted ${named(v)}\n`);
      } else {
        const how = trashFile(v.target);
        process.stdout.write(`moved to the ${how}: ${named(v)}\n`);
      }
    }
    return 0;
  },
};

// For tests: the trash step alone, on any platform's rules.
module.exports.trashFile = trashFile;
