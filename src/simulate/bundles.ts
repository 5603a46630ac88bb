/**
 * The validator side of the simulated network: ERC20 multisig signer-added and
 * signer-removed events as validators join, leave and rejoin, and the
 * validators' node signatures of those bundles, which arrive before, with or
 * after the bundle itself.
 */
import type { EventBody } from '../ingest/events.js';
import { BlockTimes } from './clock.js';
import type { Random } from './random.js';
import { InternalError } from '../errors.js';

const KIND_SIGNER_ADDED = 3;
const KIND_SIGNER_REMOVED = 4;
/** A removal never takes the set below this, so bundles always have enough signers. */
const MIN_ACTIVE_VALIDATORS = 4;
/** An Ethereum signature: r, s and v. */
const SIGNATURE_BYTES = 65;

interface Validator {
  id: string;
  /** The Ethereum address the validator signs multisig transactions with. */
  signer: string;
  /** The Ethereum address the validator submits bundles from. */
  submitter: string;
  state: 'active' | 'removed' | 'changing';
  /** Block index of its latest removal. */
  removedAt: number;
}

export interface ValidatorOptions {
  startTime: bigint;
  blockIntervalNs: bigint;
  validators?: number;
  /** Blocks per epoch; epochSeq starts at 1. */
  epochBlocks?: number;
}

export class ValidatorNetwork {
  private readonly validators: Validator[] = [];
  private readonly planned = new Map<number, EventBody[]>();
  private readonly epochBlocks: number;
  private readonly times: BlockTimes;
  signersAdded = 0;
  signersRemoved = 0;

  constructor(private readonly rng: Random, opts: ValidatorOptions) {
    this.epochBlocks = opts.epochBlocks ?? 10;
    this.times = new BlockTimes(opts.startTime, opts.blockIntervalNs);
    const count = opts.validators ?? 7;
    for (let i = 0; i < count; i++) {
      this.validators.push({
        id: rng.hex(64),
        // Some operators paste their addresses in their checksummed (mixed-case)
        // form, one even with "0X": by index, so every seed's genesis has each.
        signer: ethereumAddress(rng, i === 1 ? 'mixed0X' : i % 2 === 0 ? 'mixed' : 'lower'),
        submitter: ethereumAddress(rng, rng.chance(0.4) ? 'mixed' : 'lower'),
        state: 'changing',
        removedAt: 0,
      });
    }
  }

  /** True for the first block of every epoch after the first. */
  startsEpoch(index: number): boolean {
    return index > 0 && index % this.epochBlocks === 0;
  }

  epochOf(index: number): bigint {
    return BigInt(1 + Math.floor(index / this.epochBlocks));
  }

  /** Appends block `index`'s multisig and node signature events to `out`. */
  runBlock(index: number, out: EventBody[]): void {
    if (index === 0) this.planGenesis();
    else if (this.startsEpoch(index)) this.planChurn(index);
    const events = this.planned.get(index);
    if (events === undefined) return;
    this.planned.delete(index);
    for (const e of events) {
      // A change of the validator set takes effect with its event.
      if (e.kind === 'signerAdded') {
        this.signersAdded++;
        this.byId(e.signerAdded.validatorId).state = 'active';
      } else if (e.kind === 'signerRemoved') {
        this.signersRemoved++;
        const v = this.byId(e.signerRemoved.validatorId);
        v.state = 'removed';
        v.removedAt = index;
      }
      out.push(e);
    }
  }

  private byId(id: string): Validator {
    const v = this.validators.find((x) => x.id === id);
    if (v === undefined) throw new InternalError(`unknown validator ${id}`);
    return v;
  }

  private blockTime(index: number): bigint {
    return this.times.at(index);
  }

  private planGenesis(): void {
    // Every validator joins in the first blocks; signatures of the very first
    // bundles can then still arrive a block before them.
    const signers = this.validators;
    this.validators.forEach((v, i) => this.planAdd(v, 2 + i, signers));
  }

  /** At an epoch boundary, a removed validator may come back, or an active one may leave. */
  private planChurn(index: number): void {
    const rng = this.rng;
    const active = this.validators.filter((v) => v.state === 'active');
    const returning = this.validators.filter((v) => v.state === 'removed' && v.removedAt < index);
    const at = index + rng.between(2, 4);
    if (returning.length > 0 && rng.chance(0.7)) {
      const v = rng.pick(returning);
      if (rng.chance(0.5)) v.signer = ethereumAddress(rng, rng.chance(0.4) ? 'mixed' : 'lower');
      this.planAdd(v, at, active);
    } else if (active.length > MIN_ACTIVE_VALIDATORS && rng.chance(0.6)) {
      this.planRemove(rng.pick(active), at, active);
    }
  }

  private planAdd(v: Validator, at: number, signers: readonly Validator[]): void {
    const rng = this.rng;
    v.state = 'changing';
    const signatureId = rng.hex(64);
    const others = signers.filter((s) => s !== v);
    const submitter = others.length > 0 ? rng.pick(others).submitter : v.submitter;
    this.plan(at, {
      kind: 'signerAdded',
      signerAdded: {
        signatureId,
        validatorId: v.id,
        timestamp: this.blockTime(at),
        newSigner: v.signer,
        submitter,
        nonce: nonce(rng),
        epochSeq: this.epochOf(at),
      },
    });
    this.planSignatures(signatureId, KIND_SIGNER_ADDED, at, signers);
  }

  private planRemove(v: Validator, at: number, signers: readonly Validator[]): void {
    const rng = this.rng;
    v.state = 'changing';
    const others = signers.filter((s) => s !== v);
    const signatureSubmitters: { signatureId: string; submitter: string }[] = [];
    const count = rng.between(1, Math.min(3, others.length));
    for (let i = 0; i < count; i++) {
      signatureSubmitters.push({ signatureId: rng.hex(64), submitter: rng.pick(others).submitter });
    }
    this.plan(at, {
      kind: 'signerRemoved',
      signerRemoved: {
        signatureSubmitters,
        validatorId: v.id,
        timestamp: this.blockTime(at),
        oldSigner: v.signer,
        nonce: nonce(rng),
        epochSeq: this.epochOf(at),
      },
    });
    for (const s of signatureSubmitters) this.planSignatures(s.signatureId, KIND_SIGNER_REMOVED, at, others);
  }

  /**
   * At least two thirds of the signers sign, each at its own pace: some
   * before the bundle's block, some in it, some blocks later. Rarely nobody
   * does, and rarely a signature is published twice.
   */
  private planSignatures(id: string, kind: number, at: number, signers: readonly Validator[]): void {
    const rng = this.rng;
    if (rng.chance(0.03)) return;
    const earliest = Math.max(0, at - 2);
    const order = [...signers];
    shuffle(order, rng);
    const needed = Math.ceil((2 * order.length) / 3);
    const count = rng.between(Math.min(needed, order.length), order.length);
    for (let i = 0; i < count; i++) {
      const roll = rng.float();
      const when = roll < 0.3 ? Math.max(earliest, at - rng.between(1, 2)) : roll < 0.6 ? at : at + rng.between(1, 6);
      const body: EventBody = { kind: 'nodeSignature', nodeSignature: { id, sig: rng.bytes(SIGNATURE_BYTES), kind } };
      this.plan(when, body);
      if (rng.chance(0.02)) this.plan(when + rng.between(0, 3), body);
    }
  }

  private plan(at: number, e: EventBody): void {
    const list = this.planned.get(at);
    if (list === undefined) this.planned.set(at, [e]);
    else {
      // Events planned for the same block arrive in no particular order.
      list.splice(this.rng.int(list.length + 1), 0, e);
    }
  }
}

function shuffle<T>(items: T[], rng: Random): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = items[i] as T;
    items[i] = items[j] as T;
    items[j] = t;
  }
}

/**
 * `0x` and 40 hex digits, in lower case, mixed case, or mixed case after an
 * upper-case `0X`. The mixed-case form only imitates EIP-55 (a real checksum
 * needs keccak-256): what matters here is that addresses are matched and
 * printed whatever their case (the original keeps their bytes).
 */
function ethereumAddress(rng: Random, style: 'lower' | 'mixed' | 'mixed0X'): string {
  const hex = rng.hex(40);
  if (style === 'lower') return `0x${hex}`;
  let out = style === 'mixed0X' ? '0X' : '0x';
  for (const c of hex) out += c >= 'a' && rng.chance(0.5) ? c.toUpperCase() : c;
  return out;
}

/** The multisig contract's nonces are large random integers, printed in base 10. */
function nonce(rng: Random): string {
  return ((rng.uint64() << 32n) | BigInt(rng.uint32())).toString();
}
