/** The error envelope and statuses on the HTTP surface, from a real server on a real port. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { errors } from '../../src/core/errors.js';
import { buildApp } from '../../src/surfaces/http/app.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { testAction } from '../helpers/test-action.js';

let inst: TestInstance;
let owner: { id: string; token: string };

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('olivia', 'owner');
});
afterAll(() => inst.close());

function expectEnvelope(body: any, code: string) {
  expect(body).toBeTypeOf('object');
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  if (body.error.details !== undefined) {
    for (const v of Object.values(body.error.details)) expect(typeof v).toBe('string');
  }
}

describe('HTTP error envelope', () => {
  it('answers an unknown route with 404 not_found', async () => {
    const r = await inst.api('GET', '/api/v1/no/such/route');
    expect(r.status).toBe(404);
    expectEnvelope(r.body, 'not_found');
    const r2 = await inst.api('GET', '/');
    expect(r2.status).toBe(404);
    expectEnvelope(r2.body, 'not_found');
  });

  it('answers a schema violation with 400 bad_request naming the field', async () => {
    const r = await inst.api('PATCH', `/api/v1/auth/users/${owner.id}/role`, { token: owner.token, body: { role: 'emperor' } });
    expect(r.status).toBe(400);
    expectEnvelope(r.body, 'bad_request');
    expect(r.body.error.details.field).toBe('body.role');
    expect(r.body.error.message).toContain('owner');
  });

  it('names a bad path parameter', async () => {
    const r = await inst.api('PATCH', '/api/v1/auth/users/not-a-uuid/role', { token: owner.token, body: { role: 'admin' } });
    expect(r.status).toBe(400);
    expect(r.body.error.details.field).toBe('path.id');
  });

  it('refuses unknown body fields and wrong types', async () => {
    const r = await inst.api('PATCH', '/api/v1/auth/me/profile', {
      token: owner.token,
      body: { display_name: 'O', username: 'olivia', colour: 'red' },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.field).toBe('body.colour');
    const r2 = await inst.api('PATCH', '/api/v1/auth/me/profile', { token: owner.token, body: { display_name: 5, username: 'olivia' } });
    expect(r2.status).toBe(400);
    expect(r2.body.error.details.field).toBe('body.display_name');
  });

  it('answers malformed JSON and a missing body with 400', async () => {
    const r = await inst.api('PATCH', '/api/v1/auth/me/profile', { token: owner.token, body: '{"display_name":', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expectEnvelope(r.body, 'bad_request');
    const r2 = await inst.api('PATCH', '/api/v1/auth/me/profile', { token: owner.token });
    expect(r2.status).toBe(400);
    expectEnvelope(r2.body, 'bad_request');
  });

  it('answers a missing If-Match with 428 bad_request', async () => {
    const r = await inst.api('POST', '/api/v1/notes/some-id/move', { token: owner.token, body: { folder: 'Notes/' } });
    expect(r.status).toBe(428);
    expectEnvelope(r.body, 'bad_request');
    expect(r.body.error.details.header).toBe('If-Match');
  });

  it('answers an action without a handler with 501 internal / not_implemented', async () => {
    const r = await inst.api('GET', '/api/v1/appearance', { token: owner.token });
    expect(r.status).toBe(501);
    expectEnvelope(r.body, 'internal');
    expect(r.body.error.details.reason).toBe('not_implemented');
  });

  it('checks the token before the input', async () => {
    const r = await inst.api('PATCH', `/api/v1/auth/users/${owner.id}/role`, { body: { role: 'emperor' } });
    expect(r.status).toBe(401);
    expectEnvelope(r.body, 'unauthorized');
  });
});

describe('errors thrown by handlers', () => {
  const actions = [
    testAction({
      method: 'POST',
      effect: 'destructive',
      name: 'explode',
      route: '/api/v1/test/explode',
      input: {},
      handler: () => {
        throw new Error('secret detail at /home/someone/file.ts:12');
      },
    }),
    testAction({
      method: 'POST',
      effect: 'destructive',
      name: 'stale',
      route: '/api/v1/test/stale',
      input: { headers: Type.Object({ 'if-match': Type.String() }) },
      handler: (_ctx, input) => {
        if (input.headers['if-match'] !== 'current') throw errors.staleEtag('current');
        return { ok: true };
      },
    }),
  ];

  it('hides an uncaught error behind 500 internal with no stack or path', async () => {
    const logged: unknown[] = [];
    const app = buildApp({ services: inst.server.services, actions, logError: (e) => logged.push(e) });
    const r = await app.inject({ method: 'POST', url: '/api/v1/test/explode' });
    expect(r.statusCode).toBe(500);
    const body = r.json();
    expectEnvelope(body, 'internal');
    expect(r.body).not.toContain('secret');
    expect(r.body).not.toContain('/home/');
    expect(r.body).not.toContain('at ');
    expect(logged).toHaveLength(1);
  });

  it('answers a stale If-Match with 412 conflict and a fresh one with 200', async () => {
    const app = buildApp({ services: inst.server.services, actions });
    const stale = await app.inject({ method: 'POST', url: '/api/v1/test/stale', headers: { 'if-match': 'old' } });
    expect(stale.statusCode).toBe(412);
    expectEnvelope(stale.json(), 'conflict');
    const fresh = await app.inject({ method: 'POST', url: '/api/v1/test/stale', headers: { 'if-match': 'current' } });
    expect(fresh.statusCode).toBe(200);
  });
});
