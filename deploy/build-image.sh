#!/usr/bin/env bash
# Builds the jitoutbox image (the Dockerfile at the repository root) and
# checks it: both binaries start in it (-h), and it runs as a non-root user.
# Without a working container runtime (`docker info` fails: no client, no
# daemon, no permission) it prints "skipped: no container runtime" and
# exits 0, so .ci/run can call it on any machine.
#
#   deploy/build-image.sh                  # docker, image jitoutbox:dev
#   CONTAINER_RUNTIME=podman IMAGE=registry.example/jitoutbox:1.2 deploy/build-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runtime="${CONTAINER_RUNTIME:-docker}"
image="${IMAGE:-jitoutbox:dev}"

if ! command -v "$runtime" >/dev/null 2>&1 || ! "$runtime" info >/dev/null 2>&1; then
	echo "deploy/build-image.sh: skipped: no container runtime ('$runtime info' fails)"
	exit 0
fi

echo "== building $image with $runtime"
"$runtime" build -t "$image" .

fail() {
	echo "FAIL: deploy/build-image.sh: $*" >&2
	exit 1
}

echo "== jitoutbox-relay -h in $image"
help=$("$runtime" run --rm "$image" -h 2>&1) || fail "jitoutbox-relay -h exited non-zero:
$help"
grep -q -- '-metrics-addr' <<<"$help" || fail "jitoutbox-relay -h does not list -metrics-addr:
$help"

echo "== outboxctl -h in $image"
help=$("$runtime" run --rm --entrypoint /usr/local/bin/outboxctl "$image" -h 2>&1) || true
grep -qi 'usage' <<<"$help" || fail "outboxctl -h printed no usage:
$help"

user=$("$runtime" image inspect -f '{{.Config.User}}' "$image")
case "$user" in
"" | root | 0 | 0:*) fail "the image runs as '$user', want a non-root user" ;;
esac
echo "deploy/build-image.sh: OK ($image runs as $user)"
