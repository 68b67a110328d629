#!/usr/bin/env bash
# Builds the tracepipe image from this checkout: a running Docker engine (engine.sh), the offline
# stand-in for the base image (base-image.sh), then the Dockerfile with the classic builder
# (DOCKER_BUILDKIT=0: BuildKit would pull a frontend image for the `# syntax=` line) on the host's
# network (the build's npm reaches the registry through this machine's own network settings).
#
# The build's first layers (the toolchain, `npm ci`, the native addons) depend on the lock file
# alone and stay in the engine's cache: after the first build on a machine, a build of changed
# sources takes about a minute; the first takes several (the addons compile from source).
#
#   scripts/container/build.sh [tag]      # tag: $TRACEPIPE_IMAGE or tracepipe:local
set -euo pipefail
cd "$(dirname "$0")/../.."
tag=${1:-${TRACEPIPE_IMAGE:-tracepipe:local}}

scripts/container/engine.sh
scripts/container/base-image.sh

started=$(date +%s)
log=${TMPDIR:-/tmp}/tracepipe-image-build.log
build() {
  DOCKER_BUILDKIT=0 docker build --network host "$@" . >>"$log" 2>&1 || {
    tail -n 40 "$log" >&2
    echo "image: the build failed (whole log: $log)" >&2
    exit 1
  }
}
: >"$log"
# The build stage gets a tag of its own: the classic builder's cache is its images, and an untagged
# build stage would be pruned below together with its `npm ci` and addon layers.
echo "image: building the build stage (tracepipe:build-cache)"
build --target build --tag tracepipe:build-cache
echo "image: building $tag"
build --tag "$tag" --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)"
base_size=$(docker image inspect --format '{{.Size}}' node:20-bookworm-slim)
size=$(docker image inspect --format '{{.Size}}' "$tag")
echo "image: $tag built in $(($(date +%s) - started)) s; $((size / 1000000)) MB, of which the app adds $(((size - base_size) / 1000000)) MB to its base"
# The images of earlier builds that no tag names any more (the layers the cache still needs are
# parents of the tagged images, and stay).
docker image prune --force >/dev/null
