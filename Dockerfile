# syntax=docker/dockerfile:1
# tracepipe in a container: by default the trace collector proxy (configs/proxy.yaml), as a sidecar
# next to an instrumented application; `--config .../configs/local.yaml` runs the agent server.
# deploy/compose.yaml and deploy/kubernetes/ show both.
#
#   docker build -t tracepipe .
#   docker run --rm -p 4318:4318 -e SERVICE_API_KEY=... -v tracepipe-data:/var/lib/tracepipe tracepipe
#
# The runtime image holds what `npm pack` ships (dist/, bin/, configs/, docs/, the example graphs)
# installed as a dependency of /app with production dependencies only, at the versions of
# package-lock.json — the same layout test/package.test.ts builds and starts — minus what no
# program reads at run time (scripts/container/prune-runtime.sh). test/container/ runs the built
# image; scripts/container/build.sh builds it where no container registry is reachable.

ARG NODE_VERSION=20

# ---- install manifest: what `npm ci` needs of package.json, and nothing else ----
# The lock's root entry (name, version, dependencies), package.json's `overrides` (npm checks the
# lock against both) and its `allowScripts` (the install scripts `npm rebuild` below may run, and
# those skipped without a warning). The build stage copies this file alone, so its install layers
# depend on the lock and these two fields only, and an edit of package.json's scripts or exports
# reuses them.
FROM node:${NODE_VERSION}-bookworm-slim AS manifest
WORKDIR /manifest
COPY package.json package-lock.json ./
RUN node -e "const fs = require('fs'); \
  const { overrides, allowScripts } = JSON.parse(fs.readFileSync('package.json')); \
  const root = JSON.parse(fs.readFileSync('package-lock.json')).packages['']; \
  fs.writeFileSync('install.json', JSON.stringify({ ...root, overrides, allowScripts }))"

# ---- build: compile TypeScript, pack, install the pack with production dependencies ----
FROM node:${NODE_VERSION}-bookworm-slim AS build
# A toolchain for the native addons (better-sqlite3, zstd-napi), compiled below when no prebuilt
# binary fits; none of it reaches the runtime image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The install's package.json comes from the manifest stage above; `COPY . .` below puts the real
# one in place.
COPY --from=manifest /manifest/install.json ./package.json
COPY package-lock.json ./
# Everything, devDependencies included: tsc builds dist/ when packing. No install scripts here;
# the next step builds the native addons on their own.
RUN npm ci --ignore-scripts --no-audit --no-fund
# The native addons, built (or fetched prebuilt) here: this layer and the one above depend on the
# lock file, the overrides and allowScripts alone, so a rebuild of the image after a change of the sources reuses them.
RUN npm rebuild better-sqlite3 zstd-napi
COPY . .
RUN mkdir -p /tmp/pack && npm pack --pack-destination /tmp/pack
# /app depends on the tarball (kept there, so that an image built FROM this one can `npm install`
# plugins into /app); its lock is package-lock.json's production entries (scripts/app-lock.mjs).
# The packages come from npm's cache (filled by `npm ci` above); the addons' compiled .node files
# are copied from /src rather than built again. Then what no program reads at run time goes
# (scripts/container/prune-runtime.sh: source maps, declarations, test suites, addon sources).
RUN mkdir -p /app && cp /tmp/pack/tracepipe-*.tgz /app/ \
 && node scripts/app-lock.mjs /app /app/tracepipe-*.tgz \
 && cd /app \
 && npm ci --omit=dev --ignore-scripts --offline --no-audit --no-fund \
 && for addon in better-sqlite3 zstd-napi; do \
      mkdir -p node_modules/$addon/build/Release \
      && cp /src/node_modules/$addon/build/Release/*.node node_modules/$addon/build/Release/; \
    done \
 && sh /src/scripts/container/prune-runtime.sh /app/node_modules

# ---- runtime ----
FROM node:${NODE_VERSION}-bookworm-slim
# MALLOC_MMAP_THRESHOLD_: glibc's allocator then serves every block of 64 KiB and more with mmap,
# given back to the system when freed. By default it raises that threshold to the size of each
# large block freed and serves later ones from its heap, whose free space it rarely gives back:
# 10-12 MB more RSS, idle and after a load, for the same CPU
# (bench/pipeline/README.md, "2026-11-24, glibc's mmap threshold").
ENV NODE_ENV=production \
    DATA_DIR=/var/lib/tracepipe \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=4318 \
    MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
COPY --from=build /app /app
# The queue, the receiver's journal and (for the agent server) its SQLite files live here.
RUN mkdir -p /var/lib/tracepipe && chown node:node /var/lib/tracepipe
VOLUME ["/var/lib/tracepipe"]
# Not root: the image's `node` user (uid 1000).
USER node
# OTLP/HTTP and OTLP/gRPC, and the LangSmith SDK's ingest API (proxy: HTTP_PORT, GRPC_PORT,
# LANGSMITH_PORT); the agent server listens on 8123 with configs/local.yaml (set AGENT_API_HOST=0.0.0.0).
EXPOSE 4318 4317 1984 8123
# /live answers 200 while the process runs (/ready is for traffic: 503 while starting or draining).
# The slim image has no curl: node's fetch does it.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HTTP_PORT || 4318}/live`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is the entry point — not npm or npx, which would not pass SIGTERM on — so a stop
# drains receivers and flushes within service.shutdown_timeout_ms (SHUTDOWN_TIMEOUT_MS, 10 s);
# give `docker stop -t` / terminationGracePeriodSeconds more than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/node_modules/tracepipe/bin/tracepipe.js"]
CMD ["--config", "/app/node_modules/tracepipe/configs/proxy.yaml"]
