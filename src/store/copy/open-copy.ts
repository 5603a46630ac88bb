/**
 * A copy's stores as the command line names them (a data folder, or a
 * PostgreSQL URL), and the one place that picks each side's backend; as
 * ../open.ts, a backend's modules load only when it is used.
 */
import type { CopySource, CopyStore, CopyTarget } from './contract.js';

export type { CopyStore };

export function copyStoreOf(text: string): CopyStore {
  return /^postgres(ql)?:\/\//.test(text) ? { kind: 'postgres', url: text } : { kind: 'embedded', dataDir: text };
}

export async function openCopySource(store: CopyStore): Promise<CopySource> {
  if (store.kind === 'postgres') {
    const { openPostgresCopySource } = await import('../postgres/copy-source.js');
    return openPostgresCopySource(store.url);
  }
  const { openSqliteCopySource } = await import('../sqlite/copy-source.js');
  return openSqliteCopySource(store.dataDir);
}

/** `source` is recorded in a PostgreSQL target's mark, for an operator who finds it. */
export async function openCopyTarget(store: CopyStore, source: string): Promise<CopyTarget> {
  if (store.kind === 'postgres') {
    const { openPostgresCopyTarget } = await import('../postgres/copy-target.js');
    return openPostgresCopyTarget(store.url, source);
  }
  const { openSqliteCopyTarget } = await import('../sqlite/copy-target.js');
  return openSqliteCopyTarget(store.dataDir);
}
