#!/usr/bin/env node
// Command line of the foreign-js SWP endpoint.
//   swp-fj serve [--listen [tcp://|tls://]127.0.0.1:PORT] [--cert F --key F --client-ca F] [--port-file FILE] [--p1-form wrapper|message]
//                [--no-freshness] [--verbose]
//   swp-fj params     print the manifest params the built-in catalog implies (JSON)

import { writeFileSync, renameSync } from 'node:fs';
import { manifestParams } from '../src/catalog.mjs';
import { listen } from '../src/server.mjs';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function usage(msg) {
  if (msg) process.stderr.write(`swp-fj: ${msg}\n`);
  process.stderr.write('usage: swp-fj serve [--listen HOST:PORT] [--port-file FILE] [--p1-form wrapper|message] [--no-freshness] [--rpc-owner IDENTITY] [--verbose]\n       swp-fj params\n');
  process.exit(2);
}

async function main(argv) {
  const [cmd, ...rest] = argv;
  if (cmd === 'params') {
    process.stdout.write(JSON.stringify(manifestParams(), null, 2) + '\n');
    return;
  }
  if (cmd !== 'serve') usage(cmd ? `unknown command ${cmd}` : 'no command');
  let listenAt = '127.0.0.1:0';
  let portFile;
  let p1Form = 'wrapper';
  let freshness = true;
  let verbose = false;
  let scheme = 'tcp';
  let rpcOwner = null;
  const tlsFiles = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const val = () => (i + 1 < rest.length ? rest[++i] : usage(`${a} needs a value`));
    if (a === '--listen') listenAt = val();
    else if (a === '--port-file') portFile = val();
    else if (a === '--p1-form') p1Form = val();
    else if (a === '--no-freshness') freshness = false;
    else if (a === '--verbose') verbose = true;
    else if (a === '--cert') tlsFiles.cert = val();
    else if (a === '--key') tlsFiles.key = val();
    else if (a === '--client-ca') tlsFiles.clientCa = val();
    else if (a === '--rpc-owner') rpcOwner = val();
    else usage(`unknown option ${a}`);
  }
  if (!['wrapper', 'message'].includes(p1Form)) usage('--p1-form is wrapper or message');
  const sm = /^(tcp|tls):\/\/(.*)$/.exec(listenAt);
  if (sm) [scheme, listenAt] = [sm[1], sm[2]];
  const m = /^(\[[^\]]+\]|[^:]+):([0-9]{1,5})$/.exec(listenAt);
  if (!m) usage('--listen takes [tcp://|tls://]HOST:PORT');
  const host = m[1].replace(/^\[|\]$/g, '');
  const tlsOn = scheme === 'tls';
  if (tlsOn && !(tlsFiles.cert && tlsFiles.key && tlsFiles.clientCa)) usage('tls:// needs --cert, --key and --client-ca');
  if (!tlsOn && Object.keys(tlsFiles).length) usage('--cert, --key and --client-ca need tls://');
  // core-spec §3.4 / security-bindings §2: no frames on a non-loopback interface unless an
  // authenticated confidential channel binding (S1: mTLS here) is active.
  if (!tlsOn && !LOOPBACK.has(host)) usage(`refusing plaintext on ${host}: use tls:// off loopback`);
  const log = verbose ? (s) => process.stderr.write(`swp-fj: ${s}\n`) : () => {};
  const server = await listen({ host, port: Number(m[2]), p1Form, freshness, log, rpcOwner, tls: tlsOn ? tlsFiles : undefined });
  const { port } = server.address();
  if (portFile) {
    // Written after the socket listens, atomically, so a reader never sees a partial number.
    writeFileSync(`${portFile}.tmp`, `${port}\n`);
    renameSync(`${portFile}.tmp`, portFile);
  }
  process.stderr.write(`swp-fj: listening on ${scheme}://${host}:${port}\n`);
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`swp-fj: ${e.stack || e}\n`);
  process.exit(1);
});
