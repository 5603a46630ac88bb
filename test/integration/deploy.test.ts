/**
 * What can be tried of the deployment files without Docker or systemd: each
 * ledger-query service of compose.yaml (read with Python's YAML parser, where
 * there is one) runs a command and environment that `serve` takes; the
 * image's and the unit's variables are settings; the unit passes
 * `systemd-analyze verify` where there is one.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLI } from '../support/cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lq-deploy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `ledger-query config serve ARGS` with only `env` (and PATH) in the environment. */
function config(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [CLI, 'config', 'serve', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });
  assert.equal(r.status, 0, `config serve ${args.join(' ')} with ${JSON.stringify(env)}: ${r.stderr}`);
  return r.stdout;
}

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
}

const python = spawnSync('python3', ['-c', 'import yaml'], { encoding: 'utf8' });

test('compose.yaml: PostgreSQL, a writer and two API instances, each with a configuration serve takes',
  { skip: python.status !== 0 && 'no python3 with its yaml module to read compose.yaml' }, () => {
    const read = spawnSync('python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', join(ROOT, 'compose.yaml')], { encoding: 'utf8' });
    assert.equal(read.status, 0, read.stderr);
    const services = (JSON.parse(read.stdout) as { services: Record<string, Service> }).services;
    assert.deepEqual(Object.keys(services).sort(), ['api-1', 'api-2', 'postgres', 'writer']);
    // ${NAME:-default} as compose reads it, with nothing set.
    const resolve = (env: Record<string, string> = {}) =>
      Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
    const image = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const imageEnv = Object.fromEntries([...image.matchAll(/(LEDGER_QUERY_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    assert.deepEqual(Object.keys(imageEnv).sort(), ['LEDGER_QUERY_DATA_DIR', 'LEDGER_QUERY_HOST']);
    const printed: Record<string, string> = {};
    for (const name of ['writer', 'api-1', 'api-2']) {
      const service = services[name]!;
      assert.equal(service.image, 'ledger-query:local');
      assert.equal(service.command?.[0], 'serve');
      printed[name] = config(service.command!.slice(1), { ...imageEnv, ...resolve(service.environment) });
    }
    assert.match(printed.writer!, /^source = "socket:\/\/0\.0\.0\.0:3005" +# LEDGER_QUERY_SOURCE$/m);
    assert.match(printed.writer!, /^database-url = "postgres:\/\/ledger:\*\*\*@postgres:5432\/ledger"/m);
    for (const api of ['api-1', 'api-2']) {
      assert.match(printed[api]!, /^no-ingest = true +# --no-ingest$/m);
      assert.match(printed[api]!, /^host = "0\.0\.0\.0" +# LEDGER_QUERY_HOST$/m);
    }
  });

test('the Dockerfile runs as an unprivileged user on Node 22, in two stages', () => {
  const image = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  assert.equal([...image.matchAll(/^FROM node:22-bookworm-slim\b/gm)].length, 2);
  assert.match(image, /^USER node$/m);
  assert.match(image, /^COPY --from=build \/app\/proto \.\/proto$/m, 'the protobuf schema, read when an order message is encoded');
});

test('the systemd unit: its variables are settings, and systemd-analyze verify passes where there is one', (t) => {
  const unit = readFileSync(join(ROOT, 'deploy/ledger-query.service'), 'utf8');
  const env = Object.fromEntries([...unit.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  const file = join(dir, 'config.toml');
  writeFileSync(file, 'source = "socket://0.0.0.0:3005"\nhost = "0.0.0.0"\n');
  const printed = config([], { ...env, LEDGER_QUERY_CONFIG: file });
  assert.match(printed, /^data-dir = "\/var\/lib\/ledger-query" +# LEDGER_QUERY_DATA_DIR$/m);
  assert.match(printed, /^log-format = "json" +# LEDGER_QUERY_LOG_FORMAT$/m);
  if (spawnSync('systemd-analyze', ['--version']).status !== 0) {
    t.diagnostic('systemd-analyze is not installed: the unit was not verified (apt-get install systemd)');
    return;
  }
  // The unit names /usr/bin/node; verify checks that it can be run, so the copy names this node.
  const copy = join(dir, 'ledger-query.service');
  writeFileSync(copy, unit.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
  const verify = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stderr);
  assert.equal(verify.stderr.trim(), '', 'no warning');
});
