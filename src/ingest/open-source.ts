/** Opens the source a `--source` text names (./source-spec.ts). */
import { fileSource } from './file-source.js';
import { ndjsonSource } from './ndjson-source.js';
import { socketSource } from './socket-source.js';
import type { EventSource } from './source.js';
import { parseSourceSpec } from './source-spec.js';

export interface SourceSpecOptions {
  /** Keep reading a file:// source as it grows. */
  follow?: boolean;
  /** Of a gzip file:// source cut short, read the whole records of its last member too, unverified. */
  acceptUnverified?: boolean;
  signal?: AbortSignal;
  log?: (level: 'info' | 'warn', msg: string) => void;
  onListening?: (address: { host: string; port: number }) => void;
  /** Where "-" reads from (stdin by default). */
  stdin?: NodeJS.ReadableStream;
}

/** Turns `--source` text into a source. */
export function openSourceSpec(spec: string, opts: SourceSpecOptions = {}): EventSource {
  const s = parseSourceSpec(spec);
  switch (s.kind) {
    case 'file':
      return fileSource(s.path, { follow: opts.follow ?? false, acceptUnverified: opts.acceptUnverified ?? false, signal: opts.signal });
    case 'ndjson':
      return s.path === '-' ? ndjsonSource('-', opts.stdin) : ndjsonSource(s.path);
    case 'socket':
      return socketSource({ host: s.host, port: s.port, signal: opts.signal, log: opts.log, onListening: opts.onListening });
  }
}
