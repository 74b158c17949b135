#!/usr/bin/env bash
# Make sure PostgreSQL, RabbitMQ and Redis answer on 127.0.0.1. Starts any that is
# installed but stopped. Under CI=true an unreachable service is a hard failure.
set -u

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # name port seconds
  local i
  for ((i = 0; i < $3 * 5; i++)); do up "$2" && return 0; sleep 0.2; done
  return 1
}

start_postgres() {
  command -v pg_ctlcluster >/dev/null || return 1
  local v; v=$(ls /etc/postgresql 2>/dev/null | head -n1); [ -n "$v" ] || return 1
  pg_ctlcluster --skip-systemctl-redirect "$v" main start
}
start_redis() {
  command -v redis-server >/dev/null || return 1
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
}
start_rabbitmq() {
  command -v rabbitmq-server >/dev/null || return 1
  rabbitmq-server -detached
}

failed=0
for svc in "postgres 5432 30" "rabbitmq 5672 90" "redis 6379 20"; do
  set -- $svc
  if up "$2"; then echo "services: $1 is up on 127.0.0.1:$2"; continue; fi
  echo "services: $1 is down on 127.0.0.1:$2; starting it"
  "start_$1" >/dev/null 2>&1 || echo "services: could not start $1 (is it installed?)"
  if wait_for "$1" "$2" "$3"; then echo "services: $1 is up"; else
    echo "services: $1 is NOT reachable on 127.0.0.1:$2" >&2; failed=1; fi
done
if [ "$failed" = 1 ] && [ "${CI:-}" = "true" ]; then
  echo "services: CI=true and a required service is unreachable; failing" >&2
  exit 1
fi
exit 0
