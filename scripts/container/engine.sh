#!/usr/bin/env bash
# Makes sure a Docker engine answers on /var/run/docker.sock: installs Debian's docker.io (and
# docker-compose) when missing, and starts dockerd when none runs (these machines have no systemd to do it).
#
# Storage driver: overlay2 when the kernel mounts overlay on the data root's filesystem (it does on
# the CI machines: ext4 with the overlay module), else vfs, which works anywhere but copies each
# layer in full (slower builds, several times the disk). TRACEPIPE_DOCKER_STORAGE_DRIVER forces one.
# The engine's data (/var/lib/docker: images, build cache, volumes) stays between runs, which is
# what makes the base image and the image's dependency layers cached on the same machine.
#
#   scripts/container/engine.sh          # idempotent; prints the storage driver in use
set -euo pipefail

log=/var/log/tracepipe-dockerd.log
data_root=/var/lib/docker

# docker-compose (Compose v1, Debian's) brings deploy/compose.yaml up in test/container/compose.test.ts.
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  echo "docker engine: installing Debian's ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if docker info >/dev/null 2>&1; then
  echo "docker engine: running ($(docker info --format '{{.ServerVersion}}, storage {{.Driver}}'))"
  exit 0
fi
if ! command -v docker >/dev/null; then
  echo "docker engine: no docker client after installing docker.io" >&2
  exit 1
fi

# overlay2 needs the overlay filesystem and a data root it can stack on (not itself overlay).
supports_overlay() {
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || return 1
  mkdir -p "$data_root"
  [ "$(stat -f -c %T "$data_root")" != overlayfs ] || return 1
  local probe
  probe=$(mktemp -d "$data_root/.overlay-probe.XXXXXX")
  mkdir -p "$probe"/{lower,upper,work,merged}
  local ok=1
  if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
    umount "$probe/merged"
    ok=0
  fi
  rm -rf "$probe"
  return $ok
}

driver=${TRACEPIPE_DOCKER_STORAGE_DRIVER:-}
if [ -z "$driver" ]; then
  if supports_overlay; then driver=overlay2; else driver=vfs; fi
fi

# A stale pid file from an engine that was killed keeps the next one from starting.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
  rm -f /var/run/docker.pid
fi
# containerd comes with docker.io; dockerd starts its own when none runs.
echo "docker engine: starting dockerd (storage driver $driver; log $log)"
setsid dockerd --storage-driver "$driver" --data-root "$data_root" >>"$log" 2>&1 </dev/null &

for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "docker engine: running ($(docker info --format '{{.ServerVersion}}, storage {{.Driver}}'))"
    exit 0
  fi
  sleep 1
done
echo "docker engine: dockerd did not answer within 60 s; the end of $log:" >&2
tail -n 20 "$log" >&2
exit 1
