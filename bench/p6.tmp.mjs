import { openSqliteStore } from '/work/main/dist/src/store/sqlite/store.js';
import { cursorPool, chooseShapes, ORDERS } from '/work/main/dist/bench/shapes.js';
import { orderCursors } from '/work/main/dist/src/api/cursor.js';
import { readOrderFilter } from '/work/main/dist/src/api/params.js';
import { readQuery } from '/work/main/dist/src/api/query.js';
const A = openSqliteStore({ path: '/work/main/bench/data/bench-1m/store/ledger.db', readonly: true });
const B = openSqliteStore({ path: '/tmp/b16/ledger.db', readonly: true });
const shapes = (await chooseShapes(A)).filter(s => s.endpoint === ORDERS && ['no filter', 'party', 'market', 'status (rare)'].includes(s.name));
function time(fn, n0) { const t=performance.now(); let n=0; while (performance.now()-t<2000) { fn(n++); } return (1000*(performance.now()-t)/n); }
for (const shape of shapes) {
  const pool = (await cursorPool(A, shape, 4000)).map(c => orderCursors.decode(c));
  const filter = readOrderFilter(readQuery(`${ORDERS}?${shape.query}`));
  for (const L of [50, 1000]) {
    const f = (s) => (i) => s.listOrdersSync(filter, { newestFirst: true, mode: 'first', limit: L, cursor: pool[i % pool.length] });
    for (const s of [A, B]) for (let i = 0; i < pool.length; i++) f(s)(i);
    const r = [];
    for (let k = 0; k < 2; k++) r.push(time(f(A)).toFixed(0), time(f(B)).toFixed(0));
    console.log(shape.name.padEnd(14), String(L).padStart(5), '4K/16K us:', r.join(' '));
  }
}
