/**
 * Block ids (`^id`) across a Home: which notes define a block anchor, and
 * which carry a task with that id. Block ids are unique per note, not per
 * Home, so each id maps to paths in path order.
 */
import type { BlockAnchor } from '../markdown/facts.js';
import { addToSortedMap, allOf, byPath, firstOf, removeFromSortedMap, type PathSet } from './links.js';
import { taskEntry, type NoteRec } from './records.js';
import type { TaskEntry } from './types.js';

export class AnchorIndex {
  /** Block id → paths of notes with that anchor, in path order. */
  private readonly blockIdx = new Map<string, PathSet>();
  /** Block id → paths of notes with a task carrying that id, in path order. */
  private readonly taskBlockIdx = new Map<string, PathSet>();

  /**
   * Notes added but not yet in the maps, applied before anything reads or
   * removes: a warm start adds 10k notes at once and no query may come for
   * a while (on the 10k bench vault the maps took 15-30 ms of its start).
   */
  private queued: Array<[string, readonly string[], readonly string[]]> = [];

  constructor(private readonly notesByPath: ReadonlyMap<string, NoteRec>) {}

  /** A note's block anchors' ids and its tasks' block ids (NoteRec's `blockIds`, `taskBlockIds`). */
  add(path: string, blockIds: readonly string[], taskBlockIds: readonly string[]): void {
    if (blockIds.length > 0 || taskBlockIds.length > 0) this.queued.push([path, blockIds, taskBlockIds]);
  }

  /** Undo `add` with the same ids. */
  remove(path: string, blockIds: readonly string[], taskBlockIds: readonly string[]): void {
    this.settle();
    for (const id of blockIds) removeFromSortedMap(this.blockIdx, id, path, byPath);
    for (const id of taskBlockIds) removeFromSortedMap(this.taskBlockIdx, id, path, byPath);
  }

  private settle(): void {
    if (this.queued.length === 0) return;
    for (const [path, blockIds, taskBlockIds] of this.queued) {
      for (const id of blockIds) addToSortedMap(this.blockIdx, id, path, byPath);
      for (const id of taskBlockIds) addToSortedMap(this.taskBlockIdx, id, path, byPath);
    }
    this.queued = [];
  }

  /** Tasks with this block id, by path then line. */
  tasksByBlockId(blockId: string): TaskEntry[] {
    this.settle();
    const out: TaskEntry[] = [];
    for (const p of allOf(this.taskBlockIdx.get(blockId))) {
      const rec = this.notesByPath.get(p)!;
      const tasks = rec.entry.facts.tasks;
      for (let i = 0; i < tasks.length; i++) if (tasks[i]!.blockId === blockId) out.push(taskEntry(rec, i));
    }
    return out;
  }

  /** The first task with this block id by path order (then line). */
  taskByBlockId(blockId: string): TaskEntry | undefined {
    this.settle();
    const p = firstOf(this.taskBlockIdx.get(blockId));
    if (p === undefined) return undefined;
    const rec = this.notesByPath.get(p)!;
    const i = rec.entry.facts.tasks.findIndex((t) => t.blockId === blockId);
    return i < 0 ? undefined : taskEntry(rec, i);
  }

  /** Where a block id is defined, by path then line. */
  blockOwner(blockId: string): Array<{ path: string; line: number }> {
    this.settle();
    const out: Array<{ path: string; line: number }> = [];
    for (const p of allOf(this.blockIdx.get(blockId))) {
      for (const b of this.notesByPath.get(p)!.entry.facts.blocks) if (b.id === blockId) out.push({ path: p, line: b.line });
    }
    return out;
  }

  /** Block anchors of a note in document order (a copy). */
  blocks(path: string): BlockAnchor[] {
    return this.notesByPath.get(path)?.entry.facts.blocks.slice() ?? [];
  }
}
