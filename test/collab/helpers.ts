/** Real HocuspocusProvider clients in Node for the collaboration tests and the benchmark. */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';

export interface Session {
  url: string;
  name: string;
  token: string;
}

/** A provider connected and synced, or rejected with the server's reason when refused. */
export function connect(s: Session, opts: { timeoutMs?: number } = {}): Promise<HocuspocusProvider> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      provider.destroy();
      reject(new Error(`provider for ${s.name} did not sync`));
    }, opts.timeoutMs ?? 10_000);
    // Its own socket, reconnecting within a second (the default backs off to 30 s): tests restart servers.
    const socket = new HocuspocusProviderWebsocket({ url: s.url, WebSocketPolyfill: WebSocket, delay: 100, minDelay: 100, factor: 1.5, maxDelay: 1000 });
    const provider: HocuspocusProvider = new HocuspocusProvider({
      websocketProvider: socket,
      name: s.name,
      token: s.token,
      document: new Y.Doc(),
      onSynced: () => {
        clearTimeout(timer);
        resolve(provider);
      },
      onAuthenticationFailed: ({ reason }) => {
        clearTimeout(timer);
        provider.destroy();
        reject(new Error(`refused: ${reason}`));
      },
    });
    provider.attach();
    const destroy = provider.destroy.bind(provider);
    provider.destroy = () => {
      destroy();
      socket.destroy();
    };
  });
}

export const textOf = (p: HocuspocusProvider) => p.document.getText('content');

/** Polls until `check` returns true; throws with `what` after the (generous) bound. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves when the provider has sent every local change and the server acknowledged it. */
export function settled(p: HocuspocusProvider): Promise<void> {
  return waitFor('the provider to send its changes', () => !p.hasUnsyncedChanges);
}
