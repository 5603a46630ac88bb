export {
  simulateEvents,
  DEFAULT_BLOCK_INTERVAL_NS,
  DEFAULT_CHAIN_ID,
  DEFAULT_ORDERS_PER_BLOCK,
  DEFAULT_START_TIME,
  type SimulateOptions,
  type SimulationSummary,
} from './simulate.js';
export { writeEventFile } from './write.js';
