import type { Block } from '../../src/domain/block.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { RecordingStore } from './recording-store.js';

/** The blocks of an event file, read by the real file source and assembler. */
export async function readBlocks(path: string): Promise<Block[]> {
  const store = new RecordingStore();
  await ingest(fileSource(path), store);
  return store.blocks;
}
