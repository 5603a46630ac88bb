/** BusEventType numbers of the events ledger-query reads (docs/compatibility.md, section 9.4). */
export const BusEventType = {
  TIME_UPDATE: 2,
  ORDER: 5,
  NODE_SIGNATURE: 13,
  ERC20_MULTI_SIG_SIGNER_ADDED: 44,
  ERC20_MULTI_SIG_SIGNER_REMOVED: 45,
  BEGIN_BLOCK: 49,
  END_BLOCK: 50,
} as const;
