import type { NodeSignature, SignerAdded, SignerRemoved } from './bundle.js';
import type { Order } from './order.js';

/**
 * Everything one block of the chain contributed, in event order. A block is
 * stored atomically; its time is the time of every row written in it.
 */
export interface Block {
  height: bigint;
  /** Unix ns, from BeginBlock. */
  time: bigint;
  hash: string;
  chainId: string;
  orders: Order[];
  /**
   * The protobuf Order message of each of `orders`, at the same index: the
   * order history keeps every state as the network encoded it.
   */
  orderMessages: Uint8Array[];
  nodeSignatures: NodeSignature[];
  signersAdded: SignerAdded[];
  signersRemoved: SignerRemoved[];
}

export function emptyBlock(height: bigint, time: bigint, hash: string, chainId: string): Block {
  return { height, time, hash, chainId, orders: [], orderMessages: [], nodeSignatures: [], signersAdded: [], signersRemoved: [] };
}
