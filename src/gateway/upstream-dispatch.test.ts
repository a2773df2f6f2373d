import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type BodySink,
  EARLY_BODY_LIMIT_BYTES,
  type OpenedReply,
  streamedHandler,
} from './upstream-dispatch.js';

/**
 * The streamed handler driven the way undici's dispatcher drives it (request start, head, body
 * chunks, end), with the controller recording pause/resume: what arrives before the door relays
 * the body is kept (up to a bound, then the upstream is paused), and relayed in order.
 */

interface RecordingController {
  paused: boolean;
  pauses: number;
  resumes: number;
}

function drive() {
  const state: RecordingController = { paused: false, pauses: 0, resumes: 0 };
  const controller = {
    pause() {
      state.paused = true;
      state.pauses += 1;
    },
    resume() {
      if (state.paused) state.resumes += 1;
      state.paused = false;
    },
    abort() {},
  } as unknown as Dispatcher.DispatchController;
  let opened: OpenedReply | undefined;
  const handler = streamedHandler((reply) => {
    opened = reply;
  });
  handler.onRequestStart?.(controller, {});
  return { handler, controller, state, opened: () => opened };
}

function collectingSink() {
  const chunks: Buffer[] = [];
  let ended = false;
  const sink: BodySink = {
    data(chunk) {
      chunks.push(chunk);
      return true;
    },
    end() {
      ended = true;
    },
    error() {
      throw new Error('unexpected error');
    },
  };
  return { sink, chunks, ended: () => ended };
}

describe('streamedHandler', () => {
  it('keeps a small body that came with the head, without pausing, and relays it whole', () => {
    const { handler, controller, state, opened } = drive();
    handler.onResponseStart?.(controller, 200, { 'content-length': '5' }, 'OK');
    handler.onResponseData?.(controller, Buffer.from('hello'));
    handler.onResponseEnd?.(controller, {});
    expect(state.pauses).toBe(0);
    const reply = opened();
    if (reply?.kind !== 'streamed') throw new Error('no streamed reply');
    expect(reply.headers).toEqual([['content-length', '5']]);
    const { sink, chunks, ended } = collectingSink();
    reply.relay(sink);
    expect(Buffer.concat(chunks).toString()).toBe('hello');
    expect(ended()).toBe(true);
  });

  it('pauses the upstream at relay when the sink cannot take the early body yet', () => {
    const { handler, controller, state, opened } = drive();
    handler.onResponseStart?.(controller, 200, {}, 'OK');
    handler.onResponseData?.(controller, Buffer.from('first'));
    expect(state.paused).toBe(false);
    const reply = opened();
    if (reply?.kind !== 'streamed') throw new Error('no streamed reply');
    const chunks: Buffer[] = [];
    reply.relay({
      data(chunk) {
        chunks.push(chunk);
        return false;
      },
      end() {},
      error() {},
    });
    expect(state.paused).toBe(true);
    reply.resume();
    expect(state.paused).toBe(false);
    expect(Buffer.concat(chunks).toString()).toBe('first');
  });

  it('pauses the upstream once the unrelayed body reaches the bound, and resumes on relay', () => {
    const { handler, controller, state, opened } = drive();
    handler.onResponseStart?.(controller, 200, {}, 'OK');
    const chunk = Buffer.alloc(16 * 1024, 1);
    const sent: Buffer[] = [];
    while (!state.paused) {
      const next = Buffer.from(chunk);
      sent.push(next);
      handler.onResponseData?.(controller, next);
      if (sent.length > 100) break;
    }
    expect(state.pauses).toBe(1);
    expect(sent.length * chunk.byteLength).toBe(EARLY_BODY_LIMIT_BYTES);
    const reply = opened();
    if (reply?.kind !== 'streamed') throw new Error('no streamed reply');
    const { sink, chunks, ended } = collectingSink();
    reply.relay(sink);
    expect(state.resumes).toBe(1);
    const last = Buffer.from('tail');
    handler.onResponseData?.(controller, last);
    handler.onResponseEnd?.(controller, {});
    expect(Buffer.concat(chunks).equals(Buffer.concat([...sent, last]))).toBe(true);
    expect(ended()).toBe(true);
  });
});
