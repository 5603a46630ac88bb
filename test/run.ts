/**
 * `npm test`: starts a throwaway PostgreSQL server of every build on this
 * machine (the embedded 18 and 13 that npm installs, and the distribution's
 * own under /usr/lib/postgresql, JIT and all) unless TEST_DATABASE_URL names
 * one, runs every test file against them and the embedded store, and stops
 * the servers. Arguments are test files to run instead of all of them.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distributionBuilds, embeddedBuilds, startPostgres, type RunningPostgres } from './support/pg-server.js';
import { SERVERS_ENV, type TestServer } from './support/postgres.js';

/** The compiled tests (dist/test), each whose source is still there: one deleted leaves its compiled file behind. */
const compiled = fileURLToPath(new URL('.', import.meta.url));
const sources = fileURLToPath(new URL('../../test/', import.meta.url));
function testFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.js') && existsSync(join(sources, relative(compiled, path)).replace(/\.js$/, '.ts')) ? [path] : [];
  });
}

// Two files at a time whatever the cores (Node's default is one fewer than the cores: one on CI's two): most of a
// file's time is spent waiting on the servers and commands it starts, which the other file's work fills.
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  process.stderr.write(`TEST_CONCURRENCY=${process.env.TEST_CONCURRENCY}: must be a whole number of test files, 1 or more\n`);
  process.exit(2);
}
const files = process.argv.length > 2 ? process.argv.slice(2) : testFiles(compiled);
const running: RunningPostgres[] = [];
const env: NodeJS.ProcessEnv = { ...process.env };
if (!process.env.TEST_DATABASE_URL) {
  const distribution = distributionBuilds();
  if (distribution.length === 0) {
    process.stdout.write('no distribution PostgreSQL under /usr/lib/postgresql: the PostgreSQL suites run on the embedded servers only\n');
  }
  const started = Date.now();
  const builds = [...embeddedBuilds(), ...distribution];
  const results = await Promise.allSettled(builds.map((b) => startPostgres(b)));
  for (const r of results) if (r.status === 'fulfilled') running.push(r.value);
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
  if (failed.length > 0 || running.length === 0) {
    await Promise.all(running.map((s) => s.stop()));
    process.stderr.write(`could not start the test PostgreSQL servers: ${failed.join('; ') || 'no build found'}\n`);
    process.exit(1);
  }
  for (const s of running) process.stdout.write(`test PostgreSQL server: ${s.version}${s.jitAvailable ? ' (JIT available)' : ''}\n`);
  process.stdout.write(`${running.length} PostgreSQL servers started in ${Date.now() - started} ms\n`);
  const servers: TestServer[] = running.map((s) => ({
    id: s.build.id, label: s.build.label, url: s.url, jitAvailable: s.jitAvailable,
  }));
  env[SERVERS_ENV] = JSON.stringify(servers);
}
const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files], { env, stdio: 'inherit' });
const code = await new Promise<number>((resolve) => child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await Promise.all(running.map((s) => s.stop()));
process.exit(code);
