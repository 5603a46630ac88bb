/**
 * What each copy test holds while it runs: a scratch folder, the stores it
 * made (on any backend) and the servers it started, all removed after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Backend, FreshStore } from './backends.js';
import { startServe, type RunningServer } from './cli.js';

/** The value `copy` takes for a store: its folder or its URL. */
export const named = (s: FreshStore) => s.config.databaseUrl ?? s.config.dataDir;

export interface CopyScratch {
  dir: string;
  /** A new empty store on `backend`, removed after the test file. */
  fresh(backend: Backend): Promise<FreshStore>;
  /** `serve` on `args` (one HTTP process), stopped after the test file unless stopped before. */
  serve(args: string[]): Promise<RunningServer>;
  stop(server: RunningServer): Promise<void>;
}

export function copyScratch(prefix: string): CopyScratch {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const stores: FreshStore[] = [];
  const servers = new Set<RunningServer>();
  after(async () => {
    for (const s of servers) await s.stop();
    for (const s of stores) await s.remove();
    rmSync(dir, { recursive: true, force: true });
  });
  let made = 0;
  return {
    dir,
    async fresh(backend) {
      const s = await backend.fresh(dir, `s${made++}`);
      stores.push(s);
      return s;
    },
    async serve(args) {
      const server = await startServe(['--workers', '1', ...args]);
      servers.add(server);
      return server;
    },
    async stop(server) {
      await server.stop();
      servers.delete(server);
    },
  };
}
