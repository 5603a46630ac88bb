/**
 * A small seeded PRNG (sfc32, seeded through splitmix32) and the samplers the
 * simulator needs. Math.random cannot be seeded, and the simulator's output
 * must be byte-identical for a given seed.
 */
import { InternalError } from '../errors.js';

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private scratch = Buffer.allocUnsafe(32);

  /** `stream` separates independent sequences drawn from the same seed. */
  constructor(seed: number, stream = 0) {
    const mix = splitmix32((Math.trunc(seed) ^ Math.imul(stream + 1, 0x27d4eb2d)) >>> 0);
    // Fold in the high bits too, so seeds beyond 2^32 still differ.
    const high = Math.floor(Math.abs(seed) / 0x1_0000_0000) >>> 0;
    this.a = mix() ^ high;
    this.b = mix();
    this.c = mix();
    this.d = 1;
    // sfc32 needs a few rounds before its output is well mixed.
    for (let i = 0; i < 15; i++) this.uint32();
  }

  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.uint32() / 0x1_0000_0000;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new InternalError('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** Number of failures before the first success: mean (1 - p) / p. */
  geometric(p: number): number {
    let n = 0;
    while (!this.chance(p)) n++;
    return n;
  }

  /** `chars` lowercase hex digits. */
  hex(chars: number): string {
    const words = Math.ceil(chars / 8);
    // One native hex conversion is much cheaper than joining many small strings.
    if (this.scratch.length < words * 4) this.scratch = Buffer.allocUnsafe(words * 4);
    for (let i = 0; i < words; i++) this.scratch.writeUInt32BE(this.uint32(), i * 4);
    const s = this.scratch.toString('hex', 0, words * 4);
    return s.length === chars ? s : s.slice(0, chars);
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const v = this.uint32();
      out[i] = v & 0xff;
      if (i + 1 < n) out[i + 1] = (v >>> 8) & 0xff;
      if (i + 2 < n) out[i + 2] = (v >>> 16) & 0xff;
      if (i + 3 < n) out[i + 3] = v >>> 24;
    }
    return out;
  }

  /** Uniform 64-bit unsigned integer. */
  uint64(): bigint {
    return (BigInt(this.uint32()) << 32n) | BigInt(this.uint32());
  }
}

/**
 * Picks index k of n with probability proportional to 1 / (k + 1)^exponent:
 * a few items get most of the picks, like the busiest parties of a real network.
 */
export class ZipfSampler {
  private readonly cumulative: Float64Array;

  constructor(readonly size: number, exponent: number) {
    if (size < 1) throw new InternalError('ZipfSampler needs at least one item');
    this.cumulative = new Float64Array(size);
    let total = 0;
    for (let k = 0; k < size; k++) {
      total += 1 / Math.pow(k + 1, exponent);
      this.cumulative[k] = total;
    }
  }

  sample(rng: Random): number {
    const target = rng.float() * (this.cumulative[this.size - 1] as number);
    let lo = 0;
    let hi = this.size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cumulative[mid] as number) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Picks one of a fixed set of outcomes with the given relative weights. */
export class WeightedChoice<T> {
  private readonly cumulative: number[] = [];
  private readonly values: T[] = [];
  private total = 0;

  constructor(entries: readonly (readonly [T, number])[]) {
    for (const [value, weight] of entries) {
      if (weight <= 0) continue;
      this.total += weight;
      this.cumulative.push(this.total);
      this.values.push(value);
    }
    if (this.values.length === 0) throw new InternalError('WeightedChoice needs a positive weight');
  }

  sample(rng: Random): T {
    const target = rng.float() * this.total;
    for (let i = 0; i < this.cumulative.length; i++) {
      if ((this.cumulative[i] as number) > target) return this.values[i] as T;
    }
    return this.values[this.values.length - 1] as T;
  }
}
