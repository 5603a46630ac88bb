/** Runs the real `ledger-query` command (compiled) as a child process. */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A command that should fail fast gets a short `timeoutMs`, so one that hangs instead fails the test soon. */
export function runCli(args: string[], input?: string, timeoutMs = 120_000): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input, timeout: timeoutMs });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  /** Everything the server logged so far. */
  output: () => string;
  /**
   * Resolves with the lines of the output matching `pattern` once there are
   * `count` of them, checked as output arrives; fails if the server exits
   * first or after `timeoutMs`, which only stops a test that would hang.
   */
  outputLines: (pattern: RegExp, count?: number, timeoutMs?: number) => Promise<string[]>;
  stop: () => Promise<void>;
}

/** Starts `ledger-query serve` on an ephemeral port and waits until it listens. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    // A server that does not start in time is killed: left running, it would keep the test's process, and the suite,
    // alive. The time only stops a hang: four started at once on a loaded 2-core machine have taken over 30 s.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 120 s:\n${out}`));
    }, 120_000);
    const check = () => {
      const m = /listening at (http:\/\/[\d.:[\]a-z]+)/i.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${out}`));
    });
  });
  const matching = (pattern: RegExp) => out.split('\n').filter((line) => pattern.test(line));
  const outputLines = (pattern: RegExp, count = 1, timeoutMs = 30_000) => new Promise<string[]>((resolve, reject) => {
    const check = () => {
      const lines = matching(pattern);
      if (lines.length < count) return;
      settle();
      resolve(lines);
    };
    const exited = () => {
      settle();
      reject(new Error(`serve exited before ${count} lines matching ${pattern}:\n${out}`));
    };
    const timer = setTimeout(() => {
      settle();
      reject(new Error(`no ${count} lines matching ${pattern} within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      child.stdout.off('data', check);
      child.stderr.off('data', check);
      child.off('exit', exited);
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', exited);
    check();
    if (child.exitCode !== null || child.signalCode !== null) exited();
  });
  return {
    url, child, output: () => out, outputLines,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** What GET /api/v2/ingest/status answers (the fields the tests read). */
export interface IngestStatusBody {
  role: 'writer' | 'standby' | 'reader';
  state?: string;
  error?: string;
  lastBlock?: { height: string; time: string };
  events?: number;
  blocksCommitted?: number;
  blocksAlreadyStored?: number;
}

export async function ingestStatus(server: RunningServer): Promise<IngestStatusBody> {
  const res = await fetch(`${server.url}/api/v2/ingest/status`);
  assert.equal(res.status, 200, `ingest status of ${server.url}`);
  return (await res.json()) as IngestStatusBody;
}

/**
 * Polls until `check` holds; returns how long it took. The time limit only
 * stops a test that would hang: two test files run at once on a loaded
 * 2-core machine (../run.ts), so it is generous.
 */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, everyMs = 20): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
  return Date.now() - started;
}
