/**
 * Byte-level damage for decoder fuzzing: a bit flipped, bytes inserted or
 * removed, the stream cut short; and random chunkings, as reads and network
 * packets split a stream. Positions are drawn as plain numbers and taken
 * modulo the input's length when applied, so one arbitrary serves any input.
 */
import fc from 'fast-check';

export type ByteMutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'cut'; at: number };

/**
 * A position, taken modulo what it indexes: mostly uniform over the input
 * (fast-check's own numbers favour small ones, which would damage the first
 * bytes, records or lines most of the time), now and then small.
 */
export const position: fc.Arbitrary<number> = fc.oneof({ weight: 3, arbitrary: fc.noBias(fc.nat()) }, { weight: 1, arbitrary: fc.nat() });

export const byteMutationArb: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: position, bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: position, count: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: position }),
);

/**
 * `bytes` with `m` applied, and the first position that may differ from
 * `bytes` (at or before the first that does: an inserted byte may equal the
 * one it pushes on).
 */
export function applyMutation(bytes: Buffer, m: ByteMutation): { bytes: Buffer; changedAt: number } {
  if (bytes.length === 0) return m.kind === 'insert' ? { bytes: Buffer.from(m.bytes), changedAt: 0 } : { bytes, changedAt: 0 };
  switch (m.kind) {
    case 'flip': {
      const at = m.at % bytes.length;
      const out = Buffer.from(bytes);
      out[at] = out[at]! ^ (1 << m.bit);
      return { bytes: out, changedAt: at };
    }
    case 'insert': {
      const at = m.at % (bytes.length + 1);
      return { bytes: Buffer.concat([bytes.subarray(0, at), m.bytes, bytes.subarray(at)]), changedAt: at };
    }
    case 'delete': {
      const at = m.at % bytes.length;
      return { bytes: Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.count)]), changedAt: at };
    }
    case 'cut': {
      const at = m.at % bytes.length;
      return { bytes: bytes.subarray(0, at), changedAt: at };
    }
  }
}

/** Chunk sizes, used in turn: from a byte at a time to several records at once. */
export const chunkingArb = fc.array(fc.oneof(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 17, max: 4096 })), { minLength: 1, maxLength: 8 });

/** `bytes` in chunks of the sizes of `cuts`, taken in turn. */
export function* chunked(bytes: Buffer, cuts: readonly number[]): Generator<Buffer> {
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = cuts[i % cuts.length]!;
    yield bytes.subarray(at, at + size);
    at += size;
  }
}
