/**
 * The longest event-loop stall while one heavy `notes_task_view_rows` request runs
 * (docs/bases.md "Responsiveness"): a Home of N small notes with tasks, a hand-written
 * `.base` with expensive formulas, a sort and summaries; the server runs in this process
 * so `monitorEventLoopDelay` sees its loop. Also the latency of `GET /api/v1/system/info`
 * sent meanwhile, and of a task list page over the same Home.
 * Usage: npm run build -- --bench && node dist-bench/bench/rows-stall.js [--notes 10000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../src/core/config.js';
import { openServices, startServer } from '../src/server.js';
import { addUser } from '../src/surfaces/cli/admin.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('--notes', '10000'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-rows-'));
const services = await openServices(loadConfig({ dataDir }));
const { token } = await addUser(services, { username: 'bench', role: 'owner' });
const home = path.join(dataDir, 'homes', 'bench');
for (let i = 0; i < N; i++) {
  const dir = path.join(home, `F${i % 50}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, `Note ${i}.md`),
    `---\nrating: ${i % 7}\nstatus: ${i % 3 ? 'open' : 'done'}\ntags: [t${i % 11}]\n---\n# Note ${i}\n\nSee [[Note ${(i * 7) % N}]].\n\n- [ ] Task ${i} 📅 2026-11-${String((i % 28) + 1).padStart(2, '0')}\n- [x] Done ${i}\n`,
  );
}
fs.mkdirSync(path.join(home, 'Views'), { recursive: true });
fs.writeFileSync(
  path.join(home, 'Views', 'Heavy.base'),
  `filters: 'file.ext == "md"'
formulas:
  words: 'file.name.repeat(20).split("").map(value.upper()).filter(value != "E").join("")'
  score: 'formula.words.length + rating * 3 + file.links.length'
views:
  - type: table
    name: Heavy
    order: [file.name, formula.score, rating]
    sort:
      - property: formula.score
        direction: DESC
    summaries:
      rating: Average
`,
);
fs.writeFileSync(
  path.join(home, 'Views', 'Tasks.base'),
  `rows: tasks
filters: '!task.checked'
formulas:
  words: 'task.text.repeat(20).split("").map(value.upper()).filter(value != "T").join("")'
views:
  - type: table
    name: Open
    order: [task.text, task.due, formula.words]
    sort:
      - property: task.due
        direction: ASC
`,
);
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
const auth = { authorization: `Bearer ${token}` };
const get = async (route: string) => {
  const t0 = performance.now();
  const res = await fetch(server.url + route, { headers: auth });
  const body = (await res.json()) as any;
  return { status: res.status, body, ms: performance.now() - t0 };
};
const views = await get('/api/v1/notes/tasks/views');
const id = views.body.items.find((v: any) => v.path === 'Views/Heavy.base').id;
const taskView = views.body.items.find((v: any) => v.path === 'Views/Tasks.base').id;
for (;;) {
  const r = await get(`/api/v1/notes/tasks/views/${id}/rows?limit=10`);
  if (r.body.total === N) break;
  await new Promise((r) => setTimeout(r, 200));
}

async function measure(label: string, route: string) {
  await get(route); // warm
  let alone = Infinity;
  for (let i = 0; i < 3; i++) alone = Math.min(alone, (await get(route)).ms);
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let done = false;
  const infos: number[] = [];
  const heavy = get(route).then((r) => ((done = true), r));
  while (!done) {
    const t0 = performance.now();
    await fetch(server.url + '/api/v1/system/info').then((r) => r.text());
    infos.push(performance.now() - t0);
  }
  const r = await heavy;
  h.disable();
  console.log(
    `${label}: status ${r.status}, alone ${alone.toFixed(1)} ms, with system/info ${r.ms.toFixed(0)} ms; longest loop stall ${(h.max / 1e6).toFixed(1)} ms (p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms); ` +
      `system/info x${infos.length}, slowest ${Math.max(...infos).toFixed(0)} ms`,
  );
}

await measure(`file base rows (${N} notes)`, `/api/v1/notes/tasks/views/${id}/rows?limit=50`);
await measure(`task view rows (${2 * N} tasks)`, `/api/v1/notes/tasks/views/${taskView}/rows?limit=50`);
await measure(`tasks list page (${2 * N} tasks)`, `/api/v1/notes/tasks?cursor=${N}&limit=100`);
await measure(`tasks by day (${2 * N} tasks)`, `/api/v1/notes/tasks/day?from=2026-11-01&to=2026-11-30`);
await server.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
