/**
 * Reads the Prometheus text format (version 0.0.4) strictly enough to catch
 * a malformed scrape: every sample line parses, belongs to a family declared
 * by `# TYPE` before it, and no family is declared twice. prom-client has a
 * writer of the format but no reader; this is the test's.
 */
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  types: Map<string, string>;
  /** The value of the one sample of `name` with (at least) these labels; undefined if none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum of every sample of `name` with (at least) these labels. */
  sum(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;
const SUFFIXES = ['_bucket', '_sum', '_count', '_total', ''];

export function parsePrometheusText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ') as [string, string];
      assert.ok(!types.has(name), `${name} declared twice`);
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = m[3] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const l = LABEL.exec(body);
      assert.ok(l, `bad labels in ${JSON.stringify(line)}`);
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    }
    const raw = m[4]!;
    // As Prometheus reads values (Go's ParseFloat): NaN in any case (prom-client writes `Nan`).
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw.toLowerCase() === 'nan' ? NaN : Number(raw);
    assert.ok(!Number.isNaN(value) || raw.toLowerCase() === 'nan', `bad value in ${JSON.stringify(line)}`);
    const family = SUFFIXES.map((s) => (s !== '' && m[1]!.endsWith(s) ? m[1]!.slice(0, -s.length) : m[1]!)).find((f) => types.has(f));
    assert.ok(family !== undefined, `${m[1]} has no # TYPE before it`);
    samples.push({ name: m[1]!, labels, value });
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    samples, types,
    value: (name, labels) => {
      const found = matching(name, labels);
      assert.ok(found.length <= 1, `${found.length} samples of ${name} ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
    sum: (name, labels) => matching(name, labels).reduce((a, s) => a + s.value, 0),
  };
}
