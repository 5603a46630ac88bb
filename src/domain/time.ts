/**
 * Time resolution. The original keeps every time in PostgreSQL, which holds
 * microseconds: it answers, orders and filters on event times truncated to
 * whole microseconds (Go's time.Truncate, which rounds down), so we do too.
 */

const NANOS_PER_MICRO = 1000n;
const INT64_MIN = -(1n << 63n);
/** The lowest whole microsecond an int64 of nanoseconds holds; the rounding of anything below it would not fit. */
const LOWEST_MICRO = INT64_MIN - (INT64_MIN % NANOS_PER_MICRO);

/** Unix ns rounded down to a whole microsecond: 1678444076736102285 -> 1678444076736102000, -1500 -> -2000. */
export function toMicros(ns: bigint): bigint {
  const rest = ns % NANOS_PER_MICRO;
  if (rest === 0n) return ns;
  const floor = ns - (rest < 0n ? rest + NANOS_PER_MICRO : rest);
  return floor < LOWEST_MICRO ? LOWEST_MICRO : floor;
}
