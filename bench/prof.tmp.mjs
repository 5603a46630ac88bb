import { openSqliteStore } from '/work/main/dist/src/store/sqlite/store.js';
import { cursorPool, casePaths, ORDERS } from '/work/main/dist/bench/shapes.js';
import { wrk } from '/work/main/dist/bench/load.js';
const store = openSqliteStore({ path: '/work/main/bench/data/bench-1m/store/ledger.db', readonly: true });
const shape = { name: 'no filter', endpoint: ORDERS, query: '' };
const pool = await cursorPool(store, shape, 4000);
const paths = casePaths({ shape, newestFirst: true, backward: false, pageSize: Number(process.env.SIZE ?? 50), cursors: 'wide', gzip: false }, pool);
const origin = process.argv[2];
for (let i = 0; i < Number(process.env.ROUNDS ?? 1); i++) {
  const m = await wrk(origin, paths, { connections: 16, seconds: Number(process.env.SECS ?? 8), threads: 1, gzip: false });
  console.log(JSON.stringify(m));
}
