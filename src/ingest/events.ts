import type { NodeSignature, SignerAdded, SignerRemoved } from '../domain/bundle.js';
import type { Order } from '../domain/order.js';

/** The envelope every BusEvent carries. */
export interface EventHeader {
  /** "<block height>-<sequence in block>" */
  id: string;
  block: string;
  /** BusEventType number. */
  type: number;
  chainId: string;
  /**
   * The transaction's hash (upper-case hex). Encoded by the simulator as a
   * core does; decoding leaves it out, since nothing stored needs it.
   */
  txHash?: string;
}

/** A decoded BusEvent, narrowed to what ledger-query stores. */
export type BusEvent = EventHeader & EventBody;

export type EventBody =
  | { kind: 'beginBlock'; height: bigint; timestamp: bigint; hash: string }
  | { kind: 'endBlock'; height: bigint }
  | { kind: 'timeUpdate'; timestamp: bigint }
  /** encoded: the Order message as the source carried it, when it carried one (protobuf sources). */
  | { kind: 'order'; order: Order; encoded?: Uint8Array }
  | { kind: 'nodeSignature'; nodeSignature: NodeSignature }
  | { kind: 'signerAdded'; signerAdded: SignerAdded }
  | { kind: 'signerRemoved'; signerRemoved: SignerRemoved }
  /** Any other event type: counted and skipped. typeLabel is its name when the source gave one. */
  | { kind: 'other'; typeLabel?: string };
