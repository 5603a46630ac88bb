import Database from 'better-sqlite3';
const db = new Database('/work/main/bench/data/bench-1m/store/ledger.db', { readonly: true }); db.defaultSafeIntegers(true); db.pragma('cache_size=-8192');
const ks = db.prepare('SELECT created_at, id_key FROM orders_current INDEXED BY orders_by_time ORDER BY created_at DESC, id_key DESC LIMIT 1 OFFSET ?').raw(true);
const keys = []; for (let i=0;i<300;i++) keys.push(ks.get(i*2000+1000));
function time(label, sql) { const st = db.prepare(sql).raw(true); for (let i=0;i<50;i++) st.all(...keys[i%300], 1000); const t=performance.now(); let n=0; while (performance.now()-t<2000) { st.all(...keys[n%300], 1000); n++; } console.log(label.padEnd(30), ((performance.now()-t)/n).toFixed(3), 'ms'); }
const from = `FROM orders_current AS o INDEXED BY orders_by_time JOIN markets AS m ON m.no = o.market_no JOIN parties AS p ON p.no = o.party_no WHERE (o.created_at, o.id_key) < (?, ?) ORDER BY o.created_at DESC, o.id_key DESC LIMIT ?`;
const w = (e) => `SELECT sum(length(x)) FROM (SELECT ${e} AS x ${from})`;
const { orderJsonSql } = await import('/work/main/dist/src/store/node-json.js');
const { SQLITE } = await import('/work/main/dist/src/store/sqlite/dialect.js');
const j = orderJsonSql(SQLITE, 'o', 'm', 'p');
const variants = {
  'full': j,
  'ids unquoted': j.replace('json_quote(m.id)', "'\"'||m.id||'\"'").replace('json_quote(p.id)', "'\"'||p.id||'\"'"),
  'no json_quote at all': j.replaceAll(/json_quote\(([^)]*)\)/g, '$1'),
  'no CASE enums': j.replace(/\(CASE o\.(side|time_in_force|type|status) WHEN[^]*?END\)/g, 'o.$1'),
  'no hex id': j.replace('lower(hex(o.id_bytes))', "'x'"),
  'hex id no lower': j.replace('lower(hex(o.id_bytes))', 'hex(o.id_bytes)'),
  'only row fetch': 'o.reference || m.id || p.id',
};
for (let r = 0; r < 2; r++) for (const [k, v] of Object.entries(variants)) time(k, w(v));
