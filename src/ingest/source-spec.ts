/** What `--source` text names: its syntax, checked without opening anything (the settings read it). */
import { UsageError } from '../errors.js';

export const SOURCE_SPEC_HELP = `socket://HOST:PORT (nanomsg PAIR listener the core dials into, e.g. socket://0.0.0.0:3005),
file://PATH (framed event file; with --follow, tailed as it grows), ndjson://PATH, or - (NDJSON on stdin)`;

/** What a `--source` text names, checked but not yet opened. */
export type SourceSpec =
  | { kind: 'socket'; host: string; port: number }
  | { kind: 'file'; path: string }
  | { kind: 'ndjson'; path: string };

/** Parses `--source` text; throws UsageError for anything else. */
export function parseSourceSpec(spec: string): SourceSpec {
  if (spec === '-') return { kind: 'ndjson', path: '-' };
  const m = /^([a-z]+):\/\/(.+)$/.exec(spec);
  if (!m) throw new UsageError(`source "${spec}" is not one of: ${SOURCE_SPEC_HELP}`);
  const [, scheme, rest] = m as unknown as [string, string, string];
  switch (scheme) {
    case 'file':
      return { kind: 'file', path: rest };
    case 'ndjson':
      return { kind: 'ndjson', path: rest };
    case 'socket': {
      const hp = /^(.*):(\d{1,5})$/.exec(rest);
      const port = hp ? Number(hp[2]) : NaN;
      if (!hp || port > 65535) throw new UsageError(`socket source "${spec}" needs HOST:PORT`);
      return { kind: 'socket', host: hp[1]!.replace(/^\[(.*)\]$/, '$1'), port };
    }
    default:
      throw new UsageError(`unknown source scheme "${scheme}://"; use ${SOURCE_SPEC_HELP}`);
  }
}
