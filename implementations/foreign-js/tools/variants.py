#!/usr/bin/env python3
"""Broken variants of foreign-js, run against the harness (HARNESS-FINDINGS.md).

Each variant copies implementations/foreign-js and its manifest to a scratch directory,
replaces one line, and runs `swp-conform run` on the namespaces it concerns; it prints the
vectors that did not pass, or NOT CAUGHT. Usage:
  SWP_CONFORM=path/to/swp-conform python3 tools/variants.py [variant names...]
"""
import json, os, shutil, subprocess, sys, tempfile
SRC=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
BIN=os.environ.get('SWP_CONFORM', 'swp-conform')
SCRATCH=tempfile.mkdtemp(prefix='fj-variants-')
M=[
 ('tooldisc-ignores-page-size','src/profiles/tooldisc.mjs',"const size = Math.min(m.page_size || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);","const size = MAX_PAGE_SIZE;",'tooldisc'),
 ('tooldisc-no-schema-ref-check','src/profiles/tooldisc.mjs',"  if (!schemaRefValid(d.schema_ref)) {","  if (false) {",'tooldisc'),
 ('tooldisc-version-selector-ignored','src/profiles/tooldisc.mjs',"if (m.version && m.version !== tool.version)","if (false)",'tooldisc'),
 ('agdisc-not-modified-any-etag','src/profiles/agdisc.mjs',"if (m.if_none_match && m.if_none_match === card.etag)","if (m.if_none_match)",'agdisc'),
 ('agdisc-doc-no-revision-check',"src/profiles/agdisc.mjs","  if (!doc.schema_revision) throw","  if (false) throw",'agdisc'),
 ('agdisc-etag-changes','src/profiles/agdisc.mjs',"  return ctx.reply(DOC, card);","  return ctx.reply(DOC, { ...card, etag: '\"' + Date.now() + '\"' });",'agdisc'),
 ('agdisc-card-reencoded','src/profiles/agdisc.mjs',"  return ctx.reply(DOC, card);","  return ctx.reply(DOC, { ...card, card_payload: Buffer.from(JSON.stringify(JSON.parse(card.card_payload.toString()), null, 1)) });",'agdisc'),
 ('cred-no-expiry-check','src/profiles/cred.mjs',"if (exp <= BigInt(now)) throw","if (false) throw",'cred'),
 ('cred-no-length-bound','src/profiles/cred.mjs',"if (chain.entries.length >= CRED_POLICY.maxChainLength) throw","if (false) throw",'cred'),
 ('cred-length-off-by-one','src/profiles/cred.mjs',"if (chain.entries.length >= CRED_POLICY.maxChainLength) throw","if (chain.entries.length >= CRED_POLICY.maxChainLength - 1) throw",'cred'),
 ('cred-no-identity-binding','src/profiles/cred.mjs',"if (ctx.identity !== null && subject !== ctx.identity) throw","if (false) throw",'cred'),
 ('cred-revoke-ignored','src/profiles/cred.mjs',"      chain.revoked = true;","",'cred'),
 ('cred-no-owner-check','src/profiles/cred.mjs',"      if (chain.owner !== ctx.identity) throw policy('the chain belongs to another identity');\n      if (chain.revoked) throw policy('the chain was revoked');\n      const exp","      if (chain.revoked) throw policy('the chain was revoked');\n      const exp",'cred'),
 ('policy-ack-before-violations','src/profiles/policyhint.mjs',"  for (const v of violations) ctx.originate(VIOLATION, v);\n  state.acks += 1;\n  ctx.reply(HINT_ACK, { ack_id: `fj-ack-${state.acks}` });","  state.acks += 1;\n  ctx.reply(HINT_ACK, { ack_id: `fj-ack-${state.acks}` });\n  for (const v of violations) ctx.originate(VIOLATION, v);",'policyhint'),
 ('policy-last-wins','src/profiles/policyhint.mjs',"    if (decided.has(slot)) continue;","",'policyhint'),
 ('policy-should-reported','src/profiles/policyhint.mjs',"if (c.mode === 'MUST' && !satisfiable(c.value))","if (!satisfiable(c.value))",'policyhint'),
 ('policy-empty-reason','src/profiles/policyhint.mjs',"violations.push({ key: c.key, scope_ref: scope, reason_code: POLICY_CODES.unmet });","violations.push({ key: c.key, scope_ref: scope, reason_code: '' });",'policyhint'),
 ('policy-scope-dropped','src/profiles/policyhint.mjs',"violations.push({ key: c.key, scope_ref: scope, reason_code: POLICY_CODES.unmet });","violations.push({ key: c.key, scope_ref: DEFAULT_SCOPE, reason_code: POLICY_CODES.unmet });",'policyhint'),
 ('relay-fast-retry','src/catalog.mjs',"  backoffMs: 500,","  backoffMs: 200,",'relay'),
 ('relay-one-extra-attempt','src/catalog.mjs',"  maxAttempts: 3,","  maxAttempts: 4,",'relay'),
 ('relay-no-dedupe','src/profiles/relay.mjs',"if (first !== undefined && now - first < RELAY_POLICY.dedupeWindowMs) return;","",'relay'),
 ('relay-dead-letter-retryable','src/profiles/relay.mjs',"  if (ctx.alive) ctx.originate(NACK, { delivery_id: d.delivery_id, retryable: false, reason_code: reason });","  if (ctx.alive) ctx.originate(NACK, { delivery_id: d.delivery_id, retryable: true, reason_code: reason });",'relay'),
 ('relay-delivery-id-changed','src/profiles/relay.mjs',"  ctx.originate(PUBLISH, { delivery_id: d.delivery_id,","  ctx.originate(PUBLISH, { delivery_id: Buffer.concat([d.delivery_id, Buffer.from([d.attempts])]),",'relay'),
 ('relay-payload-changed','src/profiles/relay.mjs',"topic: d.topic, payload: d.payload, ttl_ms","topic: d.topic, payload: Buffer.concat([d.payload, Buffer.from('!')]), ttl_ms",'relay'),
 ('relay-nack-not-counted','src/profiles/relay.mjs',"      if (d.attempts >= RELAY_POLICY.maxAttempts) return deadLetter(ctx, d, RELAY_POLICY.reasons.exhausted);\n      d.timer","      d.attempts -= 1;\n      d.timer",'relay'),
 ('p1-unknown-fields-refused','src/pb.mjs',"    if (!f) {\n      pos = skip(buf, t.next, end, wt, fn, depth);\n      continue;\n    }","    if (!f) throw new PbError('unknown field');",'cred,agdisc,tooldisc,policyhint,relay'),
 ('p1-wrong-member-taken','src/schemas.mjs',"  if (present.length > 1 || present[0] !== entry[0]) {","  if (false) {",'cred,agdisc,tooldisc,policyhint,relay'),
 ('msgtype-unchecked-err','src/server.mjs',"        throw new ProfileReject(ERR.UNSUPPORTED_MSG_TYPE, `${profile.name} has no msg_type ${env.msg_type}`);","        throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD, `${profile.name} has no msg_type ${env.msg_type}`);",'cred,agdisc,tooldisc,policyhint,relay'),
 ('core-trailing-octets-taken','src/e1.mjs',"    if (pos !== end) throw new SwpError(ERR.INVALID_FRAME","    if (false) throw new SwpError(ERR.INVALID_FRAME",'core,e1'),
 ('core-uvarint-overflow-wrapped','src/e1.mjs',"      if (value > U64_MAX) throw new SwpError(ERR.INVALID_UVARINT, 'uvarint overflows 64 bits');","      value &= U64_MAX;",'core,e1'),
 ('core-ext-limit-off-by-one','src/e1.mjs',"    const ext = readBytes(body, pos, end, limits.MAX_EXT_BYTES,","    const ext = readBytes(body, pos, end, limits.MAX_EXT_BYTES - 1,",'core,e1'),
 ('core-freshness-off','src/server.mjs',"    if (this.opts.freshness) {","    if (false) {",'core,e1,s1'),
 ('core-no-close-on-oversize','src/server.mjs',"          this.close();\n          return;","          return;",'core,e1'),
 ('core-unknown-profile-silent','src/server.mjs',"      return this.coreError(new SwpError(ERR.UNKNOWN_PROFILE,","      return; (new SwpError(ERR.UNKNOWN_PROFILE,",'core,e1'),
 ('core-msgid-min-unchecked','src/e1.mjs',"    if (env.msg_id.length < limits.MIN_MSG_ID_BYTES) {","    if (env.msg_id.length < 1) {",'core,e1'),
 ('core-payload-limit-off','src/e1.mjs',"    const pl = readBytes(body, pos, end, limits.MAX_PAYLOAD_BYTES,","    const pl = readBytes(body, pos, end, limits.MAX_PAYLOAD_BYTES + 100,",'core,e1'),
]

M += [
 ('cred-unbounded-expiry-taken','src/profiles/cred.mjs',"if (m.expires_at_unix_ms === 0n) throw","if (false) throw",'cred'),
 ('cred-unknown-chain-taken','src/profiles/cred.mjs',"      if (!chain) throw new ProfileReject(ERR.NOT_FOUND, 'no chain was presented under this chain_id');\n      if (chain.owner !== ctx.identity) throw policy('the chain belongs to another identity');\n      if (chain.revoked)","      if (!chain) return;\n      if (chain.owner !== ctx.identity) throw policy('the chain belongs to another identity');\n      if (chain.revoked)",'cred'),
 ('agdisc-invalid-doc-wrong-code','src/profiles/agdisc.mjs',"  if (!doc.schema_revision) throw new ProfileReject(ERR.INVALID_PROFILE_PAYLOAD","  if (!doc.schema_revision) throw new ProfileReject(ERR.SECURITY_POLICY",'agdisc'),
 ('agdisc-not-modified-other-agent','src/profiles/agdisc.mjs',"return ctx.reply(NOT_MODIFIED, { agent_id: id, etag: card.etag });","return ctx.reply(NOT_MODIFIED, { agent_id: 'someone.else', etag: card.etag });",'agdisc'),
 ('core-close-after-reject','src/server.mjs',"      if (e instanceof SwpError) return this.coreError(e, e.msgId);","      if (e instanceof SwpError) { this.coreError(e, e.msgId); return this.close(); }",'core,e1'),
 ('core-err-fresh-msgid','src/server.mjs',"    const id = msgId && msgId.length ? msgId : randomBytes(16);","    const id = randomBytes(16);",'core,e1,cred,agdisc'),
 ('profile-err-fresh-msgid','src/server.mjs',"      ctx.reply(profile.errType, { code: e.code, message: e.message });","      ctx.originate(profile.errType, { code: e.code, message: e.message });",'cred,agdisc,tooldisc,policyhint,relay'),
 ('relay-ack-ignored','src/profiles/relay.mjs',"      settle(ctx, m.delivery_id);","",'relay'),
 ('tooldisc-page-token-unstable','src/catalog.mjs',"  return 'fjp.' + Buffer.from(JSON.stringify([offset, filter])).toString('base64url');","  return 'fjp.' + Buffer.from(JSON.stringify([offset, filter, Date.now()])).toString('base64url');",'tooldisc'),
 ('policy-violation-key-wrong','src/profiles/policyhint.mjs',"violations.push({ key: c.key, scope_ref: scope, reason_code: POLICY_CODES.unmet });","violations.push({ key: c.key + '.x', scope_ref: scope, reason_code: POLICY_CODES.unmet });",'policyhint'),
 ('policy-unknown-mode-taken','src/profiles/policyhint.mjs',"    if (!MODES.has(c.mode)) throw","    if (false) throw",'policyhint'),
]

M += [
 ('obs-tracestate-reordered','src/profiles/obs.mjs',"      ctx.conn.obs.current = context(m);","      ctx.conn.obs.current = { ...context(m), tracestate: m.tracestate.split(',').reverse().join(',') };",'obs'),
 ('obs-tracestate-dropped','src/profiles/obs.mjs',"      ctx.conn.obs.current = context(m);","      ctx.conn.obs.current = { ...context(m), tracestate: '' };",'obs'),
 ('obs-correlation-dropped','src/profiles/obs.mjs',"      ctx.conn.obs.current = context(m);","      ctx.conn.obs.current = { ...context(m), task_id: Buffer.alloc(0) };",'obs'),
 ('obs-upper-case-taken','src/profiles/obs.mjs',"const HEX32 = /^[0-9a-f]{32}$/;","const HEX32 = /^[0-9a-fA-F]{32}$/;",'obs'),
 ('obs-refused-set-overwrites','src/profiles/obs.mjs',"      if (!m.traceparent) throw","      ctx.conn.obs.current = context(m);\n      if (!m.traceparent) throw",'obs'),
 ('obs-later-version-suffix-any','src/profiles/obs.mjs',"  return tp.length === 55 || tp[55] === '-';","  return true;",'obs'),
]

M += [
 ('state-parents-unchecked','src/profiles/state.mjs',"    if (!store.has(k)) throw","    if (false) throw",'state'),
 ('state-id-unchecked','src/profiles/state.mjs',"      if (!want.equals(m.state_id)) throw invalid('state_id does not match the content (blob, parents and metadata)');","",'state'),
 ('state-metadata-dropped','src/profiles/state.mjs',"      return ctx.reply(PUT, { state_id: rec.state_id, blob: rec.blob, parent_ids: rec.parent_ids, metadata: rec.metadata });","      return ctx.reply(PUT, { state_id: rec.state_id, blob: rec.blob, parent_ids: rec.parent_ids });",'state'),
 ('state-parents-reordered','src/profiles/state.mjs',"blob: rec.blob, parent_ids: rec.parent_ids, metadata","blob: rec.blob, parent_ids: [...rec.parent_ids].reverse(), metadata",'state'),
 ('state-delta-as-put','src/profiles/state.mjs',"      if (rec.kind === 'delta') return ctx.reply(DELTA,","      if (rec.kind === 'delta') return ctx.reply(PUT,",'state'),
 ('state-missing-silent','src/profiles/state.mjs',"      if (!rec) return ctx.reply(ERR_T, { code: ERR.NOT_FOUND, message: 'no such state' });","      if (!rec) return;",'state'),
]

M += [
 ('events-severity-any','src/profiles/events.mjs',"  if (!SEVERITIES.includes(e.severity)) throw","  if (false) throw",'events'),
 ('events-correlation-optional','src/profiles/events.mjs',"  if (!e.msg_id.length && !e.task_id.length && !e.rpc_id.length) throw","  if (false) throw",'events'),
 ('events-reuse-taken','src/profiles/events.mjs',"    if (prior !== undefined && prior !== fp) throw","    if (false) throw",'events'),
 ('events-batch-reversed','src/profiles/events.mjs',"      if (st.subs.has('echo')) for (const e of fresh) ctx.originate(PUBLISH, { event: plain(e) });\n      return;\n    }\n    case SUBSCRIBE:","      if (st.subs.has('echo')) for (const e of [...fresh].reverse()) ctx.originate(PUBLISH, { event: plain(e) });\n      return;\n    }\n    case SUBSCRIBE:",'events'),
 ('events-batch-partial','src/profiles/events.mjs',"    checkEvent(e, w);","    try { checkEvent(e, w); } catch (err) { if (i === 0) throw err; return; }",'events'),
 ('events-echo-drops-rpc-id','src/profiles/events.mjs',"msg_id: e.msg_id, task_id: e.task_id, rpc_id: e.rpc_id, body: e.body });","msg_id: e.msg_id, task_id: e.task_id, body: e.body });",'events'),
 ('events-tick-bad-severity','src/profiles/events.mjs',"event_type: 'fj.tick', severity: 'info',","event_type: 'fj.tick', severity: 'INFO',",'events'),
 ('events-tick-no-correlation','src/profiles/events.mjs',"task_id: Buffer.from('fj-ticks'), ","",'events'),
 ('events-ticks-one-short','src/profiles/events.mjs',"    const list = Array.from({ length: Number(m[2]) }","    const list = Array.from({ length: Number(m[2]) - 1 }",'events'),
]

M += [
 ('events-echo-invents-rpc-id','src/profiles/events.mjs',"msg_id: e.msg_id, task_id: e.task_id, rpc_id: e.rpc_id, body: e.body });","msg_id: e.msg_id, task_id: e.task_id, rpc_id: e.rpc_id.length ? e.rpc_id : Buffer.from('invented'), body: e.body });",'events'),
 ('obs-doc-invents-msg-id','src/profiles/obs.mjs',"      return ctx.reply(DOC, cur);","      return ctx.reply(DOC, { ...cur, msg_id: cur.msg_id.length ? cur.msg_id : Buffer.from('invented') });",'obs'),
]

M += [
 ('rpc-second-outcome-after-cancel','src/profiles/rpc.mjs',"      clearTimeout(call.timer);\n      return finish(ctx, call, fail(RPC_POLICY.cancelCode","      setTimeout(() => ctx.reply(RESP, { rpc_id: call.rpc_id, result: Buffer.from('late') }), 500);\n      return finish(ctx, call, fail(RPC_POLICY.cancelCode",'rpc'),
 ('rpc-replay-reruns','src/profiles/rpc.mjs',"      if (prior.outcome) return finish(ctx, call, prior.outcome);","",'rpc'),
 ('rpc-conflict-taken','src/profiles/rpc.mjs',"      if (prior.digest !== digest) return","      if (false) return",'rpc'),
 ('rpc-stream-seq-repeats','src/profiles/rpc.mjs',"seq_no: i, item:","seq_no: 1, item:",'rpc'),
 ('rpc-cancel-ignored','src/profiles/rpc.mjs',"      if (!call || !call.cancel) return;","      return;",'rpc'),
 ('rpc-fail-retryable','src/profiles/rpc.mjs',"      return finish(ctx, call, fail('internal', false,","      return finish(ctx, call, fail('internal', true,",'rpc'),
 ('rpc-window-never-ends','src/catalog.mjs',"  replayWindowMs: 4000,","  replayWindowMs: 4000000,",'rpc'),
]

only=sys.argv[1:] 
res={}
for name,f,old,new,ns in M:
    if only and name not in only: continue
    d=os.path.join(SCRATCH, name)
    shutil.rmtree(d,ignore_errors=True); os.makedirs(d+'/implementations/manifests')
    shutil.copytree(SRC+'/foreign-js', d+'/implementations/foreign-js')
    shutil.copy(SRC+'/manifests/foreign-js.yaml', d+'/implementations/manifests/')
    p=d+'/implementations/foreign-js/'+f
    s=open(p).read()
    if old not in s: print(name,'PATTERN MISSING'); continue
    s=s.replace(old,new,1); open(p,'w').write(s)
    out=d+'/out'
    subprocess.run([BIN,'run','--sut','foreign-js.yaml','--out',out,'--namespace',ns,'--jobs','2','-q'],cwd=d+'/implementations/manifests',capture_output=True)
    try:
        r=json.load(open(out+'/report.json'))
        bad=[x['vector_id']+':'+x['verdict'] for x in r['results'] if x['verdict'] not in ('pass','not-applicable')]
    except Exception as e:
        bad=['ERROR '+str(e)]
    res[name]=bad
    print(name, '->', bad if bad else 'NOT CAUGHT', flush=True)
json.dump(res,open(os.path.join(SCRATCH,'results.json'),'w'),indent=1)
print('results:', os.path.join(SCRATCH,'results.json'))
