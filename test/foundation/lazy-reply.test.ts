/** Lazy replies: data built only for a surface that asks for it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyReply, toOutcome } from '../../src/actions/reply.js';
import { buildApp } from '../../src/surfaces/http/app.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { testAction } from '../helpers/test-action.js';

let inst: TestInstance;
beforeAll(async () => {
  inst = await startInstance();
});
afterAll(() => inst.close());

function counted() {
  const made = { count: 0 };
  const data = { items: [{ id: 'a', title: 'Été' }], next_cursor: null };
  const bytes = Buffer.from(JSON.stringify(data));
  return { made, data, make: () => lazyReply(() => (made.count++, data), { json: () => bytes }) };
}

describe('lazyReply', () => {
  it('builds its data once, when a surface first reads it, and answers 200 without building it', () => {
    const { made, data, make } = counted();
    const out = toOutcome(make());
    expect(out.status).toBe(200);
    expect(out.json!().toString()).toBe(JSON.stringify(data));
    expect(made.count).toBe(0);
    expect(out.body).toEqual(data);
    expect(out.body).toBe(out.body);
    expect(made.count).toBe(1);
  });

  it('is sent over HTTP as its JSON bytes, its data never built', async () => {
    const { made, data, make } = counted();
    const action = testAction({ name: 'lazy', route: '/api/v1/test/lazy', input: {}, handler: () => make() });
    const app = buildApp({ services: inst.server.services, actions: [action] });
    const r = await app.inject({ method: 'GET', url: '/api/v1/test/lazy' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.json()).toEqual(data);
    expect(made.count).toBe(0);
    await app.close();
  });
});
