/** What `ledger-query COMMAND --help` says of each command, before its options. */
import { optionsHelp } from '../config/help.js';
import type { Command } from '../config/setting.js';

export const ABOUT: Record<Command, string> = {
  serve: `ledger-query serve [--port N] [--host H] [STORE] [--workers N] [--source SPEC [--follow] [--allow-gaps] [--accept-unverified] | --no-ingest]
  Serves the REST API (data node API v0.73 paths) over the store and, with
  --source, ingests live on its ingest thread while serving. Without --no-ingest
  it creates or migrates the store first; an embedded store is created only
  with a --source (a folder without one is refused, naming it). With
  --database-url, several instances may share one database: of those given a
  --source, one ingests (the writer) and the others wait as standbys, serving
  queries, until it goes. Role (writer, standby, reader) and ingestion
  progress: GET /api/v2/ingest/status; health: GET /health; readiness for a
  load balancer: GET /ready. Limits apply per HTTP process (README "Limits").
`,
  ingest: `ledger-query ingest FILE|SPEC... [STORE] [--allow-gaps] [--accept-unverified]
  Stores the blocks of framed event files (uint32 size | uint64 seq | BusEvent),
  plain or gzip-compressed, regular files, pipes or FIFOs (e.g. <(gunzip -c f.gz)),
  or of any --source SPEC of serve (e.g. ndjson://events.ndjson, - for NDJSON on
  stdin). Blocks already stored are skipped, so re-running is harmless; a height
  seen again with another hash is skipped with a warning. Blocks seen again
  with the stored hash but other events are named, nothing more is written,
  and it exits 65 (README: "Rebuilding a store"). A corrupt record stops
  with its file, byte offset and block; a plain file that ends inside a block
  stores every whole block and names the incomplete one (exit 0). Nothing of an
  incomplete block is stored.
  A gzip file is checked before anything of it is stored: a member whose CRC-32
  or length does not match stores nothing of itself, and ingest exits 1 naming
  it (the members before it are stored); so does a gzip file cut short inside a
  member, unless --accept-unverified. A source with no whole event (an empty
  file) exits 1; a directory or other non-file exits 2. Stopped by Ctrl-C (or
  SIGTERM), it stores the blocks it has read, says up to which block the store
  holds, and exits 130: run it again to continue.
`,
  copy: `ledger-query copy --from STORE --to STORE
  Copies a store into a new one, in any direction: a folder (the embedded
  store) or a postgres:// URL each. The copy holds one block, the source's last
  when it starts, read from a snapshot while the source goes on serving and
  ingesting; it says which. Every table comes along, and each is checked
  (row count, and the sum of its rows' hashes) before the target is
  called whole; a difference exits 65 naming the table. The target must be
  absent or empty; until the copy is checked it is marked incomplete, and
  every command refuses it (exit 66), so a copy cut short (Ctrl-C: exit 130,
  kill -9, a full disk, a lost connection) never serves part of the data: run
  the same command again, which starts over. serve --source on the copy goes
  on from the next block.
`,
  simulate: `ledger-query simulate --out FILE [--blocks N] [--seed S] [--orders-per-block N]
  Writes a deterministic synthetic network's event file in the core's framing.
`,
  demo: `ledger-query demo [--port N] [--host H] [STORE] [--workers N] [--blocks N] [--seed S]
  Simulates a network (once), ingests it and serves it, printing example queries.
`,
};

/** A command's help: what it does, then every option it takes. */
export const helpOf = (command: Command): string => `${ABOUT[command]}\n${optionsHelp(command)}`;

