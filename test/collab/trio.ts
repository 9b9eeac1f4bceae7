/** The collaboration tests' cast: a real server with three members, ann, bob and cat; ann owns the notes. */
import path from 'node:path';
import { startInstance, type TestInstance } from '../helpers/instance.js';

export type Member = { id: string; token: string };

export async function startTrio(): Promise<{ inst: TestInstance; ann: Member; bob: Member; cat: Member; home: string }> {
  const inst = await startInstance();
  const [ann, bob, cat] = [await inst.user('ann'), await inst.user('bob'), await inst.user('cat')];
  return { inst, ann, bob, cat, home: path.join(inst.dataDir, 'homes', 'ann') };
}
