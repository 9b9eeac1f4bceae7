/**
 * The store's named operations keep the promises the areas rely on: a
 * refused change leaves nothing behind, a request's several changes land
 * together, and a file written before a table existed still works.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SidecarStore } from '../../src/store/sidecar.js';
import type { InboxItemRecord, PasskeyRecord, SessionRecord, UserRecord } from '../../src/store/schema.js';
import { completeRegistration, insertInvite, listInvites, passkeysOf, settleCliRequest, insertCliRequest } from '../../src/store/sign-in.js';
import { findUserByName, insertUser, instanceSettings, listUsers, setSetupTokenWhileEmpty } from '../../src/store/users.js';
import { findReceipt, inboxOf, mutateInboxItem, nextFiringAt } from '../../src/store/notifications.js';

async function openStore(contents?: unknown): Promise<SidecarStore> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quire-store-ops-')), 'state', 'sidecar.json');
  if (contents !== undefined) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(contents));
  }
  return SidecarStore.open(file);
}

const user = (id: string, username: string): UserRecord => ({
  id,
  username,
  display_name: username,
  role: 'member',
  disabled: false,
  quota_override_bytes: null,
  created_at: 1,
});

const session = (id: string, userId: string): SessionRecord => ({
  id,
  user_id: userId,
  kind: 'web',
  installation_name: null,
  token_hash: `hash-${id}`,
  created_at: 1,
  expires_at: 10_000,
  last_used_at: null,
  confirmed_at: null,
});

const passkey = (id: string, userId: string): PasskeyRecord => ({
  id,
  user_id: userId,
  name: 'key',
  public_key: 'pk',
  counter: 0,
  transports: [],
  device_type: 'singleDevice',
  backed_up: false,
  created_at: 1,
  last_used_at: null,
});

const refuse = () => {
  throw new Error('refused');
};

describe('insertUser', () => {
  it('adds the user and the first session together, and ends the setup token', async () => {
    const store = await openStore();
    expect(await setSetupTokenWhileEmpty(store, 'setup-hash')).toBe(true);
    await insertUser(store, () => user('u1', 'ada'), (u) => session('s1', u.id));
    expect(findUserByName(store, 'ADA')?.id).toBe('u1');
    expect(store.snapshot().sessions.map((s) => s.user_id)).toEqual(['u1']);
    expect(instanceSettings(store).setup_token_hash).toBeNull();
    expect(await setSetupTokenWhileEmpty(store, 'again')).toBe(false);
  });

  it('a refused user leaves no user, no session and the setup token as it was', async () => {
    const store = await openStore();
    await setSetupTokenWhileEmpty(store, 'setup-hash');
    await expect(insertUser(store, refuse, (u) => session('s1', u.id))).rejects.toThrow('refused');
    expect(listUsers(store)).toEqual([]);
    expect(store.snapshot().sessions).toEqual([]);
    expect(instanceSettings(store).setup_token_hash).toBe('setup-hash');
  });
});

describe('completeRegistration', () => {
  const invite = {
    id: 'i1',
    token_hash: 'ih',
    role: 'member' as const,
    quota_override_bytes: null,
    ttl_secs: 60,
    created_by: 'owner',
    created_at: 1,
    expires_at: 100_000,
    used_at: null,
    used_by: null,
    revoked_at: null,
  };

  it('creates the user, spends the invite, keeps the passkey and the session in one step', async () => {
    const store = await openStore();
    await insertInvite(store, invite);
    const seen: boolean[] = [];
    await completeRegistration(store, {
      passkey: passkey('pk1', 'u1'),
      newUser: () => user('u1', 'bea'),
      inviteId: 'i1',
      session: session('s1', 'u1'),
      now: 50,
      check: (state) => seen.push(state.invite?.used_at === null),
    });
    expect(seen).toEqual([true]);
    expect(listUsers(store).map((u) => u.username)).toEqual(['bea']);
    expect(listInvites(store)[0]).toMatchObject({ used_at: 50, used_by: 'u1' });
    expect(passkeysOf(store, 'u1').map((p) => p.id)).toEqual(['pk1']);
    expect(store.snapshot().sessions.map((s) => s.id)).toEqual(['s1']);
  });

  it('a refusing check changes nothing: no user, invite unspent, no passkey, no session', async () => {
    const store = await openStore();
    await insertInvite(store, invite);
    await expect(
      completeRegistration(store, {
        passkey: passkey('pk1', 'u1'),
        newUser: () => user('u1', 'bea'),
        inviteId: 'i1',
        session: session('s1', 'u1'),
        now: 50,
        check: refuse,
      }),
    ).rejects.toThrow('refused');
    expect(listUsers(store)).toEqual([]);
    expect(listInvites(store)[0]!.used_at).toBeNull();
    expect(passkeysOf(store, 'u1')).toEqual([]);
    expect(store.snapshot().sessions).toEqual([]);
  });
});

describe('settleCliRequest', () => {
  it('keeps what the step changed even when it answers a refusal (the poll time), and issues no session then', async () => {
    const store = await openStore();
    const base = {
      id: 'r1',
      device_code_hash: 'dh',
      challenge: 'c',
      installation_name: 'laptop',
      redirect_uri: null,
      created_at: 1,
      expires_at: 100_000,
      interval_secs: 1,
      last_poll_at: null,
      approved_by: null,
      approved_at: null,
      denied: false,
      issued_at: null,
    };
    const req = await insertCliRequest(store, base, () => 'BCDF-GHJK', 0);
    expect(req.user_code).toBe('BCDF-GHJK');
    const answer = await settleCliRequest(store, 'dh', (r) => {
      r!.last_poll_at = 42;
      return { answer: 'pending' };
    });
    expect(answer).toBe('pending');
    expect(store.snapshot().cli_requests![0]!.last_poll_at).toBe(42);
    expect(store.snapshot().sessions).toEqual([]);
  });
});

describe('mutateInboxItem', () => {
  const item: InboxItemRecord = {
    id: 'x1',
    user_id: 'u1',
    created_ms: 1,
    read: false,
    kind: 'block_reminder',
    note_id: 'n1',
    block_id: 'b1',
    title: 't',
    excerpt: 'e',
    reminder_id: 'r1',
    state: 'pending',
    snoozed_until_ms: null,
  };
  const m = { userId: 'u1', itemId: 'x1', kind: 'reminder_done', now: 100, receiptTtlMs: 1000, receiptKeepMs: 1000 };
  const done = (i: InboxItemRecord) => {
    i.state = 'done';
    return { result: { id: i.id, state: i.state } };
  };

  let store: SidecarStore;
  beforeAll(async () => {
    store = await openStore();
    await store.transact((d) => {
      d.inbox = [{ ...item }];
    });
  });

  // The rows run in order, each on the state the rows before it left.
  it.each([
    ['the first call', { operationId: 'op1' }, 'done'],
    ['the same operation again', { operationId: 'op1' }, 'replayed'],
    ['the same id for another action', { operationId: 'op1', kind: 'inbox_delete' }, 'reused'],
    ['another item', { operationId: 'op2', itemId: 'nope' }, 'missing'],
  ] as const)('%s answers %s', async (_what, extra, outcome) => {
    const out = await mutateInboxItem(store, { ...m, ...extra }, done);
    expect(out.outcome).toBe(outcome);
  });

  it('changed the item once and kept one receipt holding the item as it was', () => {
    expect(inboxOf(store, 'u1').map((i) => i.state)).toEqual(['done']);
    expect(findReceipt(store, 'u1', 'op1')).toMatchObject({ kind: 'reminder_done', inverse: { state: 'pending' } });
    expect(findReceipt(store, 'u1', 'op2')).toBeUndefined();
  });
});

describe('files written before a table existed', () => {
  it('read the missing tables as empty', async () => {
    const store = await openStore({
      schema: 1,
      instance: { name: 'Quire', open_signup: false, share_invites: false, default_quota_bytes: 0, setup_token_hash: null, created_at: 1 },
      users: [user('u1', 'ada')],
      sessions: [],
      app_passwords: [],
    });
    expect(passkeysOf(store, 'u1')).toEqual([]);
    expect(listInvites(store)).toEqual([]);
    expect(inboxOf(store, 'u1')).toEqual([]);
    expect(nextFiringAt(store)).toBeNull();
  });
});
