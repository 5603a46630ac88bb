/**
 * The digest of a block's content: what its events say, not the bytes they
 * came in, so that the same block read from an event file (protobuf), NDJSON
 * or the socket has the same digest. Each stored block keeps it; a block read
 * again with the same height and hash but another digest is not the block
 * the store holds (src/ingest/ingester.ts).
 *
 * The digest is SHA-256 (node:crypto) of a canonical text of the decoded
 * block: SHA-256 because a digest only helps if a changed block cannot
 * keep it, which rules out checksums and broken hashes (MD5, SHA-1), and
 * node:crypto computes it natively. It costs ingestion ~2 us per order
 * state, on the thread that reads the source (BENCHMARKS.md, "Block
 * digests"). The text is frozen once released, like a released migration:
 * changing it would make every stored block's digest differ from a good
 * source's (test/domain/block-digest.test.ts pins it).
 */
import { createHash } from 'node:crypto';
import type { Block } from './block.js';
import type { Order } from './order.js';

/**
 * The canonical text is a sequence of fields in a fixed order, each ending in
 * ",": integers (64-bit ones too) in decimal, booleans as 0 or 1, a field the
 * event left out as "-", strings as their length, ":" and the string, bytes
 * as their hex. Lists start with their length. Strings are hashed as UTF-8,
 * which is how the store keeps them. Written here rather than taken from a
 * canonical JSON library (RFC 8785): the text must stay the same across
 * library upgrades, and such a library would still need each 64-bit value
 * turned into text and each absent field spelled out first.
 */
class CanonicalText {
  private text = '';

  int(v: number | bigint): this {
    this.text += `${v},`;
    return this;
  }

  bool(v: boolean): this {
    this.text += v ? '1,' : '0,';
    return this;
  }

  str(v: string): this {
    this.text += `${v.length}:${v},`;
    return this;
  }

  bytes(v: Uint8Array): this {
    this.text += `${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')},`;
    return this;
  }

  absent(): this {
    this.text += '-,';
    return this;
  }

  /** A list: its length, then each item as `item` writes it. */
  list<T>(items: readonly T[], item: (t: T) => void): this {
    this.int(items.length);
    for (const t of items) item(t);
    return this;
  }

  toString(): string {
    return this.text;
  }
}

/** Every field of an order state, in the Order message's declaration order. */
function orderText(t: CanonicalText, o: Order): void {
  t.str(o.id).str(o.marketId).str(o.partyId).int(o.side).str(o.price).int(o.size).int(o.remaining)
    .int(o.timeInForce).int(o.type).int(o.createdAt).int(o.status).int(o.expiresAt).str(o.reference);
  if (o.reason === undefined) t.absent();
  else t.int(o.reason);
  t.int(o.updatedAt).int(o.version).int(o.batchId);
  if (o.peggedOrder === undefined) t.absent();
  else t.int(o.peggedOrder.reference).str(o.peggedOrder.offset);
  t.str(o.liquidityProvisionId).bool(o.postOnly).bool(o.reduceOnly);
  if (o.icebergOrder === undefined) t.absent();
  else t.int(o.icebergOrder.peakSize).int(o.icebergOrder.minimumVisibleSize).int(o.icebergOrder.reservedRemaining);
}

/**
 * The canonical text of a block: a version tag, its height, time and chain
 * id, then each kind of event it holds in the order they came. The hash is
 * left out: ingestion compares it on its own (case aside), and compares
 * digests only of blocks whose hashes agree. So are the Order messages'
 * bytes: NDJSON carries none, and a message re-encoded holds the same fields.
 */
export function canonicalBlockText(block: Block): string {
  const t = new CanonicalText();
  t.str('lq-block/1').int(block.height).int(block.time).str(block.chainId);
  t.list(block.orders, (o) => orderText(t, o));
  t.list(block.nodeSignatures, (s) => t.str(s.id).bytes(s.sig).int(s.kind));
  t.list(block.signersAdded, (a) => {
    t.str(a.signatureId).str(a.validatorId).int(a.timestamp).str(a.newSigner).str(a.submitter).str(a.nonce).int(a.epochSeq);
  });
  t.list(block.signersRemoved, (r) => {
    t.list(r.signatureSubmitters, (s) => t.str(s.signatureId).str(s.submitter));
    t.str(r.validatorId).int(r.timestamp).str(r.oldSigner).str(r.nonce).int(r.epochSeq);
  });
  return t.toString();
}

/** The block's digest: SHA-256 of its canonical text, as 64 lower-case hex digits. */
export function blockDigest(block: Block): string {
  return createHash('sha256').update(canonicalBlockText(block), 'utf8').digest('hex');
}
