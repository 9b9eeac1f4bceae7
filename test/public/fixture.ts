/** A Home with things to share, and things that must stay private, written before the server indexes it. */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { renderCanvasNote } from '../../src/canvas/excalidraw-file.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';

export const CANARY = 'PRIVATE-CANARY-7f3a';

export interface PublicRig {
  inst: TestInstance;
  token: string;
  home: string;
  /** Creates a link and returns its record (asserting 201). */
  link(body: Record<string, unknown>): Promise<any>;
}

export async function jpeg(width: number, height: number, seed = 0): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7 + seed * 13 + ((i / 3 / width) | 0)) & 0xff;
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
}

export async function writeHome(home: string): Promise<void> {
  const w = (rel: string, data: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    fs.writeFileSync(path.join(home, rel), data);
  };
  w('Notes/Shared.md', '---\nid: shared-1\ntitle: Shared note\n---\n# Shared\n\nSee [[Linked]] and [[Missing note|the secret]].\n\n<script>alert(1)</script>\n\n[click](javascript:alert(2))\n\n- [x] done\n');
  w('Notes/Linked.md', '---\nid: linked-1\n---\n# Linked\n\nLinked body, back to [[Shared]].\n');
  w('Notes/Private.md', `---\nid: private-1\n---\n${CANARY}\n`);
  w('Share/readme.md', `# Readme\n\nInner: [[inner]]. Private: [[Private]]. Photo: ![[photo.jpg]]\n\n<img src=x onerror=alert(1)>\n`);
  w('Share/photo.jpg', await jpeg(640, 480));
  w('Share/data.txt', 'line one\nline two\n');
  w('Share/page.html', '<script>alert(document.cookie)</script>');
  w('Share/blob.bin', Buffer.from([0, 1, 2, 3, 0, 255]));
  w('Share/sub/inner.md', '# Inner\n\ninside\n');
  w('Share/.hidden.txt', CANARY);
  w('Share/.obsidian/app.json', CANARY);
  w('Other/secret.txt', CANARY);
  fs.symlinkSync('../Other', path.join(home, 'Share/escape'));
  fs.symlinkSync('../Other/secret.txt', path.join(home, 'Share/link.txt'));
  fs.symlinkSync('/etc/passwd', path.join(home, 'Share/passwd'));
  w(
    'Notes/Drawing.excalidraw.md',
    renderCanvasNote({
      title: 'Drawing',
      id: 'canvas-1',
      scene: {
        type: 'excalidraw',
        version: 2,
        source: 'test',
        elements: [
          { id: 'a', version: 1, versionNonce: 1, type: 'rectangle', x: 0, y: 0, width: 10, height: 10, link: null },
          { id: 'b', version: 1, versionNonce: 1, type: 'rectangle', x: 20, y: 0, width: 10, height: 10, link: '[[Private]]' },
          { id: 'c', version: 1, versionNonce: 1, type: 'text', x: 0, y: 20, width: 10, height: 10, text: 'hi', link: 'https://example.org/' },
          { id: 'd', version: 1, versionNonce: 1, type: 'image', x: 40, y: 0, width: 10, height: 10, fileId: 'f-outside' },
          { id: 'e', version: 1, versionNonce: 1, type: 'image', x: 60, y: 0, width: 10, height: 10, fileId: 'f-inline' },
        ],
        appState: { viewBackgroundColor: '#fafafa' },
        files: { 'f-inline': { id: 'f-inline', mimeType: 'image/png', dataURL: 'data:image/png;base64,iVBORw0KGgo=' } },
      },
    }),
  );
  w('Notes/Plain.md', '---\nid: plain-1\n---\nplain\n');
}

export async function startPublicRig(): Promise<PublicRig> {
  const inst = await startInstance();
  const { token } = await inst.user('olive');
  const home = path.join(inst.dataDir, 'homes', 'olive');
  fs.mkdirSync(home, { recursive: true });
  await writeHome(home);
  return {
    inst,
    token,
    home,
    async link(body) {
      const r = await inst.api('POST', '/api/v1/links', { token, body });
      if (r.status !== 201) throw new Error(`link create ${r.status}: ${r.text}`);
      return r.body;
    },
  };
}

/** GET a public route without a bearer token; `password` goes in X-Public-Password. */
export async function visit(inst: TestInstance, route: string, opts: { password?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.password !== undefined) headers['x-public-password'] = opts.password;
  const res = await fetch(inst.url + route, { headers, redirect: 'manual' });
  const bytes = Buffer.from(await res.arrayBuffer());
  let body: any;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8'), body };
}
