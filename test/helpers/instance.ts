/** A real Instance for end-to-end tests: a temp data folder, a server on a free loopback port. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../../src/server.js';
import { addUser } from '../../src/surfaces/cli/admin.js';

export interface TestInstance {
  server: RunningServer;
  url: string;
  dataDir: string;
  /** Creates a user with a fresh installation session (recently confirmed, as from the console). */
  user(username: string, role?: 'owner' | 'admin' | 'member' | 'guest'): Promise<{ id: string; token: string }>;
  api(method: string, route: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export function tempDir(prefix = 'quire-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startInstance(
  opts: { recentConfirmationSeconds?: number; allowPrivateFetch?: boolean } = {},
): Promise<TestInstance> {
  const dataDir = tempDir();
  const server = await startServer({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    recentConfirmationSeconds: opts.recentConfirmationSeconds,
    allowPrivateFetch: opts.allowPrivateFetch,
    log: () => undefined,
  });
  const api: TestInstance['api'] = async (method, route, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    const res = await fetch(server.url + route, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    server,
    url: server.url,
    dataDir,
    async user(username, role = 'member') {
      const { user, token } = await addUser(server.services, { username, role });
      return { id: user.id, token };
    },
    api,
    async close() {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
