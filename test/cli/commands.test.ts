/**
 * The short commands, `quire action help` and the completion scripts,
 * through the real `quire` command on a vault (via its daemon): readable by
 * default, the action's JSON with --json, flags from the input schema.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { cliWorld, treeOf } from './helpers.js';

const world = cliWorld();
let vault: string;
beforeAll(() => {
  vault = world.makeVault();
});
afterAll(() => world.cleanup());

const quire = (...args: string[]) => runCli(args, { env: world.env, timeoutMs: 60_000 });
const onVault = async (...args: string[]) => {
  const r = await quire(...args, '--vault', vault);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
};
const json = async (...args: string[]) => JSON.parse(await onVault(...args, '--json'));

describe('short commands on a vault', () => {
  it('search, notes, tag and backlinks print paths; --json prints the action answer; --limit maps to query.limit', async () => {
    expect(await onVault('search', 'sand')).toBe('Books/Dune.md\n');
    expect((await json('search', 'sand')).items[0]).toMatchObject({ path: 'Books/Dune.md', title: 'Dune' });
    expect((await json('search', 'home', '--limit', '1')).items).toHaveLength(1);
    expect(await onVault('notes')).toBe('Books/Dune.md\nHome.md\nProject Alpha.md\n');
    expect(await onVault('notes', 'Books')).toBe('Books/Dune.md\n');
    expect(await onVault('tag', '#inbox')).toBe('Home.md\nProject Alpha.md\n');
    expect((await json('tag', 'project')).items.map((n: { path: string }) => n.path)).toEqual(['Project Alpha.md']);
    // By path, or by title (found through search).
    expect(await onVault('backlinks', 'Home.md')).toBe('Books/Dune.md:3  Dune\nProject Alpha.md:6  Project Alpha\n');
    expect((await json('backlinks', 'Home')).items.map((n: { path: string }) => n.path)).toEqual(['Books/Dune.md', 'Project Alpha.md']);
    const bad = await quire('search', 'x', '--limit', 'many', '--vault', vault);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit takes an integer');
  });

  it('show finds a note by title, path or id', async () => {
    const byTitle = await onVault('show', 'project alpha');
    expect(byTitle).toContain('# Project Alpha\npath: Project Alpha.md');
    expect(byTitle).toContain('Back to [[Home]]. #inbox');
    const note = await json('show', 'Books/Dune.md');
    expect(note).toMatchObject({ path: 'Books/Dune.md', title: 'Dune', body: '# Dune\n\nA book about sand. [[Home]]\n' });
    expect((await json('show', note.id)).path).toBe('Books/Dune.md');
    const missing = await quire('show', 'No Such Note', '--vault', vault);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error: not_found: No note with the path, id or title "No Such Note"');
  });

  it('log writes a Daily entry through the composer; today shows it; tasks --due today lists what is due', async () => {
    const before = treeOf(vault);
    expect(await onVault('today')).toMatch(/no Daily note yet/);
    const logged = await onVault('log', '14:30', 'met', 'Ada', '#people');
    expect(logged).toMatch(/^Logged at 14:30 in Journal\/\d{4}-\d{2}-\d{2}\.md: met Ada #people\n$/);
    const today = await onVault('today');
    expect(today).toContain('- 14:30 met Ada #people');
    const day = await json('today');
    expect(day.exists).toBe(true);
    expect(day.entries).toHaveLength(1);
    // Only the Daily note is new in the vault.
    expect(treeOf(vault).filter((f) => !before.includes(f)).map((f) => f.replace(/ \d+$/, ''))).toEqual([day.path]);

    expect(await onVault('tasks', '--due', 'today')).toBe('[ ] call Ada 📅 2020-01-02  (Home.md:5)  due 2020-01-02\n');
    expect((await json('tasks')).items.map((t: { text: string }) => t.text)).toEqual(['call Ada 📅 2020-01-02', 'later 📅 2999-01-01']);
    expect((await json('tasks', '--limit', '1')).items).toHaveLength(1);
    await quire('daemon', 'stop', '--vault', vault);
  });
});

describe('action help and completion', () => {
  it('explains an action from the catalog: summary, inputs with types and limits, an example', async () => {
    const r = await quire('action', 'help', 'notes_search');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('notes_search: Full-text search');
    expect(r.stdout).toContain('GET /api/v1/notes/search');
    expect(r.stdout).toContain('query.q  string (length 1..4096) — Search text');
    expect(r.stdout).toContain('query.limit?  integer (value 1..200)');
    expect(r.stdout).toContain(`quire action run notes_search --input '{"query":{"q":"<q>"}}'`);
    expect(r.stdout).toContain('quire search <words...> [--limit] [--path] [--tag] [--json]');
    const destructive = await quire('action', 'help', 'notes_composer_parse');
    expect(destructive.stdout).toContain('body.mode  one of event|task|note');
    const unknown = await quire('action', 'help', 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown action "nope"');
  });

  it('prints completion scripts that parse, with the short commands, their flags and the action names', async () => {
    const dir = fs.mkdtempSync(path.join(world.runtime, '..', 'completion-'));
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await quire('completion', shell);
      expect(r.code).toBe(0);
      fs.writeFileSync(path.join(dir, shell), r.stdout);
    }
    execFileSync('bash', ['-n', path.join(dir, 'bash')]);
    const words = (line: string) =>
      execFileSync('bash', ['-c', `source ${path.join(dir, 'bash')}; _quire_words ${JSON.stringify(line)}`], { encoding: 'utf8' }).trim().split(' ');
    expect(words('')).toEqual(expect.arrayContaining(['search', 'backlinks', 'daemon', 'completion', '--help']));
    expect(words('search')).toEqual(expect.arrayContaining(['--limit', '--vault', '--json']));
    expect(words('action run')).toEqual(expect.arrayContaining(['notes_search', 'backlinks']));
    expect(fs.readFileSync(path.join(dir, 'fish'), 'utf8')).toContain("complete -c quire -n '__fish_seen_subcommand_from search' -l limit -r");
    const bad = await quire('completion', 'tcsh');
    expect(bad.code).toBe(2);
  });
});
