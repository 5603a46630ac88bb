/** An ERC20 multisig "signer added" event; the bundle is identified by signatureId. */
export interface SignerAdded {
  signatureId: string;
  validatorId: string;
  /** Unix ns, from the event. */
  timestamp: bigint;
  newSigner: string;
  submitter: string;
  nonce: string;
  epochSeq: bigint;
}

export interface SignerRemoved {
  signatureSubmitters: { signatureId: string; submitter: string }[];
  validatorId: string;
  timestamp: bigint;
  oldSigner: string;
  nonce: string;
  epochSeq: bigint;
}

/** A validator's signature of a resource (e.g. a bundle's signature id). */
export interface NodeSignature {
  id: string;
  sig: Uint8Array;
  kind: number;
}

/** Filters of GET /api/v2/erc20/multisigcontrol/signer/added/bundles. */
export interface BundleFilter {
  /** Lowercase 64-hex validator id. */
  nodeId?: string;
  /** Lowercase Ethereum address (matched case-insensitively). */
  submitter?: string;
  epochSeq?: bigint;
}

/** The position of a bundle in the listing order: (timestamp, signatureId). */
export interface BundleKey {
  timestamp: bigint;
  signatureId: string;
}

/**
 * An Ethereum address as the original answers it: it stores the address's
 * bytes, so it prints "0x" and lower-case hex whatever case the event used.
 */
export function printedAddress(address: string): string {
  const hex = address.startsWith('0x') || address.startsWith('0X') ? address.slice(2) : address;
  return `0x${hex.toLowerCase()}`;
}
