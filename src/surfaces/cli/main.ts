/**
 * The `quire` command. Each subcommand is a thin shell over functions that
 * tests call directly; exit codes: 0 done, 1 the action failed, 2 usage
 * error or refused before anything was sent.
 *
 * This module declares the commands and their options only: each command's
 * code is imported when that command runs, so `quire --help` loads nothing
 * but commander, and `actions list` or a call to a server load no index,
 * vault or HTTP server code (docs/architecture.md, "Command line"). A new
 * command follows the same pattern: its options here, its code behind
 * `await import(...)` in its action.
 */
import type { Command } from 'commander';
import { loadCatalog, type CatalogEntry } from './catalog.js';
import type { RunOptions } from './run-action.js';
import { parseQuickly, registerShortcuts } from './shortcuts.js';
import { reportFailure, UsageError } from './usage.js';

const io = { out: (s: string) => process.stdout.write(s + '\n'), err: (s: string) => process.stderr.write(s + '\n') };

/**
 * The long-running commands (`serve`, `demo`, `daemon run`) need neither the catalog nor the
 * other commands: reading the one and declaring the others took about 9 ms of each server start.
 */
const startsServer = (argv: readonly string[]) => argv[0] === 'serve' || argv[0] === 'demo' || (argv[0] === 'daemon' && argv[1] === 'run');

/** The whole program, or with no catalog (a server start) its long-running commands only, declared the same way. */
function buildProgram(Cmd: typeof Command, version: string, catalog: readonly CatalogEntry[] | undefined): Command {
  const program = new Cmd('quire')
    .description('Quire: a self-hosted Markdown vault server. Every action is reachable over HTTP, here, and over MCP.')
    .version(version)
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('Start the server (first start with no users prints a one-time setup token), or serve one existing folder with --vault')
    .option('--data <dir>', 'data folder (env QUIRE_DATA, default ./data; with --vault: $XDG_STATE_HOME/quire/<vault>-<hash>)')
    .option('--host <host>', 'address to listen on (env QUIRE_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port (env QUIRE_PORT, default 8787; 0 picks a free one)')
    .option('--vault <dir>', 'serve this existing folder, in place, as the Home of one owner; prints the URL and a token')
    .option('--follow-symlinks', 'with --vault: follow symbolic links that lead outside the folder (off by default)')
    .action(async (o: { data?: string; host?: string; port?: string; vault?: string; followSymlinks?: boolean }) => {
      if (o.followSymlinks && !o.vault) throw new UsageError('--follow-symlinks goes with --vault');
      const server = o.vault
        ? await (await import('./serve-vault.js')).serveVault({ vault: o.vault, data: o.data, host: o.host, port: o.port, followSymlinks: o.followSymlinks })
        : await (await import('../../server.js')).startServer({ dataDir: o.data, host: o.host, port: o.port });
      const stop = () => void server.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });

  program
    .command('demo')
    .description('Start a demo server: a data folder with a demo user whose Home is a sample vault; prints the URL and a token')
    .option('--data <dir>', 'data folder for the demo', './demo-data')
    .option('--port <port>', 'port (env QUIRE_PORT, default 8787)')
    .action(async (o: { data: string; port?: string }) => {
      const server = await (await import('./demo.js')).runDemo({ dataDir: o.data, port: o.port });
      const stop = () => void server.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });

  const daemonGroup = () => {
    const daemon = program.command('daemon').description('The vault daemons: one per folder used with --vault, keeping its index warm');
    daemon
      .command('run', { hidden: true })
      .requiredOption('--vault <dir>', 'the folder')
      .action(async (o: { vault: string }) => (await import('../daemon/daemon.js')).runDaemon(o.vault));
    return daemon;
  };
  if (!catalog) {
    daemonGroup();
    return program;
  }

  const admin = program.command('admin').description('Operator commands on a data folder (work while the server runs)');
  const user = admin.command('user').description('Manage users');
  user
    .command('add')
    .description('Create a user and their Home; prints JSON { user, token, home } with a new installation session')
    .requiredOption('--username <name>', 'username (letters, digits, ".", "_", "-"; unique ignoring case)')
    .requiredOption('--role <role>', 'owner, admin, member or guest')
    .option('--display-name <name>', 'display name (default: the username)')
    .option('--home <dir>', 'make this existing folder the Home, in place (default: <data>/homes/<username>)')
    .option('--data <dir>', 'data folder (env QUIRE_DATA, default ./data)')
    .action(async (o: { username: string; role: string; displayName?: string; home?: string; data?: string }) => {
      const [{ loadConfig }, { openServices }, { addUser, checkHomeFolder, existingFolder }] = await Promise.all([
        import('../../core/config.js'),
        import('../../server.js'),
        import('./admin.js'),
      ]);
      const config = loadConfig({ dataDir: o.data });
      // Before the data folder is opened (and created): one inside the Home must not leave a trace there.
      if (o.home !== undefined) checkHomeFolder(config.dataDir, null, existingFolder(o.home), o.username);
      const services = await openServices(config);
      io.out(JSON.stringify(await addUser(services, o)));
    });
  admin
    .command('token')
    .description('Issue another installation session for a user; prints JSON { user, token }')
    .requiredOption('--username <name>', 'the user')
    .option('--data <dir>', 'data folder (env QUIRE_DATA, default ./data)')
    .action(async (o: { username: string; data?: string }) => {
      const [{ loadConfig }, { openServices }, { issueAdminToken }] = await Promise.all([
        import('../../core/config.js'),
        import('../../server.js'),
        import('./admin.js'),
      ]);
      const services = await openServices(loadConfig({ dataDir: o.data }));
      io.out(JSON.stringify(await issueAdminToken(services, o.username)));
    });

  const connection = (c: Command) =>
    c
      .option('--server <url>', 'server URL (env QUIRE_SERVER)')
      .option('--token <token>', 'bearer token (env QUIRE_TOKEN)')
      .option('--vault <dir>', 'run content actions directly on a local vault folder, with no server (through its vault daemon)')
      .option('--verbose', 'say how the call is made (vault daemon started, reused, or indexing in this process)');

  registerShortcuts(program, catalog, connection, async (s, flags, words, opts) => {
    process.exitCode = await (await import('./run-action.js')).runShortcut(s, flags, words, opts, io);
  });

  const action = program.command('action').description('Run actions of the catalog');
  action
    .command('help <action_name>')
    .description("An action's summary, its inputs with types and limits, and an example")
    .action(async (name: string) => (await import('./action-help.js')).printActionHelp(catalog, name, io));
  connection(
    action
      .command('run <action_name>')
      .description('Run one action. Destructive actions need --confirm.')
      .option('--input <json>', 'JSON object with optional members path, query, headers, body', '{}')
      .option('--confirm', 'confirm a destructive action')
      .option('--json', 'print JSON only (errors print the error envelope)'),
  ).action(async (name: string, o: RunOptions) => {
    process.exitCode = await (await import('./run-action.js')).runAction(name, o, io);
  });

  program
    .command('login')
    .description('Sign in through the browser: opens (or prints) a URL and a code to approve there, waits, and stores the credential')
    .option('--server <url>', 'server URL (env QUIRE_SERVER)')
    .option('--name <name>', 'installation name shown on the approval page (default: quire on <hostname>)')
    .option('--no-browser', 'do not open a browser or listen for its return: print the address and code only')
    .action(async (o: { server?: string; name?: string; browser?: boolean }) => {
      process.exitCode = await (await import('./login.js')).login(o, io);
    });
  program
    .command('logout')
    .description('End the stored command-line session and forget it')
    .option('--server <url>', 'server URL (env QUIRE_SERVER; default: the last one signed in to)')
    .action(async (o: { server?: string }) => {
      process.exitCode = await (await import('./login.js')).logout(o, io);
    });

  const daemon = daemonGroup();
  daemon
    .command('status')
    .description('List the running vault daemons: folder, process, notes indexed, idle time left')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => (await import('./daemon-commands.js')).daemonStatus(Boolean(o.json), io));
  daemon
    .command('stop')
    .description("Stop a folder's vault daemon (it saves its index to the cache first)")
    .requiredOption('--vault <dir>', 'the folder')
    .action(async (o: { vault: string }) => {
      process.exitCode = await (await import('./daemon-commands.js')).daemonStop(o.vault, io);
    });

  program
    .command('actions')
    .description('The action catalog')
    .command('list')
    .description('List every action: name, method, route, scopes, effect, tool, surfaces, and whether it is implemented')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => (await import('./run-action.js')).listActions(Boolean(o.json), io));

  connection(program.command('mcp').description('Serve the actions as MCP tools over stdio')).action(
    async (o: RunOptions) => {
      const [{ registry }, { serveMcpStdio }, { resolveTransport }] = await Promise.all([
        import('../../actions/registry.js'),
        import('../mcp/server.js'),
        import('./run-action.js'),
      ]);
      await serveMcpStdio(registry, await resolveTransport(o, process.env, { watch: true }));
    },
  );
  program
    .command('completion <shell>')
    .description('Print a completion script for bash, zsh or fish (e.g. quire completion bash > ~/.local/share/bash-completion/completions/quire)')
    .action(async (shell: string) => {
      io.out((await import('./completion.js')).completionScript(program, catalog, shell));
    });
  return program;
}

export async function main(argv: string[]): Promise<void> {
  // commander is loaded only when needed: a plain short command or `action run` on a vault (the common calls) skips it.
  let CommanderError: (typeof import('commander'))['CommanderError'] | undefined;
  try {
    const catalog = startsServer(argv) ? undefined : await loadCatalog();
    const quick = catalog && parseQuickly(argv, catalog);
    if (quick) {
      process.exitCode = await (await import('./run-action.js')).runQuickly(quick, io);
      return;
    }
    const [commander, { VERSION }] = await Promise.all([import('commander'), import('../../core/config.js')]);
    CommanderError = commander.CommanderError;
    await buildProgram(commander.Command, VERSION, catalog).parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (CommanderError && e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      return;
    }
    process.exitCode = reportFailure(e, io);
  }
}

await main(process.argv.slice(2));
