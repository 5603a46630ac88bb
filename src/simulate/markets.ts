/**
 * The fixed cast of the simulated network: markets and parties, with the skew
 * of a real one (a few busy parties and markets, a long tail of quiet ones).
 */
import { Random, ZipfSampler } from './random.js';

const MAX_UINT64 = (1n << 64n) - 1n;
/** Huge markets' sizes: from 2^53 to a little below the uint64 limit. */
const HUGE_SIZE_MIN = 1n << 53n;
const HUGE_SIZE_SPAN = MAX_UINT64 - (1n << 54n);
/** Huge markets scale prices by this, so prices exceed 2^53 with meaningful low digits. */
const HUGE_PRICE_SCALE = 10n ** 15n;

export interface LiquidityProvider {
  partyId: string;
  /** The 64-hex id of the provider's liquidity provision on this market, in either case. */
  provisionId: string;
}

export interface Market {
  index: number;
  id: string;
  /** Mid price in ticks; follows a random walk from block to block. */
  mid: number;
  /**
   * Prices and sizes beyond 2^53 (still valid uint64 sizes), so every layer
   * has to keep 64-bit values exact.
   */
  huge: boolean;
  liquidityProviders: LiquidityProvider[];
}

export type ReferenceStyle =
  /** Leaves the reference empty, like most UI users. */
  | 'none'
  /** A unique reference per order, like most trading bots: "bot-42-000123". */
  | 'bot'
  /** The same reference on every order, so one reference matches many orders. */
  | 'fixed';

export interface Party {
  index: number;
  id: string;
  referenceStyle: ReferenceStyle;
  ordersPlaced: number;
}

export interface Universe {
  markets: Market[];
  parties: Party[];
  /** Busy markets first: index k is picked with weight 1 / (k + 1)^0.8. */
  marketPicker: ZipfSampler;
  /** Busy parties first: index k is picked with weight 1 / (k + 1)^1.1. */
  partyPicker: ZipfSampler;
}

export interface UniverseSize {
  markets: number;
  parties: number;
}

/** Market indexes that get 64-bit prices and sizes: not the busiest, but busy enough to show up. */
function isHugeMarket(index: number): boolean {
  return index === 2 || index === 9;
}

export function createUniverse(rng: Random, size: UniverseSize): Universe {
  const parties: Party[] = [];
  for (let index = 0; index < size.parties; index++) {
    const roll = rng.float();
    const referenceStyle: ReferenceStyle = roll < 0.3 ? 'bot' : roll < 0.35 ? 'fixed' : 'none';
    parties.push({ index, id: rng.hex(64), referenceStyle, ordersPlaced: 0 });
  }
  const markets: Market[] = [];
  for (let index = 0; index < size.markets; index++) {
    const providerCount = rng.between(2, 4);
    const liquidityProviders: LiquidityProvider[] = [];
    for (let i = 0; i < providerCount; i++) {
      // Liquidity providers are mostly among the larger parties.
      const party = parties[rng.int(Math.min(100, parties.length))] as Party;
      const provisionId = rng.hex(64);
      // Some cores name provisions in upper case; the original prints ids in lower case.
      liquidityProviders.push({ partyId: party.id, provisionId: rng.chance(0.3) ? provisionId.toUpperCase() : provisionId });
    }
    markets.push({
      index,
      id: rng.hex(64),
      mid: Math.round(1000 * Math.pow(10, rng.float() * 3.5)),
      huge: isHugeMarket(index),
      liquidityProviders,
    });
  }
  return {
    markets,
    parties,
    marketPicker: new ZipfSampler(markets.length, 0.8),
    partyPicker: new ZipfSampler(parties.length, 1.1),
  };
}

/** The reference a party puts on its next order. */
export function nextReference(party: Party): string {
  party.ordersPlaced++;
  switch (party.referenceStyle) {
    case 'none':
      return '';
    case 'bot':
      return `bot-${party.index}-${String(party.ordersPlaced).padStart(6, '0')}`;
    case 'fixed':
      return `grid-${party.index}`;
  }
}

/** Moves the mid price by up to +-0.3%, never below a few ticks. */
export function walkMid(market: Market, rng: Random): void {
  const moved = Math.round(market.mid * (1 + (rng.float() - 0.5) * 0.006));
  market.mid = Math.max(20, moved);
}

/** A price as the network prints it: a base-10 integer string. */
export function priceString(market: Market, ticks: number, rng: Random): string {
  const t = Math.max(1, Math.round(ticks));
  if (!market.huge) return String(t);
  return (BigInt(t) * HUGE_PRICE_SCALE + BigInt(rng.int(1e15))).toString();
}

/** A pegged order's offset, in the market's price units. */
export function offsetString(market: Market, ticks: number): string {
  const t = Math.max(0, Math.round(ticks));
  return market.huge ? (BigInt(t) * HUGE_PRICE_SCALE).toString() : String(t);
}

/** A new order's size: mostly small with a long tail; above 2^53 on huge markets. */
export function randomSize(market: Market, rng: Random): bigint {
  if (market.huge) return HUGE_SIZE_MIN + (rng.uint64() % HUGE_SIZE_SPAN);
  return BigInt(Math.ceil(Math.pow(10, rng.float() * 4)));
}

/** A size change for an amend: never to zero remaining, never past uint64. */
export function amendedSize(size: bigint, remaining: bigint, rng: Random): bigint {
  const magnitude = size / BigInt(rng.between(3, 10)) + 1n;
  const grow = size + magnitude <= MAX_UINT64 && (rng.chance(0.5) || remaining - magnitude < 1n);
  if (grow) return size + magnitude;
  return remaining - magnitude >= 1n ? size - magnitude : size;
}
