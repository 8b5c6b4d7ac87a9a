# example-conformance as an image: the harness (entrypoint) and the reference server (`serve`) in one. The command
# is on PATH too (`example-conformance`), for a CI job that runs in the image with its entrypoint set aside.
#   docker build -t example-conformance .
#   docker run --rm --network host example-conformance check --grpc 127.0.0.1:50051
#   docker run --rm -p 127.0.0.1:50051:50051 -p 127.0.0.1:8080:8080 -v messages:/data example-conformance serve --host 0.0.0.0 --data-dir /data
#   (or --store postgres://... for replicas sharing a PostgreSQL server, or --store memory: to keep nothing)
# node is process 1 here, as in every container: the data directory is leased, not locked by a PID, so a second
# container on the same volume refuses (exit 75), and one started after a killed one waits up to 10 s for its
# lease to lapse. A stop (SIGTERM) gives the lease back at once. Exit 65, 74, 77: the directory is damaged, its
# disk full, or not writable by the node user (chown the volume to uid 1000); see "The data directory" in docs/reference-server.md.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY proto/plugin ./proto/plugin
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/bin ./bin
COPY --from=build --chown=node:node /app/proto ./proto
COPY --from=build --chown=node:node /app/fixtures/golden ./fixtures/golden
COPY --from=build --chown=node:node /app/fixtures/contracts ./fixtures/contracts
# serve's embedded store keeps its data here when given --data-dir /data; /app itself is not writable.
RUN mkdir -p /data && chown node:node /data && ln -s /app/bin/example-conformance.js /usr/local/bin/example-conformance
VOLUME /data
USER node
EXPOSE 50051 8080
ENTRYPOINT ["node", "/app/bin/example-conformance.js"]
CMD ["check"]
