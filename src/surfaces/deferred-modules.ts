/**
 * The modules kept out of a start (loaded by handlers at their first call, so
 * that `listening` and `index ready` come sooner; a new lazy site adds its
 * line here), in one list that the
 * server (src/server.ts) and the vault daemon (daemon/daemon.ts) load in the
 * background once their opening is done and nothing is being answered,
 * through the same holder the lazy site calls (core/first-use.ts: a
 * module imported once and kept), for two reasons (docs/performance.md,
 * "Start-up"; docs/cli.md):
 * - the first request of each kind would pay the loading (ajv ~10 ms, the
 *   calendar with ical.js more);
 * - an install replaced while the process runs (an upgrade or a rebuild:
 *   the bundle's chunks are named by hash) leaves a lazy import nothing to
 *   load; a process that has run a few seconds no longer needs those files
 *   (Node 20 resolves every `import()` anew, so a site must not import again).
 * What is left out (collaboration, uploads, passkeys, mail and CalDAV
 * clients, web push) is rare and heavy: a server that never uses it would
 * hold it for nothing. When its files are gone, the call answers
 * `service_unavailable` with `reason: upgraded` (core/errors.ts).
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

interface Deferred {
  name: string;
  load: () => Promise<unknown>;
  /** Loaded by the vault daemon too (it runs actions, but no HTTP routes). */
  daemon: boolean;
}

/**
 * Each entry loads through the holder its lazy site uses (core/first-use.ts), imported here only
 * when the preload runs: the modules holding them are loaded by every start already, and this
 * module must not pull them into the server's own start (src/server.ts).
 */
export const DEFERRED_MODULES: readonly Deferred[] = [
  { name: 'input validation (ajv)', load: async () => (await (await import('../actions/dispatch.js')).loadValidation()).prepareValidators(), daemon: true },
  { name: 'calendar (ical.js)', load: async () => (await import('../calendar/lazy-load.js')).calendarCode(), daemon: true },
  { name: 'tasks', load: async () => (await import('../tasks/actions.js')).tasksCode(), daemon: true },
  { name: 'journal', load: async () => (await import('../journal/actions.js')).journalCode(), daemon: true },
  { name: 'composer, templates, web clips', load: async () => (await import('../notes/actions.js')).notesCode(), daemon: true },
  { name: 'tag rewrites', load: async () => (await import('../tags/actions.js')).tagRewriteCode(), daemon: true },
  { name: 'CalDAV handlers', load: async () => (await import('../caldav/routes.js')).davHandlers(), daemon: false },
  { name: 'change streams', load: async () => (await import('../notes/actions.js')).changesCode(), daemon: false },
  { name: 'node:https', load: () => import('node:https'), daemon: true },
  { name: 'node:zlib', load: () => import('node:zlib'), daemon: true },
];

/** Quiet time wanted before loading: a burst of first requests right after the opening goes first. */
const QUIET_MS = 200;
/** Under steady traffic there is no quiet moment: load anyway after this many tries. */
const MAX_WAITS = 25;

/**
 * Loads the list (`which` process's part of it) once `after` settles and no
 * request has been in flight for QUIET_MS, one module per event-loop turn.
 * Nothing is printed unless a module fails to load (`log`); never throws.
 * Resolves when done, or at once when `stopped()` turns true (closing).
 */
export async function preloadDeferred(opts: {
  which: 'server' | 'daemon';
  after: Promise<unknown>;
  busy: () => boolean;
  log: (line: string) => void;
  stopped?: () => boolean;
}): Promise<void> {
  await opts.after.catch(() => undefined);
  for (let waits = 0; waits < MAX_WAITS; waits++) {
    await sleep(QUIET_MS, undefined, { ref: false });
    if (!opts.busy()) break;
  }
  for (const m of DEFERRED_MODULES) {
    if (opts.stopped?.()) return;
    if (opts.which === 'daemon' && !m.daemon) continue;
    try {
      await m.load();
    } catch (e) {
      opts.log(`preloading ${m.name} failed: ${(e as Error).message}`);
    }
    await nextTurn();
  }
}

/** What the server's Homes tell of their opening: `ready`, then `onIdle` once its background work is done. */
interface OpeningHome {
  readonly ready: Promise<unknown>;
  onIdle(cb: () => void): () => void;
}

/**
 * Call before the Homes open: `settled(opening)` resolves once `opening` has
 * and every Home opened by then has finished its background work (or failed).
 */
export function homesSettled(onOpened: (cb: (home: OpeningHome) => void) => () => void): { settled: (opening: Promise<unknown>) => Promise<void>; stop: () => void } {
  const idle: Promise<void>[] = [];
  const stop = onOpened((home) =>
    idle.push(
      new Promise<void>((resolve) => {
        const off = home.onIdle(() => (off(), resolve()));
        home.ready.catch(() => (off(), resolve()));
      }),
    ),
  );
  return {
    settled: (opening) => opening.catch(() => undefined).then(() => Promise.all(idle)).then(() => undefined),
    stop,
  };
}
