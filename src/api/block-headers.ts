/**
 * The headers by which every answer of the original's query service names the
 * last block it had stored when it read the answer (docs/compatibility.md, section 7):
 * clients compare them with the network to tell a node that lags behind.
 */
import type { BlockStamp } from '../domain/page.js';
import { toMicros } from '../domain/time.js';

export const BLOCK_HEIGHT_HEADER = 'X-Block-Height';
export const BLOCK_TIMESTAMP_HEADER = 'X-Block-Timestamp';

/** Both headers' values; `0` while no block is stored. The time is in whole microseconds, as the original keeps it. */
export function blockHeaderValues(block: BlockStamp | undefined): [height: string, micros: string] {
  return block === undefined ? ['0', '0'] : [block.height.toString(), toMicros(block.time).toString()];
}
