/**
 * Named operations on the sign-in tables: ceremonies in progress (auth
 * flows), passkeys, linked OpenID Connect identities, invites, re-enrolment
 * links, recovery keys, command-line sign-in requests and setup-profile
 * links. Files written before these tables existed load with them empty.
 *
 * Where a request changes several of them at once (finishing a passkey
 * registration, exchanging a command-line sign-in for a session) there is one
 * operation that does it in one transaction; the rules stay in src/accounts/
 * and come in as a `check` that sees the records and throws to refuse.
 */
import {
  authTables,
  type AuthFlowRecord,
  type CliRequestRecord,
  type InstanceRecord,
  type InviteRecord,
  type OidcLinkRecord,
  type PasskeyRecord,
  type ProfileLinkRecord,
  type ReenrolLinkRecord,
  type RecoveryKeyRecord,
  type SessionRecord,
  type UserRecord,
} from './schema.js';
import type { SidecarStore } from './sidecar.js';

const tables = (store: SidecarStore) => authTables(store.snapshot());

// Auth flows ------------------------------------------------------------------------------------

/** Keeps a started ceremony, forgetting those expired at `now`. */
export function insertFlow(store: SidecarStore, flow: AuthFlowRecord, now: number): Promise<void> {
  return store.transact((data) => {
    const t = authTables(data);
    data.auth_flows = [...t.auth_flows.filter((f) => f.expires_at > now), flow];
  });
}

/** Removes and returns flow `id` (null if unknown): a flow is used once, whatever happens next. */
export function takeFlow(store: SidecarStore, id: string): Promise<AuthFlowRecord | null> {
  return takeFirst(store, (f) => f.id === id);
}

/** Removes and returns the OpenID Connect flow whose state is `state`. */
export function takeOidcFlow(store: SidecarStore, state: string): Promise<AuthFlowRecord | null> {
  return takeFirst(store, (f) => f.kind === 'oidc' && f.challenge === state);
}

function takeFirst(store: SidecarStore, match: (f: AuthFlowRecord) => boolean): Promise<AuthFlowRecord | null> {
  return store.transact((data) => {
    const t = authTables(data);
    const i = t.auth_flows.findIndex(match);
    return i < 0 ? null : t.auth_flows.splice(i, 1)[0]!;
  });
}

// Passkeys and linked identities ----------------------------------------------------------------

export const passkeysOf = (store: SidecarStore, userId: string): PasskeyRecord[] =>
  tables(store).passkeys.filter((p) => p.user_id === userId);

export const findPasskey = (store: SidecarStore, id: string): PasskeyRecord | undefined =>
  tables(store).passkeys.find((p) => p.id === id);

/** Changes passkey `id` (of `userId`, when given) in one transaction; null if there is none. */
export function updatePasskey(
  store: SidecarStore,
  id: string,
  change: (p: PasskeyRecord) => void,
  userId?: string,
): Promise<PasskeyRecord | null> {
  return store.transact((data) => {
    const p = authTables(data).passkeys.find((x) => x.id === id && (userId === undefined || x.user_id === userId));
    if (!p) return null;
    change(p);
    return { ...p };
  });
}

/** The ways a user can sign in: passkeys and linked identities. */
export interface SignInMethods {
  passkeys: readonly PasskeyRecord[];
  identities: readonly OidcLinkRecord[];
}

const methodsIn = (data: Parameters<typeof authTables>[0], userId: string): SignInMethods => {
  const t = authTables(data);
  return { passkeys: t.passkeys.filter((p) => p.user_id === userId), identities: t.oidc_links.filter((l) => l.user_id === userId) };
};

export const signInMethodsOf = (store: SidecarStore, userId: string): SignInMethods => methodsIn(store.snapshot(), userId);

/**
 * Removes passkey `id` of `userId` after `check` (which sees all the user's
 * sign-in methods) lets it, and marks session `confirm.sessionId` confirmed
 * in the same transaction. False if the user has no such passkey.
 */
export function deletePasskey(
  store: SidecarStore,
  userId: string,
  id: string,
  check: (methods: SignInMethods) => void,
  confirm?: { sessionId: string; at: number },
): Promise<boolean> {
  return store.transact((data) => {
    check(methodsIn(data, userId));
    const t = authTables(data);
    const i = t.passkeys.findIndex((p) => p.id === id && p.user_id === userId);
    if (i < 0) return false;
    t.passkeys.splice(i, 1);
    const s = confirm && data.sessions.find((x) => x.id === confirm.sessionId);
    if (s) s.confirmed_at = confirm!.at;
    return true;
  });
}

export const oidcLinksOf = (store: SidecarStore, userId: string): OidcLinkRecord[] =>
  tables(store).oidc_links.filter((l) => l.user_id === userId);

export const findOidcLinkBySubject = (store: SidecarStore, provider: string, subject: string): OidcLinkRecord | undefined =>
  tables(store).oidc_links.find((l) => l.provider === provider && l.subject === subject);

/**
 * Links identity `link` to its user, replacing the user's earlier identity
 * from that provider, once `check` accepts the session that asked and
 * whichever account the identity is linked to now.
 */
export function linkIdentity(
  store: SidecarStore,
  link: OidcLinkRecord,
  sessionId: string | null,
  check: (state: { session: SessionRecord | undefined; linkedTo: OidcLinkRecord | undefined }) => void,
): Promise<void> {
  return store.transact((data) => {
    const t = authTables(data);
    check({
      session: data.sessions.find((s) => s.id === sessionId),
      linkedTo: t.oidc_links.find((l) => l.provider === link.provider && l.subject === link.subject),
    });
    data.oidc_links = [...t.oidc_links.filter((l) => !(l.user_id === link.user_id && l.provider === link.provider)), link];
  });
}

/** Unlinks `userId`'s identity from `provider` after `check` lets it; false if none is linked. */
export function deleteOidcLink(
  store: SidecarStore,
  userId: string,
  provider: string,
  check: (methods: SignInMethods) => void,
): Promise<boolean> {
  return store.transact((data) => {
    const t = authTables(data);
    if (!t.oidc_links.some((l) => l.user_id === userId && l.provider === provider)) return false;
    check(methodsIn(data, userId));
    data.oidc_links = t.oidc_links.filter((l) => !(l.user_id === userId && l.provider === provider));
    return true;
  });
}

// Finishing a passkey registration --------------------------------------------------------------

/** What a registration's `check` sees, read in the transaction that keeps the passkey. */
export interface RegistrationState {
  instance: Readonly<InstanceRecord>;
  users: readonly UserRecord[];
  passkeyTaken: boolean;
  /** The existing user it registers for (absent for a new user or a user gone meanwhile). */
  user: UserRecord | undefined;
  invite: InviteRecord | undefined;
  reenrolLink: ReenrolLinkRecord | undefined;
  session: SessionRecord | undefined;
}

export interface Registration {
  passkey: PasskeyRecord;
  /** Builds the new user from the current users (throws on a taken name); absent: `passkey.user_id` exists. */
  newUser?: (users: readonly UserRecord[]) => UserRecord;
  /** Spent by this registration. */
  inviteId?: string;
  reenrolLinkId?: string;
  /** A recovery key works once: recovering removes it. */
  dropRecoveryKey?: boolean;
  /** The session that started it (adding a passkey), shown to `check`. */
  startedBy?: string | null;
  /** The session the registration signs in, if any. */
  session?: SessionRecord;
  now: number;
  check: (state: RegistrationState) => void;
}

/** Keeps a verified passkey with everything it brings (a new user, a spent invite or link, a session) in one transaction. */
export function completeRegistration(store: SidecarStore, r: Registration): Promise<UserRecord> {
  return store.transact((data) => {
    const t = authTables(data);
    const invite = r.inviteId === undefined ? undefined : t.invites.find((i) => i.id === r.inviteId);
    const reenrolLink = r.reenrolLinkId === undefined ? undefined : t.reenrol_links.find((l) => l.id === r.reenrolLinkId);
    r.check({
      instance: data.instance,
      users: data.users,
      passkeyTaken: t.passkeys.some((p) => p.id === r.passkey.id),
      user: r.newUser ? undefined : data.users.find((u) => u.id === r.passkey.user_id),
      invite,
      reenrolLink,
      session: r.startedBy ? data.sessions.find((s) => s.id === r.startedBy) : undefined,
    });
    let user: UserRecord;
    if (r.newUser) {
      user = r.newUser(data.users);
      data.users.push(user);
      data.instance.setup_token_hash = null;
    } else {
      user = data.users.find((u) => u.id === r.passkey.user_id)!;
    }
    if (invite) {
      invite.used_at = r.now;
      invite.used_by = user.id;
    }
    if (reenrolLink) reenrolLink.used_at = r.now;
    if (r.dropRecoveryKey) t.recovery_keys = t.recovery_keys.filter((k) => k.user_id !== user.id);
    t.passkeys.push(r.passkey);
    if (r.session) data.sessions.push(r.session);
    return { ...user };
  });
}

// Invites, re-enrolment links, recovery keys ----------------------------------------------------

export const listInvites = (store: SidecarStore): readonly InviteRecord[] => tables(store).invites;

export const findInviteByTokenHash = (store: SidecarStore, hash: string): InviteRecord | undefined =>
  tables(store).invites.find((i) => i.token_hash === hash);

export function insertInvite(store: SidecarStore, invite: InviteRecord): Promise<void> {
  return store.transact((data) => {
    authTables(data).invites.push(invite);
  });
}

/** Changes invite `id` in one transaction (`change` may throw); null if there is none. */
export function updateInvite(store: SidecarStore, id: string, change: (i: InviteRecord) => void): Promise<InviteRecord | null> {
  return store.transact((data) => {
    const inv = authTables(data).invites.find((i) => i.id === id);
    if (!inv) return null;
    change(inv);
    return { ...inv };
  });
}

export const findReenrolLinkByTokenHash = (store: SidecarStore, hash: string): ReenrolLinkRecord | undefined =>
  tables(store).reenrol_links.find((l) => l.token_hash === hash);

/** Keeps a re-enrolment link once `check` accepts its user as the store has it now. */
export function insertReenrolLink(
  store: SidecarStore,
  link: ReenrolLinkRecord,
  check: (user: UserRecord | undefined) => void,
): Promise<void> {
  return store.transact((data) => {
    check(data.users.find((u) => u.id === link.user_id));
    authTables(data).reenrol_links.push(link);
  });
}

export const recoveryKeyOf = (store: SidecarStore, userId: string): RecoveryKeyRecord | undefined =>
  tables(store).recovery_keys.find((r) => r.user_id === userId);

/** Keeps `key` as its user's only recovery key. */
export function replaceRecoveryKey(store: SidecarStore, key: RecoveryKeyRecord): Promise<void> {
  return store.transact((data) => {
    const t = authTables(data);
    data.recovery_keys = [...t.recovery_keys.filter((r) => r.user_id !== key.user_id), key];
  });
}

// Command-line sign-in requests -----------------------------------------------------------------

/**
 * Keeps a new request under a user code `newCode` makes that no kept request
 * has, forgetting requests that expired before `forgetBefore`.
 */
export function insertCliRequest(
  store: SidecarStore,
  request: Omit<CliRequestRecord, 'user_code'>,
  newCode: () => string,
  forgetBefore: number,
): Promise<CliRequestRecord> {
  return store.transact((data) => {
    const t = authTables(data);
    const kept = t.cli_requests.filter((r) => r.expires_at > forgetBefore);
    let code = newCode();
    while (kept.some((r) => r.user_code === code)) code = newCode();
    const r: CliRequestRecord = { ...request, user_code: code };
    data.cli_requests = [...kept, r];
    return { ...r };
  });
}

export const findCliRequestByUserCode = (store: SidecarStore, userCode: string): CliRequestRecord | undefined =>
  tables(store).cli_requests.find((r) => r.user_code === userCode);

/** Changes the request with `userCode` in one transaction; `change` gets undefined when there is none, and must throw then. */
export function updateCliRequestByUserCode(
  store: SidecarStore,
  userCode: string,
  change: (r: CliRequestRecord | undefined) => void,
): Promise<CliRequestRecord> {
  return store.transact((data) => {
    const r = authTables(data).cli_requests.find((x) => x.user_code === userCode);
    change(r);
    return { ...r! };
  });
}

/**
 * One poll of the request whose device code hashes to `hash`: `step` sees
 * the request (a draft it may change: poll time, spent) and its approver,
 * and returns its answer and, when the sign-in succeeds, the session to
 * keep. Everything `step` changed is kept even when the answer is a refusal.
 */
export function settleCliRequest<T>(
  store: SidecarStore,
  hash: string,
  step: (r: CliRequestRecord | undefined, userOf: (id: string) => UserRecord | undefined) => { answer: T; session?: SessionRecord },
): Promise<T> {
  return store.transact((data) => {
    const r = authTables(data).cli_requests.find((x) => x.device_code_hash === hash);
    const { answer, session } = step(r, (id) => data.users.find((u) => u.id === id));
    if (session) data.sessions.push(session);
    return answer;
  });
}

// Setup-profile download links ------------------------------------------------------------------

/** Keeps a profile link, forgetting those expired at `now` or downloaded. */
export function insertProfileLink(store: SidecarStore, link: ProfileLinkRecord, now: number): Promise<void> {
  return store.transact((data) => {
    const t = authTables(data);
    data.profile_links = [...t.profile_links.filter((p) => p.expires_at > now && p.downloaded_at === null), link];
  });
}

/** Removes and returns the profile link whose token hashes to `hash` (null if unknown): each downloads once. */
export function takeProfileLink(store: SidecarStore, hash: string): Promise<ProfileLinkRecord | null> {
  return store.transact((data) => {
    const t = authTables(data);
    const i = t.profile_links.findIndex((p) => p.token_hash === hash);
    return i < 0 ? null : t.profile_links.splice(i, 1)[0]!;
  });
}
