/** Runs the real `ledger-query` command (compiled) as a child process. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], input?: string): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  /** Everything the server logged so far. */
  output: () => string;
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
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 30_000);
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
  return {
    url, child, output: () => out,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
