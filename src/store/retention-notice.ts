/**
 * What a writer says when it opens a store pruned before with a shorter
 * window than it keeps: what that pruned is gone, which is no error (README
 * "Retention").
 */
import { windowText, type Retention } from '../domain/retention.js';

/** The line to say, or undefined: `prunedWith` is the window the store was last pruned with (undefined: never). */
export function prunedBeforeNotice(prunedWith: bigint | undefined, retention: Retention): string | undefined {
  if (prunedWith === undefined) return undefined;
  if (retention.kind === 'window' && retention.ns <= prunedWith) return undefined;
  const keeps = retention.kind === 'archive' ? 'everything from now on (archive)' : `${retention.name} from now on`;
  return `this store was pruned with a retention of ${windowText(prunedWith)}: what that pruned is gone for good; it keeps ${keeps}`;
}
