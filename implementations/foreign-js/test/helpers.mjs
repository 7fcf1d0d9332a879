// A minimal SWP test client: connects to a started endpoint, sends E1 frames, reads them back.

import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { FrameReader, decodeEnvelope, encodeFrame } from '../src/e1.mjs';
import { listen } from '../src/server.mjs';
import { PROFILES, decodePayload, encodePayload } from '../src/schemas.mjs';

export async function startServer(opts = {}) {
  const server = await listen({ port: 0, ...opts });
  return { server, port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

export class Client {
  static async connect(port) {
    const c = new Client();
    await new Promise((resolve, reject) => {
      c.sock = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, resolve);
      c.sock.once('error', reject);
    });
    c.reader = new FrameReader({ MAX_FRAME_BYTES: 1 << 24, MIN_MSG_ID_BYTES: 0, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 1 << 20, MAX_PAYLOAD_BYTES: 1 << 24 });
    c.frames = [];
    c.waiters = [];
    c.ended = false;
    c.sock.on('data', (d) => {
      for (const ev of c.reader.push(d)) if (ev.body) c.frames.push(decodeEnvelope(ev.body, c.reader.limits));
      c.wake();
    });
    c.sock.on('end', () => {
      c.ended = true;
      c.wake();
    });
    c.sock.on('close', () => {
      c.ended = true;
      c.wake();
    });
    return c;
  }

  wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  raw(buf) {
    this.sock.write(buf);
  }

  send(profileId, msgType, payload, extra = {}) {
    const msg_id = extra.msg_id ?? randomBytes(16);
    this.sock.write(encodeFrame({ profile_id: profileId, msg_type: msgType, msg_id, payload, ...extra }));
    return msg_id;
  }

  /** Sends a P1 message (wrapper form) of a profile. */
  sendP1(profileId, msgType, obj, extra = {}) {
    return this.send(profileId, msgType, encodePayload(PROFILES[profileId], msgType, obj), extra);
  }

  /** Waits for the next frame (or null at close / after `ms`). */
  async next(ms = 2000) {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.frames.length) return this.frames.shift();
      if (this.ended) return null;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** The next frame decoded as its profile's P1 message: {env, msg}. */
  async nextP1(ms) {
    const env = await this.next(ms);
    if (!env) return null;
    if (env.profile_id === 4096) return { env, core: JSON.parse(env.payload.toString()) };
    return { env, msg: decodePayload(PROFILES[env.profile_id], env.msg_type, env.payload) };
  }

  end() {
    this.sock.end();
  }

  destroy() {
    this.sock.destroy();
  }
}
