/**
 * The short commands people type (`quire search`, `quire backlinks`, …).
 * Each is a catalog action with its positional words bound to input
 * fields; its description is the action's summary and its other flags are
 * generated from the action's input schema (`--limit 5` for `query.limit`),
 * so a change to the catalog reaches them without a second list to keep.
 * What is written here is only what the catalog cannot say: which words go
 * where, how a note is found by title, and how an answer reads for a person.
 */
import type { Command } from 'commander';
import type { RawInput } from '../../actions/validate.js';
import { AppError } from '../../core/errors.js';
import type { CatalogEntry } from './catalog.js';
import { UsageError, type Io } from './usage.js';

type Json = any;
/** Calls an action by name with the connection the command was given; resolves to its JSON answer. */
export type Call = (action: string, input: RawInput) => Promise<Json>;

type Part = 'path' | 'query' | 'body';
interface SchemaFlag {
  flag: string;
  part: Part;
  field: string;
  type: 'string' | 'integer' | 'number' | 'boolean';
  description: string;
}

export interface Shortcut {
  command: string;
  /** Positional arguments in commander's syntax. */
  args: string;
  action: string;
  /** Input fields the positional words fill (no flag is generated for them). */
  bound: string[];
  /** Flags of the command's own, beyond the schema's. */
  extra?: Array<{ flags: string; description: string }>;
  /** Writes that the command's name already states (`log` adds an entry): no --confirm asked. */
  confirmed?: boolean;
  run(call: Call, words: string[], input: RawInput, opts: Record<string, Json>): Promise<Json>;
  print(value: Json, io: Io): void;
}

const kebab = (s: string) => s.replace(/_/g, '-');

/** The scalar fields of an action's input, as flags; `bound` fields are left to the positional words. */
export function schemaFlags(entry: Pick<CatalogEntry, 'input'>, bound: readonly string[] = []): SchemaFlag[] {
  const out: SchemaFlag[] = [];
  for (const part of ['path', 'query', 'body'] as const) {
    const schema = (entry.input as Record<string, Json> | undefined)?.[part];
    for (const [field, prop] of Object.entries<Json>(schema?.properties ?? {})) {
      if (bound.includes(`${part}.${field}`)) continue;
      const type = prop.type;
      if (type !== 'string' && type !== 'integer' && type !== 'number' && type !== 'boolean') continue;
      if (out.some((f) => f.flag === kebab(field))) continue;
      out.push({ flag: kebab(field), part, field, type, description: prop.description ?? `${part}.${field}` });
    }
  }
  return out;
}

/** Puts flag values where the schema has them, converted to its types. */
export function inputFromFlags(flags: readonly SchemaFlag[], opts: Record<string, Json>): RawInput {
  const input: Record<Part, Record<string, unknown>> = { path: {}, query: {}, body: {} };
  for (const f of flags) {
    const key = f.flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const raw = opts[key];
    if (raw === undefined) continue;
    let value: unknown = raw;
    if (f.type === 'integer' || f.type === 'number') {
      value = Number(raw);
      if (!Number.isFinite(value) || (f.type === 'integer' && !Number.isInteger(value))) throw new UsageError(`--${f.flag} takes a${f.type === 'integer' ? 'n integer' : ' number'}, not ${JSON.stringify(raw)}`);
    }
    input[f.part][f.field] = value;
  }
  const out: RawInput = {};
  for (const part of ['path', 'query', 'body'] as const) if (Object.keys(input[part]).length) out[part] = input[part] as never;
  return out;
}

function merge(a: RawInput, b: RawInput): RawInput {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = { ...((a as Record<string, object>)[k] ?? {}), ...(v as object) };
  return out as RawInput;
}

// ---- finding a note: by path, by id, by title -------------------------------

const looksLikePath = (s: string) => s.includes('/') || /\.[A-Za-z0-9]{1,8}$/.test(s);

/** The note a person named, by Home path, id, title or alias; not_found with what was tried. */
export async function findNote(call: Call, name: string): Promise<{ id: string; path: string; title: string }> {
  if (looksLikePath(name)) {
    const path = name.replace(/^\.?\/+/, '');
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    let cursor: string | undefined;
    do {
      const page = await call('notes_list', { query: { ...(dir ? { path: dir } : {}), limit: 500, ...(cursor ? { cursor } : {}) } });
      const hit = page.items.find((n: Json) => n.path === path);
      if (hit) return hit;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  } else {
    try {
      return await call('get_note', { path: { id: name } });
    } catch (e) {
      if (!(e instanceof AppError) || e.code !== 'not_found') throw e;
    }
    const found = await call('notes_search', { query: { q: name, limit: 50 } });
    const lower = name.toLowerCase();
    const hit =
      found.items.find((n: Json) => n.title === name) ??
      found.items.find((n: Json) => n.title.toLowerCase() === lower || n.aliases?.some((a: string) => a.toLowerCase() === lower));
    if (hit) return hit;
  }
  throw new AppError('not_found', `No note with the path, id or title ${JSON.stringify(name)}`, { details: { note: name } });
}

// ---- how answers read -------------------------------------------------------

function more(value: Json, io: Io): void {
  if (value.next_cursor) io.out(`… more: add --cursor ${value.next_cursor}`);
}

/** A page of notes, one a line (its title too when the file name does not say it), and how to ask for the next page. */
function notePage(value: Json, io: Io): void {
  for (const n of value.items as Json[]) {
    const base = String(n.path).replace(/^.*\//, '').replace(/\.md$/i, '');
    io.out(n.title && n.title !== base ? `${n.path}  ${n.title}` : n.path);
  }
  more(value, io);
}

function localNow(): { now: string; timezone: string } {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return {
    now: `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  };
}

export const SHORTCUTS: Shortcut[] = [
  {
    command: 'search',
    args: '<words...>',
    action: 'notes_search',
    bound: ['query.q'],
    run: (call, words, input) => call('notes_search', merge(input, { query: { q: words.join(' ') } })),
    print: notePage,
  },
  {
    command: 'notes',
    args: '[path]',
    action: 'notes_list',
    bound: ['query.path'],
    run: (call, [path], input) => call('notes_list', merge(input, path ? { query: { path } } : {})),
    print: notePage,
  },
  {
    command: 'show',
    args: '<note>',
    action: 'get_note',
    bound: ['path.id'],
    run: async (call, [name]) => call('get_note', { path: { id: (await findNote(call, name!)).id } }),
    print: (v, io) => {
      io.out(`# ${v.title}`);
      io.out(`path: ${v.path}   id: ${v.id}${v.tags?.length ? `   tags: ${v.tags.map((t: string) => '#' + t).join(' ')}` : ''}`);
      io.out('');
      io.out(String(v.body ?? '').replace(/\n$/, ''));
    },
  },
  {
    command: 'backlinks',
    args: '<note>',
    action: 'backlinks',
    bound: ['query.path'],
    run: async (call, [name], input) => {
      const path = looksLikePath(name!) ? name!.replace(/^\.?\/+/, '') : (await findNote(call, name!)).path;
      return call('backlinks', merge(input, { query: { path } }));
    },
    print: (v, io) => {
      for (const b of v.items) io.out(`${b.path}:${b.occurrences?.map((o: Json) => o.line).join(',') ?? ''}  ${b.title}`);
      more(v, io);
    },
  },
  {
    command: 'tag',
    args: '<tag>',
    action: 'by_tag',
    bound: ['path.tag'],
    run: (call, [tag], input) => call('by_tag', merge(input, { path: { tag: tag!.replace(/^#/, '') } })),
    print: notePage,
  },
  {
    command: 'today',
    args: '',
    action: 'daily',
    bound: [],
    run: (call, _w, input) => call('daily', merge(input, { headers: { 'x-svc-timezone': localNow().timezone } })),
    print: (v, io) => {
      if (!v.exists) {
        io.out(`${v.date}: no Daily note yet (${v.path}); add to it with: quire log TEXT`);
        return;
      }
      io.out(`# ${v.date}  (${v.path})`);
      io.out('');
      io.out(String(v.content ?? '').replace(/\n$/, ''));
    },
  },
  {
    command: 'log',
    args: '<text...>',
    action: 'notes_journal_create_log',
    bound: ['body.text', 'body.now', 'body.timezone'],
    confirmed: true,
    run: (call, words, input) => call('notes_journal_create_log', merge(input, { body: { text: words.join(' '), ...localNow() } })),
    print: (v, io) => {
      const e = v.entry ?? v;
      io.out(`Logged${e.start ? ` at ${e.start}` : ''} in ${v.path ?? e.path ?? 'the Daily note'}${e.text ? `: ${e.text}` : ''}`);
    },
  },
  {
    command: 'tasks',
    args: '',
    action: 'notes_tasks_list',
    bound: [],
    extra: [{ flags: '--due <day>', description: 'only open tasks due on or before this day: today, tomorrow or YYYY-MM-DD' }],
    run: async (call, _w, input, opts) => {
      const due = opts.due === undefined ? null : dueLimit(String(opts.due));
      const value = await call('notes_tasks_list', input);
      if (due !== null) value.items = value.items.filter((t: Json) => !t.checked && !t.cancelled && t.due !== null && t.due <= due);
      return value;
    },
    print: (v, io) => {
      for (const t of v.items) io.out(`[${t.status}] ${t.text}  (${t.path}:${t.line})${t.due ? `  due ${t.due}` : ''}`);
      more(v, io);
    },
  },
];

/** `--due` as a date: today, tomorrow or YYYY-MM-DD. */
export function dueLimit(day: string, now = new Date()): string {
  const iso = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  if (day === 'today') return iso(now);
  if (day === 'tomorrow') return iso(new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1));
  if (/^\d{4}-\d{2}-\d{2}$/.test(day)) return day;
  throw new UsageError(`--due takes today, tomorrow or YYYY-MM-DD, not ${JSON.stringify(day)}`);
}

/**
 * A short command on a vault read straight from argv, without commander
 * (about a third of a warm call's time on a loaded machine): only the plain
 * forms — its words, its schema flags, --json, --verbose, --confirm,
 * --vault DIR. Anything else (help, a server, an unknown or malformed
 * flag, missing words) returns null and goes through commander, which
 * explains it.
 */
export function parseShortcutQuickly(argv: readonly string[], catalog: readonly CatalogEntry[]) {
  const s = SHORTCUTS.find((x) => x.command === argv[0]);
  const entry = s && catalog.find((a) => a.name === s.action);
  if (!s || !entry?.implemented) return null;
  const flags = schemaFlags(entry, s.bound);
  const valued = new Map<string, string>([['--vault', 'vault'], ...flags.filter((f) => f.type !== 'boolean').map((f) => [`--${f.flag}`, camel(f.flag)] as [string, string])]);
  for (const x of s.extra ?? []) if (/ </.test(x.flags)) valued.set(x.flags.split(' ')[0]!, camel(x.flags.split(' ')[0]!.slice(2)));
  const switches = new Map<string, string>([['--json', 'json'], ['--verbose', 'verbose'], ['--confirm', 'confirm'], ...flags.filter((f) => f.type === 'boolean').map((f) => [`--${f.flag}`, camel(f.flag)] as [string, string])]);
  const opts: Record<string, Json> = {};
  const words = readArgs(argv, 1, valued, switches, opts);
  if (!words) return null;
  const wanted = s.args.split(' ').filter((w) => w.startsWith('<')).length;
  const many = s.args.includes('...');
  const optional = s.args.split(' ').filter((w) => w.startsWith('[')).length;
  if (!opts.vault || words.length < wanted || (!many && words.length > wanted + optional)) return null;
  return { shortcut: s, flags, words, opts };
}

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The words of `argv` from `from` on, with its known flags put in `opts`; null at any other flag (commander reads those). */
function readArgs(argv: readonly string[], from: number, valued: Map<string, string>, switches: Map<string, string>, opts: Record<string, Json>): string[] | null {
  const words: string[] = [];
  for (let i = from; i < argv.length; i++) {
    const a = argv[i]!;
    if (valued.has(a) && i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) opts[valued.get(a)!] = argv[++i]!;
    else if (switches.has(a)) opts[switches.get(a)!] = true;
    else if (a.startsWith('-')) return null;
    else words.push(a);
  }
  return words;
}

/** `action run NAME` on a vault with its plain flags (--input JSON, --confirm, --json, --verbose); null otherwise, as above. */
function parseActionRunQuickly(argv: readonly string[]) {
  if (argv[1] !== 'run') return null;
  const valued = new Map([['--vault', 'vault'], ['--input', 'input']]);
  const switches = new Map([['--json', 'json'], ['--verbose', 'verbose'], ['--confirm', 'confirm']]);
  // commander's default for --input.
  const opts: Record<string, Json> = { input: '{}' };
  const words = readArgs(argv, 2, valued, switches, opts);
  if (!words || !opts.vault || words.length !== 1) return null;
  return { action: words[0]!, opts };
}

export type QuickCall = NonNullable<ReturnType<typeof parseShortcutQuickly>> | NonNullable<ReturnType<typeof parseActionRunQuickly>>;

/**
 * A call on a vault read straight from argv: a plain short command or
 * `action run`. The in-process command line and the vault daemon (for the
 * thin client) both read argv with it, so the two answer alike.
 */
export function parseQuickly(argv: readonly string[], catalog: readonly CatalogEntry[]): QuickCall | null {
  return argv[0] === 'action' ? parseActionRunQuickly(argv) : parseShortcutQuickly(argv, catalog);
}

/** Adds the short commands to the program; `run` is called with the shortcut, its words and options. */
export function registerShortcuts(
  program: Command,
  catalog: readonly CatalogEntry[],
  connection: (c: Command) => Command,
  run: (s: Shortcut, flags: SchemaFlag[], words: string[], opts: Record<string, Json>) => Promise<void>,
): void {
  for (const s of SHORTCUTS) {
    const entry = catalog.find((a) => a.name === s.action);
    if (!entry || !entry.implemented) continue;
    const flags = schemaFlags(entry, s.bound);
    const c = program.command(`${s.command}${s.args ? ' ' + s.args : ''}`).description(`${entry.summary} (action ${entry.name})`);
    for (const f of flags) c.option(`--${f.flag}${f.type === 'boolean' ? '' : ` <${f.type === 'string' ? 'value' : 'n'}>`}`, f.description);
    for (const x of s.extra ?? []) c.option(x.flags, x.description);
    connection(c).option('--json', 'print the JSON answer');
    c.action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const words = (args.slice(0, -2) as Array<string | string[] | undefined>).flatMap((w) => (w === undefined ? [] : Array.isArray(w) ? w : [w]));
      await run(s, flags, words, cmd.opts());
    });
  }
}
