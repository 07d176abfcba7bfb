#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for intake's tests, on loopback only.
#
#   scripts/postgres-cluster.sh start
#       Creates a cluster in a new folder, starts it on a free 127.0.0.1 port
#       and creates the empty database "intake" (user "intake", trust auth).
#       Prints one line on stdout, the URL: postgres://intake@127.0.0.1:PORT/intake
#       (everything else goes to stderr), so:
#         export INTAKE_TEST_DATABASE_URL=$(scripts/postgres-cluster.sh start)
#   scripts/postgres-cluster.sh stop [DIR_OR_URL | all]
#       Stops a cluster this script started (pg_ctl stop -m immediate) and
#       removes its folder. Without an argument, the last one started; "all",
#       every one in the state file.
#
# INTAKE_PG_OPTIONS adds server settings (e.g. "-c synchronous_commit=off"
# for a test run that does not measure durability).
#
# The state file (INTAKE_PG_STATE, default /var/tmp/intake-pg-clusters.UID)
# has one line per running cluster: its folder, a tab, its URL. It stays,
# empty, when none is left: it is also the lock for concurrent starts and stops.
#
# Without initdb (on PATH or in /usr/lib/postgresql/*/bin) it installs
# Debian's postgresql with apt-get (through sudo when not root). PostgreSQL
# refuses to run as root: as root the cluster is owned and run by the user
# "postgres", so its folder is made under /var/tmp, which that user can reach
# (not under a private mktemp -d folder); otherwise under TMPDIR, run as us.
set -euo pipefail

STATE=${INTAKE_PG_STATE:-/var/tmp/intake-pg-clusters.$(id -u)}
MARKER=.intake-postgres-cluster

say() { echo "postgres-cluster: $*" >&2; }
die() {
  say "$*"
  exit 1
}

# Runs a command as the cluster's owner: "postgres" when we are root, else us.
as_owner() {
  if [ "$(id -u)" -ne 0 ]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    runuser -u postgres -- "$@"
  else
    su postgres -s /bin/bash -c "$(printf '%q ' "$@")"
  fi
}

# The folder holding initdb, pg_ctl and createdb of one version.
find_bindir() {
  local initdb dir
  if initdb=$(command -v initdb 2>/dev/null); then
    dirname "$(readlink -f "$initdb" 2>/dev/null || echo "$initdb")"
    return 0
  fi
  # The newest version installed, as Debian lays them out.
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

install_postgres() {
  command -v apt-get >/dev/null 2>&1 || die "no initdb on PATH or in /usr/lib/postgresql/*/bin, and no apt-get to install it; install PostgreSQL's server binaries"
  local as_root=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "no PostgreSQL server binaries; install postgresql (apt-get install postgresql) as root"
    as_root=sudo
  fi
  say "installing postgresql (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  {
    $as_root apt-get install -y -q postgresql || { $as_root apt-get update -q && $as_root apt-get install -y -q postgresql; }
  } >&2 || die "could not install postgresql"
}

port_in_use() {
  # Something answers on it (bash's /dev/tcp); a race with another start is
  # caught when the server cannot bind, and start then tries another port.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Appends or removes state lines, one writer at a time (a lock on the state
# file itself, which is rewritten in place and so never removed).
with_state_lock() {
  if command -v flock >/dev/null 2>&1; then
    (
      flock 9
      "$@"
    ) 9>>"$STATE"
  else
    "$@"
  fi
}
state_add() { printf '%s\t%s\n' "$1" "$2" >>"$STATE"; }
state_remove() {
  [ -f "$STATE" ] || return 0
  local rest
  rest=$(awk -F '\t' -v dir="$1" '$1 != dir' "$STATE")
  if [ -n "$rest" ]; then printf '%s\n' "$rest" >"$STATE"; else : >"$STATE"; fi
}

abort_start() {
  local dir=$ABORT_DIR
  say "start failed; the server's log ends:"
  tail -n 20 "$dir/log" >&2 2>/dev/null || true
  (stop_dir "$dir") >/dev/null 2>&1 || rm -rf "$dir"
}

start() {
  local bindir
  bindir=$(find_bindir) || true
  if [ -z "$bindir" ]; then
    install_postgres
    bindir=$(find_bindir) || die "postgresql installed, but no initdb on PATH or in /usr/lib/postgresql/*/bin"
  fi
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    die "running as root, and there is no user \"postgres\" to run the cluster as (PostgreSQL refuses root)"
  fi

  local base=${TMPDIR:-/tmp}
  [ "$(id -u)" -eq 0 ] && base=/var/tmp
  local dir
  dir=$(mktemp -d "$base/intake-pg-XXXXXXXX")
  # Until the URL is printed, a failure takes the cluster down with it.
  ABORT_DIR=$dir
  trap abort_start EXIT
  touch "$dir/$MARKER"
  chmod 755 "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
  # The server's children must be able to stand in the current directory.
  cd "$dir"

  say "initdb ($("$bindir/initdb" --version)) in $dir/data"
  as_owner "$bindir/initdb" -D "$dir/data" -A trust -U intake -E UTF8 --no-locale >&2

  local port attempt started=""
  for attempt in $(seq 1 20); do
    port=$((20000 + RANDOM % 12768))
    port_in_use "$port" && continue
    # -k: the unix socket lives in the cluster's own folder, so clusters never share one.
    rm -f "$dir/log"
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/log" \
      -o "-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c max_connections=300 -c fsync=on ${INTAKE_PG_OPTIONS:-}" start >&2; then
      started=1
      break
    fi
    # A port taken between the check and the bind: try another; anything else is fatal.
    grep -q 'could not bind\|Address already in use' "$dir/log" 2>/dev/null || die "pg_ctl start failed (attempt $attempt)"
    say "port $port was taken; trying another"
  done
  [ -n "$started" ] || die "no free port found in 20 attempts"

  "$bindir/createdb" -h 127.0.0.1 -p "$port" -U intake intake >&2

  local url="postgres://intake@127.0.0.1:$port/intake"
  echo "$url" >"$dir/url"
  with_state_lock state_add "$dir" "$url"
  trap - EXIT
  say "running in $dir; stop it with: scripts/postgres-cluster.sh stop $url"
  echo "$url"
}

# Stops the cluster in $1 and removes the folder: only a folder this script made.
stop_dir() {
  local dir=${1%/}
  if [ ! -e "$dir" ]; then
    with_state_lock state_remove "$dir"
    say "$dir is gone already"
    return 0
  fi
  [ -f "$dir/$MARKER" ] || die "$dir is not a cluster made by this script (no $MARKER in it)"
  if [ -f "$dir/data/postmaster.pid" ]; then
    local bindir
    bindir=$(find_bindir) || die "no pg_ctl to stop $dir with"
    if ! (cd "$dir" && as_owner "$bindir/pg_ctl" -D "$dir/data" -w -t 60 -m immediate stop >&2); then
      # Exit status 3: no server running (a stale postmaster.pid), so nothing to stop.
      local status=0
      (cd "$dir" && as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1) || status=$?
      [ "$status" -eq 3 ] || die "pg_ctl stop failed for $dir; left it in place (log: $dir/log)"
    fi
  fi
  rm -rf "$dir"
  with_state_lock state_remove "$dir"
  say "stopped and removed $dir"
}

stop() {
  local target=${1:-}
  if [ -z "$target" ]; then
    [ -s "$STATE" ] || die "no cluster in $STATE; say which: stop DIR_OR_URL"
    target=$(tail -n 1 "$STATE" | cut -f 1)
  elif [ "$target" = all ]; then
    [ -s "$STATE" ] || return 0
    local dirs status=0
    dirs=$(cut -f 1 "$STATE")
    for dir in $dirs; do (stop_dir "$dir") || status=1; done
    return $status
  elif [[ $target == postgres://* || $target == postgresql://* ]]; then
    # By URL: its port names the cluster in the state file.
    local port=${target#*://}
    port=${port#*@}
    port=${port%%/*}
    port=${port##*:}
    local dir
    dir=$([ -f "$STATE" ] && awk -F '\t' -v port="$port" '{ p = $2; sub(/^[^:]*:\/\/[^\/]*:/, "", p); sub(/\/.*/, "", p); if (p == port) print $1 }' "$STATE" | tail -n 1)
    [ -n "$dir" ] || die "no cluster on port $port in $STATE"
    target=$dir
  fi
  stop_dir "$target"
}

case ${1:-} in
start) start ;;
stop) stop "${2:-}" ;;
*)
  echo "usage: $0 start | stop [DIR_OR_URL | all]" >&2
  exit 2
  ;;
esac
