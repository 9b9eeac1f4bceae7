/** The per-stream queue: a slow client never blocks a writer; overflow drops the queue and sends one `overflow` event. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { formatEvent, QueueSink } from '../../src/surfaces/http/sse.js';

class FakeSocket extends EventEmitter {
  written: string[] = [];
  congested = false;
  writableEnded = false;
  write(chunk: string): boolean {
    this.written.push(chunk);
    return !this.congested;
  }
  end(): void {
    this.writableEnded = true;
  }
}

describe('QueueSink', () => {
  it('formats events as SSE frames, one data line per line', () => {
    expect(formatEvent({ id: 'e.1', event: 'note', data: { a: 1 } })).toBe('id: e.1\nevent: note\ndata: {"a":1}\n\n');
    expect(formatEvent({ data: 'x\ny' })).toBe('data: x\ndata: y\n\n');
  });

  it('queues while the socket is congested and flushes in order on drain', () => {
    const sock = new FakeSocket();
    const sink = new QueueSink(sock, 10);
    sink.start();
    sock.congested = true;
    sink.send({ data: 1 }); // written, reports congestion
    sink.send({ data: 2 });
    sink.send({ data: 3 });
    expect(sock.written).toHaveLength(1);
    sock.congested = false;
    sock.emit('drain');
    expect(sock.written.map((f) => f.trim())).toEqual(['data: 1', 'data: 2', 'data: 3']);
  });

  it('on overflow drops the queue, keeps accepting writes at once, and sends one overflow event', () => {
    const sock = new FakeSocket();
    const sink = new QueueSink(sock, 5);
    sink.start();
    sock.congested = true;
    const started = Date.now();
    for (let i = 0; i < 10_000; i++) sink.send({ data: i });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sink.overflows).toBe(1);
    sock.congested = false;
    sock.emit('drain');
    const after = sock.written.slice(1).join('');
    expect(after.match(/event: overflow/g)).toHaveLength(1);
    expect(after).not.toContain('data: 9999');
    // Then the stream goes on.
    sink.send({ data: 'next' });
    expect(sock.written.at(-1)).toBe('data: next\n\n');
  });

  it('close runs cleanups once and ends the response', () => {
    const sock = new FakeSocket();
    const sink = new QueueSink(sock, 5);
    sink.start();
    let n = 0;
    sink.onClose(() => n++);
    sock.emit('close');
    sink.close();
    expect(n).toBe(1);
    expect(sock.writableEnded).toBe(true);
    sink.send({ data: 'late' });
    expect(sock.written.join('')).not.toContain('late');
  });
});
