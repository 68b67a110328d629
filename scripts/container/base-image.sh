#!/usr/bin/env bash
# Makes the offline stand-in for `node:20-bookworm-slim`, the Dockerfile's base, on a machine that
# reaches no container registry: a Debian bookworm root file system (debootstrap --variant=minbase,
# from the Debian mirror apt already uses here) with this machine's Node.js (binary, headers, npm)
# laid out as the official image lays it out (/usr/local), a `node` user with uid 1000, and this
# machine's extra CA certificates (the npm registry is reached through TLS interception here) in
# NODE_EXTRA_CA_CERTS. npm_config_nodedir points node-gyp at the headers: native addons compile
# from them, since nothing can be downloaded. `docker import` tags it with the official name, so
# the Dockerfile stays what a user builds against the real image.
#
# Idempotent: an image with that tag made from the same Node.js (label tracepipe.standin.node) is
# kept. The debootstrap tarball is cached in $TRACEPIPE_CONTAINER_CACHE (/var/cache/tracepipe-container).
#
#   scripts/container/base-image.sh
set -euo pipefail

tag=node:20-bookworm-slim
cache=${TRACEPIPE_CONTAINER_CACHE:-/var/cache/tracepipe-container}
node_bin=$(readlink -f "$(command -v node)")
node_version=$(node --version)
node_major=${node_version#v}
node_major=${node_major%%.*}
if [ "$node_major" != 20 ]; then
  echo "base image: this machine's node is $node_version; $tag needs Node.js 20" >&2
  exit 1
fi
node_prefix=$(dirname "$(dirname "$node_bin")") # /usr for /usr/bin/node
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
headers=$node_prefix/include/node
[ -f "$headers/node_api.h" ] || {
  echo "base image: no Node.js headers at $headers" >&2
  exit 1
}
fingerprint="$node_version npm-$(npm --version)"

if [ "$(docker image inspect --format '{{index .Config.Labels "tracepipe.standin.node"}}' "$tag" 2>/dev/null)" = "$fingerprint" ]; then
  echo "base image: $tag (stand-in, $fingerprint) is there"
  exit 0
fi

if ! command -v debootstrap >/dev/null; then
  echo "base image: installing debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# The mirror apt uses here (deb822 sources first, then the one-line format).
mirror=$(sed -n 's/^URIs:[[:space:]]*\(\S*\/debian\)\/\?$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(\S*\/debian\)\/\?[[:space:]]\+bookworm[[:space:]].*/\2/p' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1)
fi
mirror=${mirror:-http://deb.debian.org/debian}

mkdir -p "$cache"
rootfs_tar=$cache/bookworm-minbase.tar
if [ ! -s "$rootfs_tar" ]; then
  echo "base image: debootstrap --variant=minbase bookworm from $mirror"
  work=$(mktemp -d "$cache/debootstrap.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  debootstrap --variant=minbase bookworm "$work" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
    tail -n 20 "$cache/debootstrap.log" >&2
    exit 1
  }
  # As the official slim images: no package lists or caches kept.
  rm -rf "$work"/var/lib/apt/lists/* "$work"/var/cache/apt/*.bin "$work"/var/cache/apt/archives/*.deb
  tar -C "$work" --numeric-owner -cf "$rootfs_tar.partial" .
  mv "$rootfs_tar.partial" "$rootfs_tar"
  rm -rf "$work"
  trap - EXIT
fi

stage=$(mktemp -d "$cache/standin.XXXXXX")
trap 'rm -rf "$stage"' EXIT
tar -C "$stage" -xf "$rootfs_tar"

# apt inside the image uses the same mirror and suites as this machine.
cat >"$stage/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
SOURCES

# Node.js where the official image has it.
install -D -m 0755 "$node_bin" "$stage/usr/local/bin/node"
mkdir -p "$stage/usr/local/include" "$stage/usr/local/lib/node_modules"
cp -a "$headers" "$stage/usr/local/include/node"
cp -a "$npm_dir" "$stage/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$stage/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$stage/usr/local/bin/npx"

# The `node` user and group, uid and gid 1000, as in the official image.
echo 'node:x:1000:' >>"$stage/etc/group"
echo 'node:!::' >>"$stage/etc/gshadow"
echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$stage/etc/passwd"
echo 'node:!:20000:0:99999:7:::' >>"$stage/etc/shadow"
install -d -o 1000 -g 1000 "$stage/home/node"

# This machine's extra CA certificates, in one file for NODE_EXTRA_CA_CERTS.
extra_ca=/usr/local/share/ca-certificates/standin-extra-ca.crt
mkdir -p "$stage/usr/local/share/ca-certificates"
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cat /usr/local/share/ca-certificates/*.crt >"$stage$extra_ca"
else
  : >"$stage$extra_ca"
fi

echo "base image: importing $tag ($fingerprint)"
tar -C "$stage" --numeric-owner -c . | docker import \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change "ENV NODE_EXTRA_CA_CERTS=$extra_ca" \
  --change "ENV npm_config_nodedir=/usr/local" \
  --change "LABEL tracepipe.standin.node=\"$fingerprint\"" \
  --change 'CMD ["node"]' \
  - "$tag" >/dev/null
docker image ls "$tag"
