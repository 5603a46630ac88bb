# syntax=docker/dockerfile:1
# ledger-query in a container: README "Docker". Two stages: the first
# compiles the TypeScript and the embedded SQLite driver (with the tools
# that needs), the second holds only what runs: node, the production
# dependencies, dist/src and the protobuf schema, run as the unprivileged
# user `node`.

FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY proto ./proto
COPY src ./src
# npm ci builds better-sqlite3 and, through the prepare script, dist/; then
# the development dependencies (the compiler, the test servers) go.
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    LEDGER_QUERY_DATA_DIR=/data \
    LEDGER_QUERY_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/proto ./proto
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
# The API; a socket:// source listens where --source says (3005 by convention).
EXPOSE 3008 3005
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.LEDGER_QUERY_PORT || 3008) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
ENTRYPOINT ["node", "/app/dist/src/cli.js"]
CMD ["serve"]
