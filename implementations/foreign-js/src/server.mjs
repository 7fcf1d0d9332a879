// The endpoint: a TCP listener, one Connection per socket, core validation (core-spec §3-§6)
// and dispatch by profile_id to the profile modules. Core rejects are answered with this
// endpoint's core error frame (private-use profile 4096, JSON payload); profile rejects with the
// profile's own *_ERR message (README "How rejects are signalled").

import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { DEFAULT_LIMITS, FrameReader, decodeEnvelope, encodeFrame } from './e1.mjs';
import { ERR, ProfileReject, SwpError } from './errors.mjs';
import { PbError } from './pb.mjs';
import { PROFILES, decodePayload, encodePayload } from './schemas.mjs';
import * as agdisc from './profiles/agdisc.mjs';
import * as tooldisc from './profiles/tooldisc.mjs';
import * as cred from './profiles/cred.mjs';
import * as policyhint from './profiles/policyhint.mjs';
import * as relay from './profiles/relay.mjs';
import * as obs from './profiles/obs.mjs';
import * as state from './profiles/state.mjs';
import * as events from './profiles/events.mjs';
import * as rpc from './profiles/rpc.mjs';

/** Private-use profile (profile-registry §2: 4096 and above) carrying core error reports. */
export const CORE_ERROR_PROFILE = 4096;
export const CORE_ERROR_MSG_TYPE = 1;
/** Private-use diagnostics profile: JSON requests (msg_type 1) and answers (msg_type 2). */
export const DIAG_PROFILE = 4097;

const HANDLERS = { 10: agdisc, 11: tooldisc, 12: rpc, 13: events, 15: cred, 16: policyhint, 17: state, 18: obs, 19: relay };

export const DEFAULT_OPTIONS = Object.freeze({
  limits: DEFAULT_LIMITS,
  p1Form: 'wrapper',
  freshness: true,
  maxClockSkewMs: 300_000,
  rateLimit: { frames: 200, windowMs: 1000 },
  rpcOwner: null,
  log: () => {},
});

/** State shared by every connection of one process (credential chains, relay dedupe). */
export function createShared() {
  return { cred: cred.createShared(), relay: relay.createShared(), state: state.createShared(), rpc: rpc.createShared() };
}

class Connection {
  constructor(socket, opts, shared, identity = null) {
    this.socket = socket;
    this.identity = identity;
    this.opts = opts;
    this.shared = shared;
    this.reader = new FrameReader(opts.limits);
    this.closed = false;
    this.window = [];
    this.state = { policyhint: policyhint.createConnState(), relay: relay.createConnState(), obs: obs.createConnState(), events: events.createConnState(), rpc: rpc.createConnState() };
    socket.on('data', (chunk) => this.onEvents(this.reader.push(chunk)));
    socket.on('end', () => {
      this.onEvents(this.reader.end());
      this.close();
    });
    socket.on('error', () => this.teardown());
    socket.on('close', () => this.teardown());
  }

  teardown() {
    if (this.closed) return;
    this.closed = true;
    relay.dropConnection(this.state.relay);
    rpc.dropConnection(this.state.rpc);
  }

  close() {
    if (!this.socket.destroyed) this.socket.end();
    this.teardown();
  }

  write(env) {
    if (this.closed || this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(encodeFrame({ ts_unix_ms: Date.now(), flags: 0, extensions: [], ...env }));
  }

  coreError(err, msgId) {
    const id = msgId && msgId.length ? msgId : randomBytes(16);
    const body = { code: err.code, message: err.message, refused_msg_id: msgId ? msgId.toString('hex') : null };
    this.opts.log(`core reject ${err.code}: ${err.message}`);
    this.write({ profile_id: CORE_ERROR_PROFILE, msg_type: CORE_ERROR_MSG_TYPE, msg_id: id, payload: Buffer.from(JSON.stringify(body)) });
  }

  onEvents(events) {
    for (const ev of events) {
      if (this.closed) return;
      if (ev.error) {
        this.coreError(ev.error);
        if (ev.fatal) {
          // The boundary is lost (oversized prefix, truncation): core §3.1 SHOULD terminate.
          this.close();
          return;
        }
        continue;
      }
      this.onBody(ev.body);
    }
  }

  rateLimited() {
    const { frames, windowMs } = this.opts.rateLimit || {};
    if (!frames) return false;
    const now = Date.now();
    while (this.window.length && now - this.window[0] >= windowMs) this.window.shift();
    if (this.window.length >= frames) return true;
    this.window.push(now);
    return false;
  }

  onBody(body) {
    let env;
    try {
      env = decodeEnvelope(body, this.opts.limits);
    } catch (e) {
      if (e instanceof SwpError) return this.coreError(e, e.msgId);
      throw e;
    }
    if (this.rateLimited()) {
      return this.coreError(new SwpError(ERR.RATE_LIMIT_EXCEEDED, 'frame rate limit exceeded'), env.msg_id);
    }
    if (this.opts.freshness) {
      const skew = Math.abs(Date.now() - Number(env.ts_unix_ms));
      if (env.ts_unix_ms === 0 || typeof env.ts_unix_ms !== 'number' || skew > this.opts.maxClockSkewMs) {
        return this.coreError(new SwpError(ERR.INVALID_ENVELOPE, `ts_unix_ms outside the ${this.opts.maxClockSkewMs} ms freshness window`), env.msg_id);
      }
    }
    if (env.profile_id === DIAG_PROFILE) return this.diag(env);
    const profile = PROFILES[env.profile_id];
    if (!profile) {
      return this.coreError(new SwpError(ERR.UNKNOWN_PROFILE, `profile ${env.profile_id} is not served here`), env.msg_id);
    }
    this.dispatch(profile, env);
  }

  /** The diagnostics profile: `{"op":"whoami"}` names the peer identity the channel surfaced. */
  diag(env) {
    if (env.msg_type !== 1) return this.coreError(new SwpError(ERR.UNSUPPORTED_MSG_TYPE, `diagnostics has no msg_type ${env.msg_type}`), env.msg_id);
    let req;
    try {
      req = JSON.parse(env.payload.toString('utf8'));
    } catch {
      return this.coreError(new SwpError(ERR.INVALID_PROFILE_PAYLOAD, 'diagnostics requests are JSON'), env.msg_id);
    }
    const answer = req && req.op === 'whoami' ? { result: { identity: this.identity } } : { error: { code: 'unknown-op', message: 'ops: whoami' } };
    this.write({ profile_id: DIAG_PROFILE, msg_type: 2, msg_id: env.msg_id, payload: Buffer.from(JSON.stringify(answer)) });
  }

  dispatch(profile, env) {
    const ctx = this.context(profile, env);
    try {
      if (!profile.messages[env.msg_type]) {
        throw new ProfileReject(ERR.UNSUPPORTED_MSG_TYPE, `${profile.name} has no msg_type ${env.msg_type}`);
      }
      let message;
      try {
        message = decodePayload(profile, env.msg_type, env.payload, this.opts.p1Form);
      } catch (e) {
        if (e instanceof PbError) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, e.message);
        throw e;
      }
      HANDLERS[profile.id].handle(ctx, env.msg_type, message);
    } catch (e) {
      if (!(e instanceof ProfileReject)) {
        this.opts.log(`internal error in ${profile.name}: ${e.stack}`);
        e = new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, 'internal error while handling the payload');
      }
      this.opts.log(`${profile.name} reject ${e.code}: ${e.message}`);
      if (profile.rejectsAsCoreErrors) this.coreError(new SwpError(e.code, e.message), env.msg_id);
      else ctx.reply(profile.errType, { code: e.code, message: e.message });
    }
  }

  context(profile, env) {
    const conn = this;
    return {
      env,
      identity: this.identity,
      shared: this.shared,
      conn: this.state,
      opts: this.opts,
      now: () => Date.now(),
      /** An answer: reuses the request's msg_id. */
      reply(msgType, obj) {
        conn.write({ profile_id: profile.id, msg_type: msgType, msg_id: env.msg_id, payload: encodePayload(profile, msgType, obj, conn.opts.p1Form) });
      },
      /** A frame this endpoint originates: a fresh msg_id (core §4.4 uniqueness). */
      originate(msgType, obj) {
        conn.write({ profile_id: profile.id, msg_type: msgType, msg_id: randomBytes(16), payload: encodePayload(profile, msgType, obj, conn.opts.p1Form) });
      },
      get alive() {
        return !conn.closed;
      },
    };
  }
}

/**
 * The identity a client certificate names, in this endpoint's form: its subject DN written as
 * `K=V` pairs joined by `,` (README "S1"). null when the certificate has no subject.
 */
export function certIdentity(cert) {
  const subj = cert && cert.subject;
  if (!subj || Object.keys(subj).length === 0) return null;
  return Object.entries(subj)
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => `${k}=${one}`))
    .join(',');
}

/**
 * Starts listening; resolves to the server once bound. With `tls: {cert, key, clientCa}` (file
 * paths) it speaks S1: TLS 1.3 only, a client certificate from that CA required.
 */
export function listen({ host = '127.0.0.1', port = 0, tls: tlsFiles, ...rest } = {}) {
  const opts = { ...DEFAULT_OPTIONS, ...rest };
  const shared = createShared();
  let server;
  if (tlsFiles) {
    server = tls.createServer(
      {
        cert: readFileSync(tlsFiles.cert),
        key: readFileSync(tlsFiles.key),
        ca: readFileSync(tlsFiles.clientCa),
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.3',
        allowHalfOpen: true,
      },
      (socket) => {
        const identity = certIdentity(socket.getPeerCertificate());
        if (!socket.authorized || !identity) {
          socket.destroy();
          return;
        }
        socket.setNoDelay(true);
        new Connection(socket, opts, shared, identity);
      },
    );
    server.on('tlsClientError', (e) => opts.log(`TLS handshake refused: ${e.message}`));
  } else {
    server = net.createServer({ allowHalfOpen: true }, (socket) => {
      socket.setNoDelay(true);
      new Connection(socket, opts, shared);
    });
  }
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
