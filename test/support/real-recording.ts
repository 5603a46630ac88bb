/**
 * The real network's own recording (docs/compatibility.md, section 10), read
 * where it lies, beside the repository (../shared/fixtures); never copied
 * into it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** From dist/test/support/ up to the repository, then beside it. */
export const REAL_RECORDING = fileURLToPath(new URL('../../../../shared/fixtures/system_tests.evt.gz', import.meta.url));

/** What the original data node answers for it (docs/compatibility.md, section 10). */
export const REAL = {
  chainId: 'testnet-001',
  lastHeight: 1087n,
  /** X-Block-Timestamp after the last block: its time, 1678444165327608117, on the microsecond. */
  lastBlockTimestamp: '1678444165327608000',
  events: 6964,
  orders: 24,
  market: 'bda439ade276efe1567fedec94ea5b9c040c5f89f72382ef1cf893faf0454f32',
  /** That market's orders, newest first, by id prefix, with their createdAt. */
  marketNewestFirst: [
    ['038f18b4', '1678444076736102000'], ['1a3ddf5e', '1678444076736102000'],
    ['b9b068be', '1678444076736102000'], ['ec28bb9c', '1678444076736102000'],
    ['6b24805f', '1678444076432396000'], ['a7699d0d', '1678444076432396000'],
    ['72caa61c', '1678444068498375000'], ['a63412b9', '1678444068498375000'],
  ],
  /** Height 1 comes twice: the network was started twice. */
  firstHashes: [
    'c9d541d2cf78525b0c097e8c302f217cf37e75a7c87191bb5d68253937875ac4',
    '41fd641236123493011984ffccc7b986c30ead107f885c70813419f22fb645f2',
  ],
} as const;

/**
 * The recording's path, or undefined where it is absent (a user's clone
 * without ../shared): then the test says so on one line and is skipped.
 */
export function realRecording(t: { skip(message: string): void }): string | undefined {
  if (existsSync(REAL_RECORDING)) return REAL_RECORDING;
  t.skip(`the real recording is not at ${REAL_RECORDING} (../shared/fixtures): this test needs it`);
  return undefined;
}
