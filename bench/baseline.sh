#!/usr/bin/env bash
# Builds the intake binary of a git revision, for `BENCH_BASELINE=... bun run bench`.
#
#   bench/baseline.sh REV
#
# Checks REV out into a temporary worktree (git worktree add --detach), runs
# `bun install --frozen-lockfile` and `bun run build` there, copies its
# dist/intake to a new folder under TMPDIR (default /tmp) named after the
# commit, removes the worktree (whatever happens) and prints one line on
# stdout: the binary's path (everything else goes to stderr); a file "commit"
# beside it names the commit, for the bench's report. So:
#
#   BENCH_BASELINE=$(bench/baseline.sh c1c3573) bun run bench
#
# The binary is kept: delete its folder when done with it.
set -euo pipefail

say() { echo "baseline: $*" >&2; }

[ $# -eq 1 ] || {
  echo "usage: $0 REV" >&2
  exit 2
}
root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse --verify --quiet "$1^{commit}") || {
  say "$1 is not a commit of $root"
  exit 2
}
short=$(git -C "$root" rev-parse --short "$commit")

base=${TMPDIR:-/tmp}
tree=$(mktemp -d "$base/intake-baseline-tree-$short-XXXXXX")
out=$(mktemp -d "$base/intake-baseline-$short-XXXXXX")
cleanup() {
  git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1 || true
  rm -rf "$tree"
  git -C "$root" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() {
  say "$*"
  rm -rf "$out"
  exit 1
}

say "building $short ($(git -C "$root" log -1 --format=%s "$commit" | cut -c1-80)) in $tree"
# mktemp made the folder; git wants to create it.
rmdir "$tree"
git -C "$root" worktree add --detach "$tree" "$commit" >&2 || fail "git worktree add failed"
(cd "$tree" && bun install --frozen-lockfile) >&2 || fail "bun install --frozen-lockfile failed in $tree"
(cd "$tree" && bun run build) >&2 || fail "bun run build failed in $tree"
[ -x "$tree/dist/intake" ] || fail "the build left no dist/intake"
cp "$tree/dist/intake" "$out/intake"
# What it was built from, for the bench's report.
git -C "$root" log -1 --format='%h %s' "$commit" >"$out/commit"
say "built $out/intake ($(du -h "$out/intake" | cut -f1)); the worktree is removed, the binary kept"
echo "$out/intake"
