'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const { spawnSync } = require('child_process');
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
    try {
      fs.renameSync(file, target);
    } catch (error) {
      if (error.code !== 'EXDEV') {
        fs.rmSync(path.join(infoDir, `${name}.trashinfo`), { force: true });
        throw error;
      }
      fs.copyFileSync(file, target);
      fs.unlinkSync(file);
    }
    return target;
  }
}

/** As pi's session picker: the `trash` command where there is one, else the trash folder. */
function trashFile(file) {
  const args = file.startsWith('-') ? ['--', file] : [file];
  const result = spawnSync('trash', args, { encoding: 'utf-8' });
  if (result.status === 0 || !fs.existsSync(file)) return 'trash';
  if (result.error && result.error.code === 'ENOENT') {
    moveToFreedesktopTrash(file);
    return 'trash folder';
  }
  const hint = (result.stderr ?? '').trim().split('\n')[0] || result.error?.message || `exit ${result.status}`;
  throw new out.CliError(`trash failed for ${file}: ${hint} (--force deletes it for good)`);
}

function ask(question) {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    rl.question(`${question} [y/N] `, (answer) => {
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}

module.exports = {
  usage: 'rm <session>... [--force] [--yes]',
  summary: 'move sessions to the trash (as pi does), or delete them with --force',
  help: [
    ['--force', 'delete for good instead of moving to the trash'],
    ['-y, --yes', 'do not ask (needed when stdin is not a terminal)'],
  ],
  positionals: { min: 1, max: Infinity, name: '<session>' },
  options: { force: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } },
  async run(values, args) {
    const ctx = sessions.context(values);
    const files = [];
    for (const arg of args) {
      const file = await sessions.resolveSession(arg, ctx);
      if (fs.statSync(file).isDirectory()) throw new out.CliError(`${file} is a directory, not a session file`);
      if (!files.includes(file)) files.push(file);
    }
    if (!values.yes) {
      if (!process.stdin.isTTY) throw out.usageError('rm: not on a terminal, so nothing is asked: add --yes');
      for (const f of files) process.stderr.write(`  ${f}\n`);
      const what = values.force ? 'Delete for good' : 'Move to the trash';
      if (!(await ask(`${what} ${files.length} session file${files.length > 1 ? 's' : ''}?`))) {
        process.stderr.write('nothing removed\n');
        return 1;
      }
    }
    for (const file of files) {
      if (values.force) {
        fs.unlinkSync(file);
        process.stdout.write(`deleted ${file}\n`);
      } else {
        const how = trashFile(file);
        process.stdout.write(`moved to the ${how}: ${file}\n`);
      }
    }
    return 0;
  },
};
