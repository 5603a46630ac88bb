/**
 * The OpenAPI document's examples (src/api/openapi/examples.ts, generated)
 * are what the real recording gives: made again here, they must be equal.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ANSWER_EXAMPLES, ID_EXAMPLES, REFUSAL_EXAMPLES } from '../../src/api/openapi/examples.js';
import { EXAMPLES_FILE, examplesSource, makeExamples } from '../support/openapi-examples.js';
import { REAL, realRecording } from '../support/real-recording.js';

test('the examples are what the real recording gives today (else: npm run openapi:examples)', async (t) => {
  const recording = realRecording(t);
  if (recording === undefined) return;
  const made = await makeExamples(recording);
  assert.deepEqual({ answers: ANSWER_EXAMPLES, refusals: REFUSAL_EXAMPLES, ids: ID_EXAMPLES }, made);
  // The file is the generator's text, byte for byte: nothing was edited by hand.
  assert.equal(readFileSync(EXAMPLES_FILE, 'utf8'), examplesSource(made));
  // And they are the recording's: its last block, and the market the original lists.
  assert.equal(made.answers.listOrders!.headers['x-block-height'], String(REAL.lastHeight));
  assert.equal(made.ids.marketId, REAL.market);
});
