// /doctor: this package's checkSession over the session files of the current project
// (or of every project), summed up in one notice: which files have problems, whether pi
// opens them, their first findings with line numbers, and the command that repairs what
// is safe to repair. It only reads. Nothing here imports pi: what it needs of pi is
// passed in, so that this module also runs in plain Node (the tests do).

/**
 * The files /doctor checks, by the package's `findSessionFiles` (as `pi-sessions doctor`):
 * those of `sessionDir` (the current project's folder), or with `all` those of every
 * project folder of pi's sessions folder.
 */
export function doctorFiles(findSessionFiles, { sessionDir, all }) {
  if (all) return findSessionFiles();
  return sessionDir ? findSessionFiles({ sessionDir }) : [];
}

/**
 * `checkSession` of each file: `{ checked, problems: [{ path, report } | { path, error }] }`.
 * Each check reads a whole file on this thread, so the loop gives the event loop a turn
 * every `sliceMs` (pi keeps drawing and reading keys while 10,000 files are checked);
 * an aborted `signal` ends it early, with what was checked so far.
 */
export async function checkFiles(checkSession, files, { signal, sliceMs = 16 } = {}) {
  const problems = [];
  let checked = 0;
  let turn = performance.now();
  for (const file of files) {
    if (signal?.aborted) break;
    if (performance.now() - turn >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      turn = performance.now();
    }
    checked++;
    try {
      const report = checkSession(file);
      if (report.findings.length > 0) problems.push({ path: file, report });
    } catch (error) {
      problems.push({ path: file, error: String(error?.message ?? error).split("\n")[0] });
    }
  }
  return { checked, problems };
}

/** One notice for the result: `{ message, type }` ("info" when nothing is wrong). */
export function doctorNotice({ checked, problems }, { maxFiles = 8, maxFindings = 3 } = {}) {
  const files = `${checked} session file${checked === 1 ? "" : "s"} checked`;
  if (problems.length === 0) return { message: `${files}: no problems found.`, type: "info" };
  const lines = [`${files}, ${problems.length} with problems:`];
  for (const { path: file, report, error } of problems.slice(0, maxFiles)) {
    if (error) {
      lines.push(`${file}: cannot be read: ${error}`);
      continue;
    }
    const state = report.opensInReference ? "pi opens it" : "pi cannot open it";
    lines.push(`${file} (${state}${report.repairable ? "; `pi-sessions repair` can fix some of it" : ""}):`);
    for (const f of report.findings.slice(0, maxFindings)) {
      lines.push(`  ${f.line ? `line ${f.line}` : "file"}: ${f.problem}: ${f.message}`);
    }
    if (report.findings.length > maxFindings) lines.push(`  and ${report.findings.length - maxFindings} more`);
  }
  if (problems.length > maxFiles) lines.push(`and ${problems.length - maxFiles} more files`);
  lines.push("Details: pi-sessions doctor [--all]; repairs: pi-sessions repair <file> (keeps a backup).");
  return { message: lines.join("\n"), type: "warning" };
}
