import { fileSource } from './file-source.js';
import { ndjsonSource } from './ndjson-source.js';
import { socketSource } from './socket-source.js';
import type { EventSource } from './source.js';

export interface SourceSpecOptions {
  /** Keep reading a file:// source as it grows. */
  follow?: boolean;
  signal?: AbortSignal;
  log?: (level: 'info' | 'warn', msg: string) => void;
  onListening?: (address: { host: string; port: number }) => void;
  /** Where "-" reads from (stdin by default). */
  stdin?: NodeJS.ReadableStream;
}

export class SourceSpecError extends Error {}

export const SOURCE_SPEC_HELP = `socket://HOST:PORT (nanomsg PAIR listener the core dials into, e.g. socket://0.0.0.0:3005),
file://PATH (framed event file; with --follow, tailed as it grows), ndjson://PATH, or - (NDJSON on stdin)`;

/** Turns `--source` text into a source. */
export function openSourceSpec(spec: string, opts: SourceSpecOptions = {}): EventSource {
  if (spec === '-') return ndjsonSource('-', opts.stdin);
  const m = /^([a-z]+):\/\/(.+)$/.exec(spec);
  if (!m) throw new SourceSpecError(`source "${spec}" is not one of: ${SOURCE_SPEC_HELP}`);
  const [, scheme, rest] = m as unknown as [string, string, string];
  switch (scheme) {
    case 'file':
      return fileSource(rest, { follow: opts.follow ?? false, signal: opts.signal });
    case 'ndjson':
      return rest === '-' ? ndjsonSource('-', opts.stdin) : ndjsonSource(rest);
    case 'socket': {
      const hp = /^(.*):(\d{1,5})$/.exec(rest);
      const port = hp ? Number(hp[2]) : NaN;
      if (!hp || port > 65535) throw new SourceSpecError(`socket source "${spec}" needs HOST:PORT`);
      return socketSource({
        host: hp[1]!.replace(/^\[(.*)\]$/, '$1'), port, signal: opts.signal, log: opts.log, onListening: opts.onListening,
      });
    }
    default:
      throw new SourceSpecError(`unknown source scheme "${scheme}://"; use ${SOURCE_SPEC_HELP}`);
  }
}
