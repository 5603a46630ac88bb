/** GET /health: the service answers, and how far its store has got. */
import type { FastifyInstance } from 'fastify';
import type { QueryStore } from '../store/store.js';

export const HEALTH_PATH = '/health';

export async function healthRoute(app: FastifyInstance, { store }: { store: QueryStore }): Promise<void> {
  app.get(HEALTH_PATH, async (_request, reply) => {
    const block = await store.lastBlock();
    const lastBlock = block && {
      height: String(block.height),
      time: String(block.time),
      chainId: block.chainId,
    };
    return reply.type('application/json').send(JSON.stringify({ status: 'ok', lastBlock: lastBlock ?? null }));
  });
}
