/**
 * Starting and stopping an Instance: open the sidecar store, assemble the
 * services, start opening the Homes, then build the HTTP app from the
 * registry and listen.
 *
 * The Homes start opening before the app's modules load (the registry, every
 * area, Fastify: most of a start's module loading, docs/performance.md), so
 * that loading overlaps the vaults' reads and scan threads. This module
 * therefore imports only what opening the services needs; the rest is
 * imported in `startServer`.
 */
import type { FastifyInstance } from 'fastify';
import { loadConfig, paths, type Config, type ConfigInput } from './core/config.js';
import { hashSecret, newSecret } from './core/ids.js';
import type { Services } from './core/services.js';
import { SidecarStore } from './store/sidecar.js';
import { findUserById, setSetupTokenWhileEmpty } from './store/users.js';
import { RequestActivity } from './surfaces/http/activity.js';
import { tuneServerMemory } from './memory-tuning.js';
import { homesSettled, preloadDeferred } from './surfaces/deferred-modules.js';
import { InstanceVaults } from './vault/vaults.js';
import { ChangeLogs } from './changes/change-log.js';
import { JobRunner } from './jobs/runner.js';
import path from 'node:path';
import { ReminderScheduler } from './reminders/scheduler.js';
import { migrateLegacyCalendarAccounts } from './integrations/integration-store.js';

export async function openServices(config: Config, log: (line: string) => void = () => undefined): Promise<Services> {
  const store = await SidecarStore.open(paths.sidecar(config));
  const vaults = new InstanceVaults(config, store, log);
  const changes = new ChangeLogs();
  vaults.onVaultOpened((username, vault) => changes.attach(username, vault));
  const jobs = await JobRunner.open(path.join(paths.state(config), 'jobs.json'));
  const reminders = new ReminderScheduler(store, Date.now, log);
  reminders.push.allowPrivate = config.allowPrivateFetch;
  // A reminder firing changes the user's inbox, not a file: it still reaches change streams and the delta feed.
  reminders.onFired((fired) => {
    for (const { item } of fired) {
      const user = findUserById(store, item.user_id);
      if (user) changes.get(user.username)?.append({ kind: 'inbox', path: '', note_id: item.note_id, inbox_id: item.id, source: 'reminder' });
    }
  });
  return { config, store, vaults, changes, jobs, reminders };
}

/**
 * While no user exists, every start issues a fresh one-time setup token (only
 * its hash is kept, so an earlier one cannot be shown again).
 */
export async function issueSetupTokenIfEmpty(services: Services): Promise<string | null> {
  const token = newSecret('qsetup');
  return (await setSetupTokenWhileEmpty(services.store, hashSecret(token))) ? token : null;
}

/** How long stopping waits for answers still being sent before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  url: string;
  setupToken: string | null;
  close(): Promise<void>;
}

/** The HTTP side of the server: what `startServer` loads while the Homes open. */
function loadHttpModules() {
  return import('./surfaces/http/start-modules.js');
}

/**
 * `services`: already opened by the caller (`quire serve --vault` settles
 * the owner first), else opened here from `input`.
 */
export async function startServer(input: ConfigInput & { log?: (line: string) => void; services?: Services } = {}): Promise<RunningServer> {
  const log = input.log ?? ((line: string) => console.log(line));
  const services = input.services ?? (await openServices(loadConfig(input), log));
  const config = services.config;
  const vaults = services.vaults as InstanceVaults;
  // Before the Homes open, so that each one's opening is followed by a collection.
  const requests = new RequestActivity();
  const stopTuning = tuneServerMemory({ requests, onVaultOpened: (cb) => vaults.onVaultOpened((_user, vault) => cb(vault)), log });
  // Every Home starts indexing now, while the app below loads; requests for a Home still indexing wait for it.
  // Its `index ready` line waits for the server to listen: a request made then is answered from the index.
  const homes = homesSettled((cb) => vaults.onVaultOpened((_user, vault) => cb(vault)));
  let listened!: () => void;
  vaults.announceReadyAfter(new Promise<void>((resolve) => (listened = resolve)));
  const indexing = vaults.openAll();
  let app: FastifyInstance | undefined;
  try {
    const setupToken = await issueSetupTokenIfEmpty(services);
    // Calendar accounts made before Connected Accounts become their CalDAV sides (idempotent).
    await migrateLegacyCalendarAccounts(services.store);
    const { registry, buildApp, registerWeb, registerFeedRoute, registerFileDrop, registerCalDav, attachCollab, CalendarSyncSchedule } = await loadHttpModules();
    const built = buildApp({ services, actions: registry, extend: (a) => {
      registerWeb(a, services);
      registerFeedRoute(a, services);
      registerFileDrop(a, services);
      registerCalDav(a, services);
    } });
    app = built;
    // Live collaboration: WebSocket upgrades on the same port (docs/collaboration.md).
    const collab = attachCollab(built.server, services, log);
    // Before listening, so that every request is counted.
    const stopCounting = requests.attach(built.server);
    await built.listen({ host: config.host, port: config.port });
    const addr = built.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host}:${port}`;
    config.listenUrl = url;
    if (setupToken) log(`first start: no users yet. One-time setup token: ${setupToken}`);
    log(`quire listening on ${url} (data ${config.dataDir})`);
    listened();
    // Fire reminders that came due while the server was down, then keep firing them at their instant.
    await services.reminders?.start();
    // CalDAV accounts and subscriptions refreshed on a schedule (docs/calendar-sync.md).
    const calendarSync = new CalendarSyncSchedule(services, log);
    calendarSync.start();
    // Once the Homes' opening work is done and no request is in flight: the code handlers load at first use.
    let closing = false;
    void preloadDeferred({ which: 'server', after: homes.settled(indexing), busy: () => requests.inFlight > 0, log, stopped: () => closing });
    return {
      app: built,
      services,
      url,
      setupToken,
      close: async () => {
        closing = true;
        homes.stop();
        stopTuning();
        stopCounting();
        await services.reminders?.stop();
        await calendarSync.stop();
        // Open documents are written back before the vaults close.
        await collab.close();
        // Answers under way get a grace period; a client that stopped reading one (a large download) would hold close() forever.
        const cut = setTimeout(() => built.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await built.close();
        } finally {
          clearTimeout(cut);
        }
        await services.jobs?.close();
        await indexing;
        await services.vaults.close();
      },
    };
  } catch (e) {
    // Not started (the port taken, a module that failed to load): nothing is left running, the Homes already opening included.
    homes.stop();
    stopTuning();
    await app?.close();
    await services.jobs?.close();
    await services.vaults.close();
    throw e;
  }
}
