/** What a copy's table checks (./table-hash.ts) and their hashing thread (./hash-thread.ts) say to each other. */

export type HashRequest =
  | { kind: 'chunk'; table: number; ordered: boolean; chunk: ArrayBuffer; bytes: number; ends: ArrayBuffer; rows: number }
  | { kind: 'finish'; table: number; ordered: boolean };

export type HashReply =
  | { kind: 'hashed'; table: number }
  | { kind: 'finished'; table: number; rows: number; hash: string };
