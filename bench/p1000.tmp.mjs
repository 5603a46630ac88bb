import { openSqliteStore } from '/work/main/dist/src/store/sqlite/store.js';
import { orderQueries } from '/work/main/dist/src/store/page-sql.js';
import { connectionJson } from '/work/main/dist/src/api/envelope.js';
import { orderCursors } from '/work/main/dist/src/api/cursor.js';
import Database from 'better-sqlite3';
const s = openSqliteStore({ path: '/work/main/bench/data/bench-1m/store/ledger.db', readonly: true });
// collect 200 cursors from a walk
let keys = []; let page = { newestFirst: true, mode: 'first', limit: 1000 };
let p = s.listOrdersSync({}, { newestFirst: true, mode: 'first', limit: 1000 });
for (let i = 0; i < 300; i++) { keys.push(p.rows[500].key); p = s.listOrdersSync({}, { newestFirst: true, mode: 'first', limit: 1000, cursor: p.rows[999].key }); }
function time(label, fn) { for (let i=0;i<50;i++) fn(i); const t=performance.now(); let n=0; while (performance.now()-t<3000) { fn(n++); } console.log(label, ((performance.now()-t)/n).toFixed(3), 'ms'); }
time('listOrders 1000', (i) => s.listOrdersSync({}, { newestFirst: true, mode: 'first', limit: 1000, cursor: keys[i%keys.length] }));
const pages = keys.map(k => s.listOrdersSync({}, { newestFirst: true, mode: 'first', limit: 1000, cursor: k }));
time('envelope 1000', (i) => connectionJson('orders', pages[i%pages.length], orderCursors));
const db = new Database('/work/main/bench/data/bench-1m/store/ledger.db', { readonly: true }); db.defaultSafeIntegers(true); db.pragma('cache_size=-8192');
const q = orderQueries((await import('/work/main/dist/src/store/sqlite/dialect.js')).SQLITE, {}, { newestFirst: true, mode: 'first', limit: 1000, cursor: keys[0] }, s.orderStats());
console.log(q.rows.sql.slice(0, 3000));
const { expandSql } = await import('/work/main/dist/src/store/page-sql.js');
const { SQLITE } = await import('/work/main/dist/src/store/sqlite/dialect.js');
const full = expandSql(q.rows.sql, SQLITE);
const params = (k) => orderQueries(SQLITE, {}, { newestFirst: true, mode: 'first', limit: 1000, cursor: k }, s.orderStats()).rows.params;
const ps = keys.map(params);
const st = db.prepare(full).raw(true);
time('stmt all (json)', (i) => st.all(ps[i%ps.length]));
const keysOnly = db.prepare(full.replace(/SELECT .* AS json,/s, 'SELECT 1 AS json,')).raw(true);
time('stmt keys only', (i) => keysOnly.all(ps[i%ps.length]));
const agg = db.prepare(`SELECT group_concat(json, ',') FROM (${full})`).raw(true);
time('group_concat json', (i) => agg.all(ps[i%ps.length]));
const cnt = db.prepare(`SELECT count(*) FROM (${full})`).raw(true);
time('count over json', (i) => cnt.all(ps[i%ps.length]));
const cntk = db.prepare(`SELECT sum(length(k2)) FROM (${full.replace(/SELECT .* AS json,/s, 'SELECT 1 AS json,')})`).raw(true);
time('count keys only', (i) => cntk.all(ps[i%ps.length]));
