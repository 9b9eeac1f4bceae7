import { describe, expect, it } from 'vitest';
import { WriterLock } from '../../src/vault/lock.js';
import { appError } from './helpers.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('WriterLock', () => {
  it('lets one fn run at a time', async () => {
    const lock = new WriterLock();
    let active = 0;
    let maxActive = 0;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        lock.run(async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          await tick(i % 3);
          active--;
        }),
      ),
    );
    expect(maxActive).toBe(1);
    expect(lock.pending).toBe(0);
  });

  it('runs callers in call order (FIFO), even when earlier ones are slower', async () => {
    const lock = new WriterLock();
    const order: number[] = [];
    await Promise.all(
      [30, 1, 20, 0, 10].map((ms, i) =>
        lock.run(async () => {
          await tick(ms);
          order.push(i);
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('releases the lock when fn throws, and passes the error on', async () => {
    const lock = new WriterLock();
    await expect(lock.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      lock.run(async () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    await expect(lock.run(async () => 42)).resolves.toBe(42);
  });

  it('refuses re-entry on the same async chain instead of deadlocking', async () => {
    const lock = new WriterLock();
    const err = await appError(() => lock.run(async () => lock.run(async () => 1)));
    expect(err.details?.reason).toBe('lock_reentered');
    await expect(lock.run(async () => 'free again')).resolves.toBe('free again');
  });

  it('does not treat work scheduled inside fn, but run after it, as re-entry', async () => {
    const lock = new WriterLock();
    let later: Promise<number> | undefined;
    await lock.run(async () => {
      later = new Promise<number>((resolve, reject) => setTimeout(() => lock.run(async () => 7).then(resolve, reject), 5));
    });
    await expect(later).resolves.toBe(7);
  });

  it('different locks do not block each other; forRoot shares one per root', async () => {
    const a = WriterLock.forRoot('/tmp/quire-lock-a');
    expect(WriterLock.forRoot('/tmp/quire-lock-a/../quire-lock-a')).toBe(a);
    const b = WriterLock.forRoot('/tmp/quire-lock-b');
    expect(b).not.toBe(a);
    const seen: string[] = [];
    await a.run(async () => {
      await b.run(async () => {
        seen.push('b inside a');
      });
    });
    expect(seen).toEqual(['b inside a']);
  });
});
