# Production image: compiled JavaScript (no TypeScript loader), production dependencies only,
# run as the unprivileged `node` user. The store lives in /app/data: mount a volume there.
#   docker build -t stock-ratings .
#   docker run -p 8080:8080 -v store:/app/data stock-ratings
# compose.yaml runs it with Redis and pipeline workers.

FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here because `prepare` (the build) needs the sources copied below; the
# native packages this project uses ship prebuilt binaries in their own optional packages.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api api
COPY jobs jobs
COPY pipeline pipeline
COPY data/generate.ts data/generate.ts
COPY data/generator data/generator
COPY web web
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-slim
ENV NODE_ENV=production PORT=8080 DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
# `npm start`'s pre-script (a no-op here: the image has no TypeScript sources to be newer than dist/)
COPY scripts scripts
# The store (and the generated sample in it, /app/data/sample) must be writable by the runtime user; a named
# volume mounted here takes this ownership the first time.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node directly (not npm) so SIGTERM reaches the server, which drains and exits 0; the node flags are
# package.json's `start` (docs/operators/deployment.md, "Node flags", says why).
CMD ["node", "--initial-old-space-size=128", "dist/jobs/host/start.js"]
