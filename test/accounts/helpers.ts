/** Shared steps of the sign-in tests: a software authenticator driving the real passkey routes. */
import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';
import { expect } from 'vitest';
import type { TestInstance } from '../helpers/instance.js';

export type { WebAuthnEmulator };

/** A software authenticator with its own credential store (the library's default store is shared). */
export function newAuthenticator(opts: { signCounterIncrement?: number } = {}): WebAuthnEmulator {
  return new WebAuthnEmulator(
    new AuthenticatorEmulator({ credentialsRepository: new PasskeysCredentialsMemoryRepository(), ...opts }),
  );
}

/** The origin the server expects (its listen URL with 127.0.0.1 shown as localhost). */
export const originOf = (inst: TestInstance) => inst.url.replace('127.0.0.1', 'localhost');

export interface SignedIn {
  token: string;
  user: { id: string; username: string; role: string };
  passkey: { id: string; name: string };
}

/** Finishes a registration flow with `authenticator`; expects 201. */
export async function finishRegistration(inst: TestInstance, authenticator: WebAuthnEmulator, started: any, name = 'key'): Promise<SignedIn> {
  const credential = authenticator.createJSON(originOf(inst), started.options);
  const r = await inst.api('POST', '/api/v1/auth/passkeys/registration/finish', { body: { flow: started.flow, credential, name } });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

export async function setupOwner(inst: TestInstance, authenticator: WebAuthnEmulator, username = 'olive'): Promise<SignedIn> {
  const s = await inst.api('POST', '/api/v1/auth/setup/start', {
    body: { token: inst.server.setupToken, username, display_name: 'Olive Owner' },
  });
  expect(s.status, s.text).toBe(200);
  return finishRegistration(inst, authenticator, s.body, 'laptop');
}

export async function passkeyLogin(inst: TestInstance, authenticator: WebAuthnEmulator, kind: 'web' | 'installation' = 'web') {
  const s = await inst.api('POST', '/api/v1/auth/passkeys/login/start');
  expect(s.status, s.text).toBe(200);
  const credential = authenticator.getJSON(originOf(inst), s.body.options);
  return inst.api('POST', '/api/v1/auth/passkeys/login/finish', { body: { flow: s.body.flow, credential, kind, installation_name: kind === 'installation' ? 'phone app' : null } });
}

/** Gives session `token` a recent confirmation with a passkey check. */
export async function confirm(inst: TestInstance, authenticator: WebAuthnEmulator, token: string) {
  const s = await inst.api('POST', '/api/v1/auth/assert/start', { token });
  expect(s.status, s.text).toBe(200);
  const credential = authenticator.getJSON(originOf(inst), s.body.options);
  const f = await inst.api('POST', '/api/v1/auth/assert/finish', { token, body: { flow: s.body.flow, credential } });
  expect(f.status, f.text).toBe(200);
  return f.body;
}
