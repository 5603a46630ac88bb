/**
 * A history row keeps its Order message as the network encoded it, less the
 * bytes the row holds elsewhere. The network writes fields in number order,
 * so a message begins with its id, market and party (fields 1, 2 and 3,
 * each a 64-character hex string): 198 of a message's ~256 bytes, three
 * quarters of the history table. The row keys the id's bytes already, and
 * numbers the market and party as current rows do (the `markets` and
 * `parties` tables), so those bytes are left out and put back exactly when
 * the message is read.
 *
 * Bytes are left out only when putting them back gives the same bytes: each
 * id as a single length byte and the lower-case text the store keeps.
 * Anything else (an empty id the network omits, upper case, a field out of
 * order) keeps its message whole, and its row no market or party number.
 * Written by hand: this is a byte-exact prefix test, not a protobuf decode.
 */
const ID_TAG = 0x0a;
const MARKET_TAG = 0x12;
const PARTY_TAG = 0x1a;
/** Longer fields take a two-byte length; ids are 64 characters. */
const MAX_LENGTH = 127;

/** The ids of an order as the store keeps them: the id as lower-case hex, market and party in lower case. */
export interface OrderIds {
  id: string;
  market: string;
  party: string;
}

/** Where `text` (ASCII, 1 to 127 characters) is field `tag` at `at` in `message`: the offset after it, else -1. */
function fieldEnd(message: Uint8Array, at: number, tag: number, text: string): number {
  const length = text.length;
  if (length === 0 || length > MAX_LENGTH) return -1;
  if (message[at] !== tag || message[at + 1] !== length || at + 2 + length > message.length) return -1;
  for (let i = 0; i < length; i++) {
    if (message[at + 2 + i] !== text.charCodeAt(i)) return -1;
  }
  return at + 2 + length;
}

/**
 * How many leading bytes of `message` are exactly what idPrefix(ids) writes:
 * the bytes a history row may leave out; 0 if it must keep the message whole.
 */
export function leadingIdBytes(message: Uint8Array, { id, market, party }: OrderIds): number {
  const afterId = fieldEnd(message, 0, ID_TAG, id);
  const afterMarket = afterId < 0 ? -1 : fieldEnd(message, afterId, MARKET_TAG, market);
  const afterParty = afterMarket < 0 ? -1 : fieldEnd(message, afterMarket, PARTY_TAG, party);
  return Math.max(afterParty, 0);
}

/** Fields 1, 2 and 3 of an Order message holding these ids. Only for ids leadingIdBytes() accepts. */
function idPrefix({ id, market, party }: OrderIds): Buffer {
  const field = (tag: number, text: string) => Buffer.concat([Buffer.of(tag, text.length), Buffer.from(text, 'latin1')]);
  return Buffer.concat([field(ID_TAG, id), field(MARKET_TAG, market), field(PARTY_TAG, party)]);
}

/**
 * The message a history row stands for: `stored` as it is when the row has
 * no market (the message was kept whole), else with its ids put back.
 */
export function historyMessage(stored: Uint8Array, ids: OrderIds | undefined): Buffer {
  if (ids === undefined) return Buffer.from(stored);
  return Buffer.concat([idPrefix(ids), stored]);
}
