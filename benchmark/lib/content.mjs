// Deterministic content for generated sessions: a seeded PRNG and text that looks like a
// coding-agent transcript (code, logs, prose, JSON-hostile characters, some non-ASCII).
// Everything here depends only on the seed, never on the clock.

/** Small fast PRNG (sfc32) seeded from a string; good enough for test data. */
export class Rng {
  constructor(seed) {
    // xmur3 string hash -> four 32-bit words
    let h = 1779033703 ^ seed.length;
    for (let i = 0; i < seed.length; i++) {
      h = Math.imul(h ^ seed.charCodeAt(i), 3432918353);
      h = (h << 13) | (h >>> 19);
    }
    const next = () => {
      h = Math.imul(h ^ (h >>> 16), 2246822507);
      h = Math.imul(h ^ (h >>> 13), 3266489909);
      return (h ^= h >>> 16) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 15; i++) this.u32();
  }
  u32() {
    let { a, b, c, d } = this;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
    return t >>> 0;
  }
  /** float in [0, 1) */
  next() {
    return this.u32() / 4294967296;
  }
  /** integer in [lo, hi] */
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p) {
    return this.next() < p;
  }
  pick(arr) {
    return arr[Math.floor(this.next() * arr.length)];
  }
  /** skewed size in [lo, hi]: many small, a long tail of big ones (mean grows with 1/skew) */
  size(lo, hi, skew = 3) {
    return Math.round(lo * Math.pow(hi / lo, Math.pow(this.next(), skew)));
  }
  /** derive an independent generator */
  fork(label) {
    return new Rng(`${this.u32()}:${label}`);
  }
  /** n random bytes */
  bytes(n) {
    const buf = Buffer.allocUnsafe(n);
    let i = 0;
    for (; i + 4 <= n; i += 4) buf.writeUInt32LE(this.u32(), i);
    for (; i < n; i++) buf[i] = this.u32() & 0xff;
    return buf;
  }
  /** base62 id of the given length */
  token(len) {
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let s = "";
    for (let i = 0; i < len; i++) s += alphabet[this.u32() % 62];
    return s;
  }
}

const WORDS = (
  "session entry branch leaf parent child tree index context message tool result assistant user " +
  "model thinking compaction summary label token cache read write edit bash grep find file path line " +
  "buffer stream parse serialize render update state error warning value option config build test " +
  "module import export function return const let async await promise array object string number " +
  "the a to of and in is that for it on with as this be are by not or from at have an was will can " +
  "refactor implement check should would could make sure we need first then also now just here " +
  "selector theme component keybinding terminal editor cursor width height column row border color " +
  "provider request response retry timeout handler event listener callback queue worker thread pool"
).split(" ");

const IDENTS = (
  "sessionManager entries byId leafId parentId fileEntries labelsById buildIndex getBranch appendEntry " +
  "resolvePath normalizePath readFileSync writeFileSync JSON.parse JSON.stringify options config result " +
  "handleInput renderLine theme.fg selectedIndex visibleItems maxWidth truncateToWidth onSelect onCancel " +
  "provider modelId thinkingLevel usage cost totalTokens messages toolCalls content blocks text data"
).split(" ");

const PATHS = [
  "packages/coding-agent/src/core/session-manager.ts",
  "packages/coding-agent/src/modes/interactive/components/user-message-selector.ts",
  "packages/coding-agent/src/theme/theme.ts",
  "packages/coding-agent/docs/theme.md",
  "packages/ai/src/providers/anthropic.ts",
  "packages/ai/src/types.ts",
  "packages/tui/src/components/editor.ts",
  "packages/tui/src/utils.ts",
  "src/index.ts",
  "src/lib/parser.rs",
  "tests/session.test.ts",
  "README.md",
  "package.json",
  "C:\\Users\\dev\\project\\src\\main.ts",
];

const UNICODE = ["→", "✓", "✗", "›", "café", "naïve", "日本語", "Привет", "🚀", "—", "…", "é", "ß", "½", "🙂"];

function sentence(rng, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(rng.pick(WORDS));
  if (rng.chance(0.08)) out.push(rng.pick(UNICODE));
  const s = out.join(" ");
  return s[0].toUpperCase() + s.slice(1) + rng.pick([".", ".", ".", "?", ":", "!"]);
}

function codeLine(rng) {
  const ind = "  ".repeat(rng.int(0, 4));
  const id = () => rng.pick(IDENTS);
  switch (rng.int(0, 11)) {
    case 0:
      return `${ind}const ${id()} = ${id()}(${id()}, ${rng.int(0, 999)});`;
    case 1:
      return `${ind}if (${id()} === "${rng.pick(WORDS)}") {`;
    case 2:
      return `${ind}return \`${rng.pick(WORDS)} \${${id()}}\`;`;
    case 3:
      return `${ind}// ${sentence(rng, rng.int(4, 12))}`;
    case 4:
      return `import { ${id()}, ${id()} } from "./${rng.pick(WORDS)}.js";`;
    case 5:
      return `${ind}"${rng.pick(WORDS)}": "${rng.pick(PATHS).replace(/\\/g, "\\\\")}",`;
    case 6:
      return `${ind}const re = /^\\d+\\.\\w+(?:"[^"]*")?$/;`;
    case 7:
      return `${ind}}`;
    case 8:
      return `${ind}throw new Error(\`Entry \${id} not found: "${rng.pick(UNICODE)}"\`);`;
    case 9:
      return `${ind}\tfor (let i = 0; i < ${id()}.length; i++) ${id()}.push(${id()}[i]);`;
    case 10:
      return "";
    default:
      return `${ind}${id()}.${id()}(${id()});`;
  }
}

function logLine(rng, t) {
  switch (rng.int(0, 7)) {
    case 0:
      return `${new Date(t).toISOString()} INFO [${rng.pick(WORDS)}] ${sentence(rng, rng.int(3, 10))} (${rng.int(1, 900)} ms)`;
    case 1:
      return `  ✓ ${sentence(rng, rng.int(3, 8))} (${rng.int(0, 90)} ms)`;
    case 2:
      return `  ● ${rng.pick(WORDS)} › ${sentence(rng, rng.int(3, 8))}`;
    case 3:
      return `${rng.pick(PATHS)}:${rng.int(1, 2000)}:${rng.int(1, 80)}: error TS${rng.int(2000, 7999)}: ${sentence(rng, 8)}`;
    case 4:
      return `npm WARN deprecated ${rng.pick(WORDS)}@${rng.int(0, 9)}.${rng.int(0, 20)}.${rng.int(0, 9)}: ${sentence(rng, 6)}`;
    case 5:
      return `-rw-r--r--  1 dev  staff  ${rng.int(10, 99999)} Nov ${rng.int(1, 30)} 12:${rng.int(10, 59)} ${rng.pick(PATHS)}`;
    case 6:
      return `\u001b[32m+\u001b[0m ${codeLine(rng)}`;
    default:
      return `${rng.pick(PATHS)}:${rng.int(1, 999)}:${codeLine(rng).trim()}`;
  }
}

function markdownLine(rng) {
  switch (rng.int(0, 5)) {
    case 0:
      return `## ${sentence(rng, rng.int(2, 5))}`;
    case 1:
      return `| \`${rng.pick(IDENTS)}\` | ${sentence(rng, 4)} | ${rng.pick(UNICODE)} |`;
    case 2:
      return `- ${sentence(rng, rng.int(5, 14))}`;
    case 3:
      return "";
    default:
      return sentence(rng, rng.int(8, 25)) + " " + sentence(rng, rng.int(6, 20));
  }
}

function buildCorpus(rng, targetChars, lineFn) {
  const lines = [];
  let n = 0;
  while (n < targetChars) {
    const l = lineFn();
    lines.push(l);
    n += l.length + 1;
  }
  return lines.join("\n");
}

/** Text pools; `text(kind, n)` returns n characters cut from a pool at a random place. */
export class Corpus {
  constructor(seed) {
    const rng = new Rng(`corpus:${seed}`);
    let t = Date.UTC(2025, 10, 20, 23, 33, 0);
    this.pools = {
      code: buildCorpus(rng, 1_500_000, () => codeLine(rng)),
      log: buildCorpus(rng, 800_000, () => logLine(rng, (t += rng.int(1, 5000)))),
      prose: buildCorpus(rng, 600_000, () => markdownLine(rng)),
    };
  }
  text(rng, kind, n) {
    const pool = this.pools[kind];
    if (n <= 0) return "";
    let out = "";
    while (out.length < n) {
      let start = rng.int(0, pool.length - 1);
      // start at a line boundary when there is one nearby
      const nl = pool.indexOf("\n", start);
      if (nl !== -1 && nl - start < 200) start = nl + 1;
      let end = Math.min(pool.length, start + (n - out.length));
      // never split a surrogate pair
      if (end < pool.length && isLowSurrogate(pool.charCodeAt(end))) end--;
      out += pool.slice(start, end);
      if (out.length < n) out += "\n";
    }
    return out;
  }
  sentence(rng, n) {
    return sentence(rng, n);
  }
}

function isLowSurrogate(c) {
  return c >= 0xdc00 && c <= 0xdfff;
}

export const TOOL_NAMES = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/** Tool declarations like the ones pi persists in its first system message. */
export function toolDeclarations(rng, corpus) {
  const str = (description) => ({ type: "string", description });
  const num = (description) => ({ type: "number", description });
  const decls = [
    ["read", { path: str("Path to the file to read (relative or absolute)"), offset: num("Line number to start reading from (1-indexed)"), limit: num("Maximum number of lines to read") }, ["path"]],
    ["bash", { command: str("Bash command to execute"), timeout: num("Timeout in seconds (optional, no default timeout)") }, ["command"]],
    ["edit", { path: str("Path to the file to edit (relative or absolute)"), oldText: str("Exact text to find and replace (must match exactly)"), newText: str("New text to replace the old text with") }, ["path", "oldText", "newText"]],
    ["write", { path: str("Path to the file to write (relative or absolute)"), content: str("Content to write to the file") }, ["path", "content"]],
    ["grep", { pattern: str("Search pattern (regex or literal string)"), path: str("Directory or file to search"), glob: str("Filter files by glob pattern, e.g. '*.ts'"), ignoreCase: { type: "boolean" }, context: num("Lines of context") }, ["pattern"]],
    ["find", { pattern: str("Glob pattern to match files"), path: str("Directory to search in") }, ["pattern"]],
    ["ls", { path: str("Directory to list"), limit: num("Maximum number of entries to return") }, []],
    ["web_fetch", { url: str("URL to fetch"), format: { type: "string", enum: ["markdown", "text", "html"] } }, ["url"]],
    ["todo", { items: { type: "array", items: { type: "object", properties: { text: str("Item"), done: { type: "boolean" } }, required: ["text"] } } }, ["items"]],
    ["task", { description: str("Short description of the task"), prompt: str("The task for the sub-agent to perform") }, ["description", "prompt"]],
  ];
  return decls.map(([name, properties, required]) => ({
    name,
    description: corpus.text(rng, "prose", rng.int(120, 700)),
    parameters: { type: "object", properties, required, additionalProperties: false },
  }));
}

export const MODELS = [
  { provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages", price: [3, 15, 0.3, 3.75] },
  { provider: "anthropic", model: "claude-opus-4-5", api: "anthropic-messages", price: [5, 25, 0.5, 6.25] },
  { provider: "openai", model: "gpt-5.1-codex", api: "openai-responses", price: [1.25, 10, 0.125, 0] },
  { provider: "google", model: "gemini-2.5-pro", api: "google-generative-ai", price: [1.25, 10, 0.31, 0] },
];

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high"];

export function makeUsage(rng, m) {
  const input = rng.int(1, 60);
  const output = rng.int(20, 4000);
  const cacheRead = rng.chance(0.9) ? rng.int(5_000, 180_000) : 0;
  const cacheWrite = rng.int(0, 6_000);
  const c = (tokens, perM) => Math.round(tokens * perM) / 1e6;
  const cost = {
    input: c(input, m.price[0]),
    output: c(output, m.price[1]),
    cacheRead: c(cacheRead, m.price[2]),
    cacheWrite: c(cacheWrite, m.price[3]),
  };
  cost.total = Math.round((cost.input + cost.output + cost.cacheRead + cost.cacheWrite) * 1e6) / 1e6;
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}
