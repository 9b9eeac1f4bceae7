// The drop zone of a public link page (served as /assets/public-drop.js, loaded only when the
// link allows uploads). The page gives it a container:
//   <section id="drop-zone" data-endpoint="/api/v1/public/<slug>/uploads" data-slug="<slug>">
// Files dropped on it or chosen with its button go up with tus-js-client (/assets/tus.min.js,
// loaded from here so the page's CSP, script-src 'self', allows it): in chunks, resumable (the
// client remembers unfinished uploads in localStorage and continues them when the same file is
// sent again), with a progress bar per file. The password, if any, travels in the HttpOnly
// cookie the page set for /api/v1/public/<slug>. When the last upload running has ended, the
// page's folder list (#entries) is fetched again and swapped in place, so the files just sent show
// without a reload and without losing the progress list. docs/public-links.md, "Uploads".
'use strict';
(function () {
  const CHUNK = 8 * 1024 * 1024;
  let running = 0;

  // The same page, fetched again (same origin, so the cookie goes along; connect-src 'self'
  // allows it), parsed without running anything in it, and its list put in place of ours.
  function refreshList() {
    const current = document.getElementById('entries');
    if (!current) return;
    fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) {
        return res.ok ? res.text() : null;
      })
      .then(function (html) {
        if (html === null || running > 0) return;
        const fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('entries');
        if (fresh) current.replaceWith(document.importNode(fresh, true));
      })
      .catch(function () {
        /* the list stays as it was; a reload shows the files */
      });
  }

  function ended() {
    running--;
    if (running === 0) refreshList();
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k of Object.keys(attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function errorText(err) {
    const res = err && err.originalResponse;
    if (res) {
      try {
        const env = JSON.parse(res.getBody());
        if (env && env.error && env.error.message) return env.error.message;
      } catch (_) {
        /* not the envelope */
      }
      return 'the server answered ' + res.getStatus();
    }
    return (err && err.message) || 'the connection failed';
  }

  function send(file, endpoint, list) {
    const item = el('li', { class: 'upload' });
    const bar = el('progress', { max: '100', value: '0', 'aria-label': 'Progress of ' + file.name });
    const status = el('span', { class: 'status', role: 'status' }, 'Waiting…');
    item.append(el('span', { class: 'name' }, file.name + ' '), bar, ' ', status);
    list.append(item);
    running++;
    const upload = new window.tus.Upload(file, {
      endpoint: endpoint,
      chunkSize: CHUNK,
      retryDelays: [0, 1000, 3000, 5000, 10000, 20000],
      metadata: { filename: file.name, filetype: file.type || 'application/octet-stream' },
      removeFingerprintOnSuccess: true,
      onProgress: function (sent, total) {
        const pct = total > 0 ? Math.floor((sent / total) * 100) : 100;
        bar.value = pct;
        status.textContent = pct + ' %';
      },
      onSuccess: function (payload) {
        bar.value = 100;
        const res = payload && payload.lastResponse;
        const placed = res && res.getHeader('Quire-Upload-Path');
        status.textContent = placed ? 'Uploaded as ' + placed.slice(placed.lastIndexOf('/') + 1) : 'Uploaded';
        item.classList.add('done');
        ended();
      },
      onError: function (err) {
        status.textContent = 'Failed: ' + errorText(err);
        item.classList.add('failed');
        ended();
      },
    });
    upload
      .findPreviousUploads()
      .then(function (previous) {
        if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
      })
      // No remembered uploads to read (storage refused): send from the start.
      .catch(function () {})
      .then(function () {
        upload.start();
      });
  }

  function mount(zone) {
    const endpoint = zone.getAttribute('data-endpoint');
    const input = el('input', { type: 'file', id: 'drop-input', multiple: '' });
    const label = el('label', { for: 'drop-input', class: 'button' }, 'Choose files');
    const list = el('ul', { id: 'drop-list' });
    zone.replaceChildren(el('h2', {}, 'Send files'), el('p', {}, 'Drop files here, or '), label, input, list);
    const sendAll = function (files) {
      for (let i = 0; i < files.length; i++) send(files[i], endpoint, list);
    };
    input.addEventListener('change', function () {
      sendAll(input.files);
      input.value = '';
    });
    zone.addEventListener('dragover', function (e) {
      e.preventDefault();
      zone.classList.add('over');
    });
    zone.addEventListener('dragleave', function () {
      zone.classList.remove('over');
    });
    zone.addEventListener('drop', function (e) {
      e.preventDefault();
      zone.classList.remove('over');
      if (e.dataTransfer) sendAll(e.dataTransfer.files);
    });
    zone.setAttribute('data-ready', 'true');
  }

  document.addEventListener('DOMContentLoaded', function () {
    const zone = document.getElementById('drop-zone');
    if (!zone) return;
    const script = el('script', { src: '/assets/tus.min.js' });
    script.addEventListener('load', function () {
      mount(zone);
    });
    script.addEventListener('error', function () {
      zone.replaceChildren(el('p', {}, 'The uploader could not be loaded; reload the page to try again.'));
    });
    document.head.append(script);
  });
})();
