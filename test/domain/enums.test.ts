import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OrderError, OrderStatus, TimeInForce, enumName, parseEnum } from '../../src/domain/enums.js';

test('enum names and numbers round-trip, and unknown values are refused', () => {
  assert.equal(parseEnum(OrderStatus, 'STATUS_PARKED'), 8);
  assert.equal(parseEnum(OrderStatus, '8'), 8);
  assert.equal(parseEnum(OrderStatus, '9'), undefined);
  assert.equal(parseEnum(OrderStatus, 'STATUS_BOGUS'), undefined);
  assert.equal(parseEnum(TimeInForce, 'TIME_IN_FORCE_FOK'), 4);
  assert.equal(enumName(OrderError, 50), 'ORDER_ERROR_REDUCE_ONLY_ORDER_WOULD_NOT_REDUCE_POSITION');
  assert.equal(parseEnum(OrderError, '38'), undefined, '38 is unused');
  assert.equal(enumName(OrderError, 38), '38');
});
