// The drop zone of a public link page (served as /assets/public-drop.js, loaded only when the
// link allows uploads). The page gives it a container:
//   <section id="drop-zone" data-endpoint="/api/v1/public/<slug>/uploads" data-slug="<slug>">
// The tus uploader (issue 23, file drop) replaces this file; the password, if any, travels in the
// HttpOnly cookie the page set for /api/v1/public/<slug>, so the uploader needs no header for it.
// Until then the container says that uploads are not open yet.
'use strict';
document.addEventListener('DOMContentLoaded', () => {
  const zone = document.getElementById('drop-zone');
  if (!zone) return;
  const p = document.createElement('p');
  p.textContent = 'Uploads to this folder are not open yet.';
  zone.replaceChildren(p);
});
