#!/usr/bin/env bash
# The save server past one machine, on one machine (loopback): etcd; two PostgreSQL 15 instances
# managed by Patroni, replicating synchronously with `synchronous_mode` on; HAProxy sending each
# database connection to the leader (Patroni's REST health check, `GET /primary`); three
# stasis-server nodes, each reaching the database through its own HAProxy frontend (so one node
# can be cut off from it), behind a front that spreads requests over the nodes (`GET /health`).
# docs/SERVER.md ("More than one machine") draws the same pieces on separate hosts.
#
#   scripts/cluster.sh up [--async]   installs what is missing, starts it all; the last line printed
#                                     is the servers' front URL. --async: replication without a
#                                     synchronous standby (the failover test's negative control)
#   scripts/cluster.sh down           stops it all and removes its folder
#   scripts/cluster.sh status         the PostgreSQL leader's name and data folder, then each piece
#   scripts/cluster.sh url            the front URL;  `scripts/cluster.sh database-url`: the leader's
#   scripts/cluster.sh fault NAME     a fault, for the failover test (stasis-load failover):
#     kill-leader          SIGKILL the leader's Patroni and PostgreSQL: its host is gone
#     kill-leader-postgres SIGKILL the leader's PostgreSQL only (its Patroni restarts it)
#     restart-member NAME  start a dead member's Patroni again (it rejoins as a replica)
#     pause-standby        SIGSTOP the standby's WAL receiver;  resume-standby: SIGCONT
#     drop-standby-stream  SIGKILL the paused receiver: the WAL in flight to it is lost
#     kill-server N        SIGKILL stasis-server node N (0-2);  start-server N: start it again
#     cut-server N         cut node N off the database (its proxy drops and refuses connections)
#     heal-server N        connect it again
#     heal                 undo every fault: members started, standby resumed, nodes started and healed
#
# The folder is $STASIS_CLUSTER_DIR (default /tmp/stasis-cluster); the server binary is
# $STASIS_SERVER (default .build/debug/stasis-server, built when missing). Patroni's timing is its
# default (ttl 30 s, loop_wait 10 s) unless $STASIS_CLUSTER_TTL and $STASIS_CLUSTER_LOOP_WAIT say
# otherwise (docs/SERVER.md: what a shorter ttl buys and costs). Ports: etcd 23790,
# PostgreSQL 55432-55433 (Patroni's REST 18008-18009), the leader's front 55400, the nodes'
# database fronts 55401-55403, the nodes 18081-18083, the servers' front 18080.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(realpath -m "${STASIS_CLUSTER_DIR:-/tmp/stasis-cluster}")"
server="${STASIS_SERVER:-$PWD/.build/debug/stasis-server}"
pg_bin=/usr/lib/postgresql/15/bin
members=(pg0 pg1)
nodes=(0 1 2)
front="http://127.0.0.1:18080"
database_url="postgres://stasis:stasis@127.0.0.1:55400/stasis"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
# PostgreSQL refuses to run as root: its members run as the postgres user Debian's package makes.
# Run from /: the postgres user may not enter the checkout (a clone in /root or a home of mode
# 700), and Patroni's processes change to the directory they were started in.
as_postgres() { (cd / && if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi); }
say() { echo "cluster: $*" >&2; }

install_missing() {
  local packages=(postgresql-15 patroni etcd-server etcd-client haproxy socat curl procps python3) missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Waits until `$@` succeeds, at most $1 seconds (a process we started: nothing to synchronise on but
# its socket, so this polls it).
wait_for() {
  local limit=$1
  shift
  local until=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $until ] && return 1
    sleep 0.2
  done
}

member_index() { case "$1" in pg0) echo 0 ;; pg1) echo 1 ;; *) say "no member $1"; exit 2 ;; esac; }
rest_port() { echo $((18008 + $(member_index "$1"))); }
pg_port() { echo $((55432 + $(member_index "$1"))); }

write_patroni_config() {
  local name=$1 synchronous=$2
  local rest pg
  rest=$(rest_port "$name")
  pg=$(pg_port "$name")
  # Patroni's defaults for the timing (ttl 30 s, loop_wait 10 s, retry_timeout 10 s) unless the
  # environment says otherwise: the failover time docs/RELIABILITY.md reports first is the one a
  # studio gets without tuning. Patroni wants loop_wait + 2 × retry_timeout <= ttl.
  cat >"$dir/$name.yml" <<EOF
scope: stasis
name: $name
log:
  dir: $dir/$name/log
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:23790
bootstrap:
  dcs:
    ttl: ${STASIS_CLUSTER_TTL:-30}
    loop_wait: ${STASIS_CLUSTER_LOOP_WAIT:-10}
    retry_timeout: ${STASIS_CLUSTER_RETRY_TIMEOUT:-10}
    # Any distance: in synchronous mode Patroni promotes only the synchronous standby, which has
    # every acknowledged commit, but Patroni 3.0 would still refuse one more than this behind
    # (the WAL of commits waiting for it); in asynchronous mode (the negative control) a standby
    # any distance behind may be promoted.
    maximum_lag_on_failover: 1099511627776
    synchronous_mode: $synchronous
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: "on"
        max_connections: 200
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:$pg
  connect_address: 127.0.0.1:$pg
  data_dir: $dir/$name/data
  bin_dir: $pg_bin
  pgpass: $dir/$name/pgpass
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: postgres}
  parameters:
    unix_socket_directories: $dir/$name
tags:
  nofailover: false
  noloadbalance: false
EOF
  mkdir -p "$dir/$name/log"
  chown -R postgres:postgres "$dir/$name" "$dir/$name.yml"
}

start_member() {
  local name=$1
  as_postgres bash -c "exec setsid patroni '$dir/$name.yml' >>'$dir/$name/patroni.out' 2>&1 </dev/null & echo \$! >'$dir/$name/patroni.pid'"
}

write_haproxy_config() {
  {
    cat <<EOF
global
  maxconn 4000
  stats socket $dir/haproxy.sock mode 600 level admin
defaults
  mode tcp
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout check 2s
EOF
    # The leader's front, and one per node: each sends a connection to the member whose Patroni
    # answers 200 on /primary, and closes the connections to a member that stops answering it.
    local port=55400
    for front_name in leader node0 node1 node2; do
      cat <<EOF
listen db-$front_name
  bind 127.0.0.1:$port
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
EOF
      for name in "${members[@]}"; do
        echo "  server $name 127.0.0.1:$(pg_port "$name") check port $(rest_port "$name")"
      done
      port=$((port + 1))
    done
    cat <<EOF
listen servers
  bind 127.0.0.1:18080
  mode http
  balance roundrobin
  option httpchk GET /health
  http-check expect status 200
  retry-on conn-failure empty-response 503
  retries 2
  option redispatch
  timeout client 60s
  timeout server 60s
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
EOF
    for n in "${nodes[@]}"; do echo "  server node$n 127.0.0.1:$((18081 + n)) check"; done
  } >"$dir/haproxy.cfg"
}

haproxy_command() { echo "$1" | socat stdio "unix-connect:$dir/haproxy.sock"; }

start_server() {
  local n=$1
  # Revisions are kept (100000 a slot) so the failover test reads every acknowledged one back.
  setsid "$server" serve --port $((18081 + n)) --postgres "postgres://stasis:stasis@127.0.0.1:$((55401 + n))/stasis" \
    --connections 8 --keep-revisions 100000 --max-player-bytes 1000000000000 >>"$dir/node$n.out" 2>&1 </dev/null &
  echo $! >"$dir/node$n.pid"
}

leader() {
  # The member Patroni's REST API names as the leader.
  local name
  for name in "${members[@]}"; do
    if curl -sf --max-time 2 "http://127.0.0.1:$(rest_port "$name")/primary" >/dev/null 2>&1; then
      echo "$name"
      return 0
    fi
  done
  return 1
}

member_role() {
  curl -s --max-time 2 "http://127.0.0.1:$(rest_port "$1")/patroni" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("role","?"), d.get("state","?"))' 2>/dev/null ||
    echo "down"
}

standby() {
  local l
  l=$(leader) || return 1
  for name in "${members[@]}"; do [ "$name" != "$l" ] && echo "$name" && return 0; done
  return 1
}

postmaster_pid() { head -1 "$dir/$1/data/postmaster.pid" 2>/dev/null; }

up() {
  local synchronous=true
  [ "${1:-}" = "--async" ] && synchronous=false
  if [ -f "$dir/haproxy.pid" ] || pgrep -f -- "$dir/" >/dev/null; then
    say "already up in $dir, or a run of it left processes behind: scripts/cluster.sh down first"
    exit 1
  fi
  install_missing
  if [ ! -x "$server" ]; then
    say "building stasis-server"
    swift build --package-path Server --scratch-path "$PWD/.build" --product stasis-server >&2
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  chmod 755 "$dir"
  say "etcd"
  setsid etcd --name e0 --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:23790 \
    --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
    --initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster e0=http://127.0.0.1:23800 \
    >"$dir/etcd.out" 2>&1 </dev/null &
  echo $! >"$dir/etcd.pid"
  wait_for 30 curl -sf http://127.0.0.1:23790/health || { say "etcd did not start"; tail "$dir/etcd.out" >&2; exit 1; }
  for name in "${members[@]}"; do write_patroni_config "$name" "$synchronous"; done
  say "PostgreSQL: ${members[0]} first (it bootstraps), then ${members[1]} (a replica of it)"
  start_member "${members[0]}"
  wait_for 90 curl -sf "http://127.0.0.1:$(rest_port "${members[0]}")/primary" ||
    { say "${members[0]} did not become the leader"; tail -30 "$dir/${members[0]}/patroni.out" >&2; exit 1; }
  start_member "${members[1]}"
  wait_for 90 curl -sf "http://127.0.0.1:$(rest_port "${members[1]}")/replica" ||
    { say "${members[1]} did not become a replica"; tail -30 "$dir/${members[1]}/patroni.out" >&2; exit 1; }
  if [ "$synchronous" = true ]; then
    # Patroni names the synchronous standby within a loop (10 s): until then commits are local only.
    wait_for 60 bash -c "curl -s http://127.0.0.1:$(rest_port "${members[0]}")/cluster | grep -q '\"sync_standby\"'" ||
      { say "no synchronous standby"; exit 1; }
  fi
  as_postgres psql -q -h "$dir/${members[0]}" -p "$(pg_port "${members[0]}")" -U postgres -d postgres \
    -c "CREATE ROLE stasis LOGIN PASSWORD 'stasis'" -c "CREATE DATABASE stasis OWNER stasis" >/dev/null
  say "HAProxy"
  write_haproxy_config
  haproxy -D -f "$dir/haproxy.cfg" -p "$dir/haproxy.pid"
  wait_for 30 bash -c "psql '$database_url' -Atc 'SELECT 1' | grep -q 1" || { say "the leader's front does not answer"; exit 1; }
  # The schema once, before three nodes race to make it (they would agree: the advisory lock).
  say "stasis-server x3"
  for n in "${nodes[@]}"; do start_server "$n"; done
  for n in "${nodes[@]}"; do
    wait_for 60 curl -sf "http://127.0.0.1:$((18081 + n))/health" ||
      { say "node $n did not start"; tail "$dir/node$n.out" >&2; exit 1; }
  done
  wait_for 30 curl -sf "$front/health" || { say "the front does not answer"; exit 1; }
  echo "$synchronous" >"$dir/synchronous"
  echo "$front"
}

kill_pidfile() {
  local file=$1 signal=${2:-TERM}
  [ -f "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  kill -"$signal" -- "-$pid" 2>/dev/null || kill -"$signal" "$pid" 2>/dev/null || true
}

down() {
  [ -d "$dir" ] || return 0
  for n in "${nodes[@]}"; do kill_pidfile "$dir/node$n.pid" KILL; done
  kill_pidfile "$dir/haproxy.pid"
  for name in "${members[@]}"; do
    local pid
    pid=$(postmaster_pid "$name" || true)
    [ -f "$dir/$name/patroni.pid" ] && kill -KILL "$(cat "$dir/$name/patroni.pid")" 2>/dev/null || true
    if [ -n "${pid:-}" ]; then
      pkill -CONT -P "$pid" 2>/dev/null || true  # a paused WAL receiver would hold the shutdown
      kill -QUIT "$pid" 2>/dev/null || true
    fi
  done
  kill_pidfile "$dir/etcd.pid"
  # The nodes went by their pid files; etcd, Patroni, PostgreSQL and HAProxy have the folder on
  # their command lines: none outlives `down`.
  for _ in $(seq 1 50); do
    pgrep -f -- "$dir/" >/dev/null || break
    sleep 0.1
  done
  pkill -KILL -f -- "$dir/" 2>/dev/null || true
  rm -rf "$dir"
  say "down"
}

status() {
  local l
  if l=$(leader); then
    echo "leader: $l $dir/$l/data"
  else
    echo "leader: none"
  fi
  for name in "${members[@]}"; do echo "member $name: $(member_role "$name")"; done
  for n in "${nodes[@]}"; do
    local state=down
    curl -sf --max-time 2 "http://127.0.0.1:$((18081 + n))/health" >/dev/null 2>&1 && state=up
    echo "node $n: $state (127.0.0.1:$((18081 + n)))"
  done
  echo "replication: $([ "$(cat "$dir/synchronous" 2>/dev/null)" = true ] && echo synchronous || echo asynchronous)"
  local sync
  sync=$(curl -s --max-time 2 "http://127.0.0.1:$(rest_port "${l:-${members[0]}}")/cluster" 2>/dev/null |
    python3 -c 'import json,sys; print(" ".join(m["name"] for m in json.load(sys.stdin)["members"] if m.get("role")=="sync_standby"))' 2>/dev/null || true)
  echo "synchronous standby: ${sync:-none}"
  echo "front: $front"
}

walreceiver_pid() {
  local pid receiver
  pid=$(postmaster_pid "$1") || return 1
  receiver=$(pgrep -P "$pid" -f "walreceiver" | head -1)
  [ -n "$receiver" ] && echo "$receiver"
}

fault() {
  local name=${1:?fault NAME}
  shift
  case "$name" in
    kill-leader)
      local l
      l=$(leader) || { say "no leader"; exit 1; }
      local pid
      pid=$(postmaster_pid "$l")
      kill -KILL "$(cat "$dir/$l/patroni.pid")" 2>/dev/null || true
      # The postmaster and every backend: a host that lost its power, not a clean shutdown.
      pkill -KILL -P "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
      echo "$l"
      ;;
    kill-leader-postgres)
      local l
      l=$(leader) || { say "no leader"; exit 1; }
      local pid
      pid=$(postmaster_pid "$l")
      pkill -KILL -P "$pid" 2>/dev/null || true
      kill -KILL "$pid"
      echo "$l"
      ;;
    restart-member)
      local m=${1:?restart-member NAME}
      if [ -f "$dir/$m/patroni.pid" ] && kill -0 "$(cat "$dir/$m/patroni.pid")" 2>/dev/null; then return 0; fi
      start_member "$m"
      ;;
    pause-standby)
      local s pid
      s=$(standby) || { say "no standby"; exit 1; }
      # (A standby between two connections to its primary has no WAL receiver for a moment.)
      wait_for 20 walreceiver_pid "$s" || { say "$s has no WAL receiver"; exit 1; }
      pid=$(walreceiver_pid "$s")
      kill -STOP "$pid"
      echo "$pid" >"$dir/paused.pid"
      echo "$s"
      ;;
    drop-standby-stream)
      # The paused WAL receiver killed: what the primary had sent it and it had not read (the
      # socket's buffers) is lost, as a cut link loses what is in flight. (A child killed makes
      # the standby's postmaster restart its processes; it recovers to the WAL it had, then
      # streams from the current leader.)
      [ -f "$dir/paused.pid" ] && kill -KILL "$(cat "$dir/paused.pid")" 2>/dev/null || true
      rm -f "$dir/paused.pid"
      ;;
    resume-standby)
      [ -f "$dir/paused.pid" ] && kill -CONT "$(cat "$dir/paused.pid")" 2>/dev/null || true
      rm -f "$dir/paused.pid"
      ;;
    kill-server) kill_pidfile "$dir/node${1:?kill-server N}.pid" KILL ;;
    start-server)
      local n=${1:?start-server N}
      if kill -0 "$(cat "$dir/node$n.pid" 2>/dev/null)" 2>/dev/null; then return 0; fi
      start_server "$n"
      wait_for 60 curl -sf "http://127.0.0.1:$((18081 + n))/health" || { say "node $n did not start"; exit 1; }
      ;;
    cut-server)
      local n=${1:?cut-server N}
      for m in "${members[@]}"; do haproxy_command "set server db-node$n/$m state maint" >/dev/null; done
      for m in "${members[@]}"; do haproxy_command "shutdown sessions server db-node$n/$m" >/dev/null; done
      ;;
    heal-server)
      local n=${1:?heal-server N}
      for m in "${members[@]}"; do haproxy_command "set server db-node$n/$m state ready" >/dev/null; done
      ;;
    heal)
      fault resume-standby
      for m in "${members[@]}"; do fault restart-member "$m"; done
      for n in "${nodes[@]}"; do fault heal-server "$n"; done
      for n in "${nodes[@]}"; do fault start-server "$n"; done
      ;;
    *) say "no fault '$name'"; exit 2 ;;
  esac
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  url) echo "$front" ;;
  database-url) echo "$database_url" ;;
  fault) shift; fault "$@" ;;
  *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
