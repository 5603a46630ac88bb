import { openSqliteStore } from '/work/main/dist/src/store/sqlite/store.js';
import { orderQueries, expandSql } from '/work/main/dist/src/store/page-sql.js';
import { SQLITE } from '/work/main/dist/src/store/sqlite/dialect.js';
import { cursorPool, ORDERS } from '/work/main/dist/bench/shapes.js';
import { orderCursors } from '/work/main/dist/src/api/cursor.js';
import Database from 'better-sqlite3';
const path = '/work/main/bench/data/bench-1m/store/ledger.db';
const s = openSqliteStore({ path, readonly: true });
const shape = { name: 'no filter', endpoint: ORDERS, query: '' };
const pool = (await cursorPool(s, shape, 4000)).map(c => orderCursors.decode(c));
const L = Number(process.env.L ?? 50);
function time(label, fn) { for (let i=0;i<4000;i++) fn(i); const t=performance.now(); let n=0; while (performance.now()-t<3000) { fn(n++); } console.log(label.padEnd(28), (1000*(performance.now()-t)/n).toFixed(1), 'us'); }
const req = (k) => ({ newestFirst: true, mode: 'first', limit: L, cursor: k });
const db = new Database(path, { readonly: true }); db.defaultSafeIntegers(true); db.pragma('cache_size=-8192'); db.pragma('mmap_size=0');
const stats = s.orderStats();
const filter = JSON.parse(process.env.F ?? '{}');
const qs = pool.map(k => orderQueries(SQLITE, filter, req(k), stats));
const full = expandSql(qs[0].rows.sql, SQLITE);
const rows = db.prepare(full).raw(true);
const wrapped = db.prepare(`SELECT json, k1 FROM (${full}) AS page`).raw(true);
const plan = (sql) => db.prepare('EXPLAIN QUERY PLAN ' + sql).all(qs[0].rows.params).map(r => r.detail).join(' | ');
console.log('plain  :', plan(full)); console.log('wrapped:', plan(`SELECT json, k1 FROM (${full}) AS page`));
for (let r = 0; r < 2; r++) {
time('rows stmt', (i) => rows.all(qs[i % qs.length].rows.params));
time('wrapped', (i) => wrapped.all(qs[i % qs.length].rows.params));
}
