/** What the commands share: the store and logging a command's settings name, and stopping on Ctrl-C. */
import type { Values } from '../config/settings.js';
import { resolveLogFormat, type LogOptions } from '../log-options.js';
import type { StoreConfig } from '../store/store.js';

export const storeOf = (v: Values): StoreConfig => ({ dataDir: v['data-dir'], databaseUrl: v['database-url'] });

export const logOf = (v: Values): LogOptions => ({
  level: v['log-level'], requests: v['log-requests'], format: resolveLogFormat(v['log-format']),
});

/**
 * Ctrl-C (or SIGTERM) while ingesting stops it: the blocks read so far are
 * stored and the command says so. A second one ends the process at once:
 * stored blocks are committed, so nothing is lost but the group in flight.
 */
export function stopOnSignal(): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const release = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  return { signal: controller.signal, release };
}
