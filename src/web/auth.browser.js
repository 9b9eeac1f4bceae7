// The script of Quire's sign-in pages (served as /assets/auth.js). Plain browser JavaScript,
// no build step. Each page names itself in <body data-page="...">.
'use strict';
(function () {
  const TOKEN_KEY = 'quire.session';
  const NEXT_KEY = 'quire.next';
  const $ = (id) => document.getElementById(id);
  const say = (text) => { $('status').textContent = text; $('error').textContent = ''; };
  const fail = (text) => { $('error').textContent = text; $('status').textContent = ''; };
  const token = () => localStorage.getItem(TOKEN_KEY);
  const hashParams = () => new URLSearchParams(location.hash.slice(1));
  const query = () => new URLSearchParams(location.search);

  async function api(method, route, body, opts) {
    const headers = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token() && !(opts && opts.anonymous)) headers.authorization = 'Bearer ' + token();
    const res = await fetch(route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const type = res.headers.get('content-type') || '';
    const data = type.includes('json') ? await res.json() : await res.text();
    if (!res.ok) {
      const err = new Error((data && data.error && data.error.message) || 'HTTP ' + res.status);
      err.status = res.status;
      err.code = data && data.error && data.error.code;
      throw err;
    }
    return data;
  }

  // base64url <-> ArrayBuffer, and the WebAuthn JSON forms (as in the WebAuthn Level 3 toJSON()).
  const toBuf = (s) => {
    const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
  };
  const toB64u = (buf) => {
    let s = '';
    for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };

  async function createPasskey(o) {
    const publicKey = Object.assign({}, o, {
      challenge: toBuf(o.challenge),
      user: Object.assign({}, o.user, { id: toBuf(o.user.id) }),
      excludeCredentials: (o.excludeCredentials || []).map((c) => Object.assign({}, c, { id: toBuf(c.id) })),
    });
    const cred = await navigator.credentials.create({ publicKey });
    const r = cred.response;
    return {
      id: cred.id,
      rawId: toB64u(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults(),
      response: {
        clientDataJSON: toB64u(r.clientDataJSON),
        attestationObject: toB64u(r.attestationObject),
        transports: r.getTransports ? r.getTransports() : [],
      },
    };
  }

  async function getPasskey(o) {
    const publicKey = Object.assign({}, o, {
      challenge: toBuf(o.challenge),
      allowCredentials: (o.allowCredentials || []).map((c) => Object.assign({}, c, { id: toBuf(c.id) })),
    });
    const cred = await navigator.credentials.get({ publicKey });
    const r = cred.response;
    return {
      id: cred.id,
      rawId: toB64u(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults(),
      response: {
        clientDataJSON: toB64u(r.clientDataJSON),
        authenticatorData: toB64u(r.authenticatorData),
        signature: toB64u(r.signature),
        userHandle: r.userHandle ? toB64u(r.userHandle) : undefined,
      },
    };
  }

  function signedIn(result) {
    localStorage.setItem(TOKEN_KEY, result.token);
    const next = sessionStorage.getItem(NEXT_KEY) || query().get('next');
    sessionStorage.removeItem(NEXT_KEY);
    location.assign(next && next.startsWith('/') && !next.startsWith('//') ? next : '/account');
  }

  const field = (id) => ($(id) ? $(id).value.trim() : '');

  async function register(page) {
    const starts = {
      setup: () => api('POST', '/api/v1/auth/setup/start', { token: field('token'), username: field('username'), display_name: field('display_name') }),
      invite: () => api('POST', '/api/v1/auth/invites/start', { token: field('token') || null, username: field('username'), display_name: field('display_name') }),
      reenrol: () => api('POST', '/api/v1/auth/passkeys/reenrol/start', { token: field('token') }),
      recover: () => api('POST', '/api/v1/auth/passkeys/recovery/start', { username: field('username'), key: field('key') }),
    };
    say('Waiting for your passkey…');
    const started = await starts[page]();
    const credential = await createPasskey(started.options);
    const done = await api('POST', '/api/v1/auth/passkeys/registration/finish', { flow: started.flow, credential, name: field('passkey_name') });
    say('Passkey registered.');
    signedIn(done);
  }

  async function passkeyLogin() {
    say('Waiting for your passkey…');
    const started = await api('POST', '/api/v1/auth/passkeys/login/start', undefined, { anonymous: true });
    const credential = await getPasskey(started.options);
    const done = await api('POST', '/api/v1/auth/passkeys/login/finish', { flow: started.flow, credential, kind: 'web' }, { anonymous: true });
    say('Signed in as ' + done.user.username + '.');
    signedIn(done);
  }

  async function loginPage() {
    if (query().get('next')) sessionStorage.setItem(NEXT_KEY, query().get('next'));
    $('passkey-login').addEventListener('click', () => passkeyLogin().catch((e) => fail(e.message)));
    const opts = await api('GET', '/api/v1/auth/options', undefined, { anonymous: true });
    for (const p of opts.oidc_providers) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = 'Sign in with ' + p.name;
      b.addEventListener('click', async () => {
        try {
          const started = await api('POST', '/api/v1/auth/oidc/' + encodeURIComponent(p.key) + '/start', undefined, { anonymous: true });
          location.assign(started.authorization_url);
        } catch (e) { fail(e.message); }
      });
      $('oidc-providers').appendChild(b);
    }
  }

  async function approvePage() {
    const code = query().get('user_code');
    if (!code) { $('code-form').hidden = false; return; }
    if (!token()) { location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search)); return; }
    let html;
    try {
      html = await api('GET', '/api/v1/auth/cli/approve?user_code=' + encodeURIComponent(code));
    } catch (e) {
      if (e.status === 401) {
        localStorage.removeItem(TOKEN_KEY);
        location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search));
        return;
      }
      fail(e.message);
      return;
    }
    $('approval').innerHTML = html; // escaped by the server
    const section = $('approval').querySelector('section');
    if (section && section.dataset.state === 'pending') $('approval-actions').hidden = false;
    const answer = async (decision) => {
      $('approval-actions').hidden = true;
      try {
        const text = await api('POST', '/api/v1/auth/cli/approve?user_code=' + encodeURIComponent(code) + (decision === 'deny' ? '&decision=deny' : ''));
        say(text.trim());
        const redirect = section && section.dataset.redirectUri;
        if (redirect && decision !== 'deny') location.assign(redirect);
      } catch (e) { fail(e.message); }
    };
    $('approve').addEventListener('click', () => answer('approve'));
    $('deny').addEventListener('click', () => answer('deny'));
  }

  async function accountPage() {
    if (!token()) { location.assign('/login?next=/account'); return; }
    try {
      const me = await api('GET', '/api/v1/auth/me');
      $('who').textContent = 'Signed in as ' + me.display_name + ' (' + me.username + ', ' + me.role + ').';
      const keys = await api('GET', '/api/v1/auth/passkeys');
      for (const k of keys.items) {
        const li = document.createElement('li');
        li.textContent = k.name;
        $('passkeys').appendChild(li);
      }
    } catch (e) {
      if (e.status === 401) { localStorage.removeItem(TOKEN_KEY); location.assign('/login?next=/account'); return; }
      fail(e.message);
    }
    $('sign-out').addEventListener('click', async () => {
      try { await api('DELETE', '/api/v1/auth/session'); } catch (e) { /* already ended */ }
      localStorage.removeItem(TOKEN_KEY);
      location.assign('/login');
    });
  }

  function start() {
    const page = document.body.dataset.page;
    const fromHash = hashParams().get('token');
    if (fromHash && $('token')) {
      $('token').value = fromHash;
      history.replaceState(null, '', location.pathname + location.search);
    } else if (query().get('token') && $('token')) {
      $('token').value = query().get('token');
    }
    const form = $('register-form');
    if (form) {
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        register(page === 'setup' || page === 'invite' || page === 'reenrol' ? page : 'recover').catch((e) => fail(e.message));
      });
    }
    if (page === 'login') loginPage().catch((e) => fail(e.message));
    if (page === 'cli-approve') approvePage().catch((e) => fail(e.message));
    if (page === 'account') accountPage().catch((e) => fail(e.message));
    if (page === 'signed-in') {
      const t = hashParams().get('token');
      history.replaceState(null, '', location.pathname);
      if (t) signedIn({ token: t });
      else fail(hashParams().get('error') || 'Sign-in did not finish.');
    }
  }
  start();
})();
