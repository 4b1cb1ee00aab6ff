#!/usr/bin/env bash
# Proves README's two commands on a fresh Debian 12 machine: builds a minimal Debian 12 root
# (debootstrap --variant=minbase bookworm), copies a clean export of this repository's HEAD into
# it, and there, as a newcomer would, runs
#   1. installer/bootstrap.sh, then build/bin/workbench --smoke under QT_QPA_PLATFORM=offscreen
#      and under xvfb-run with the variable unset (X11);
#   2. installer/bootstrap.sh && ctest --test-dir build --output-on-failure;
# then a 60-second run of the model-loader fuzz target (tests/fuzz/run_model_load_fuzz.sh).
# WB_EXTRA_MODELS (e.g. gemma3) reaches the root's set-up. It prints each stage's duration and, on failure, the stage and its first failing line.
#
#   installer/test_fresh_machine.sh            (as root; the root goes in build/fresh-root)
#   WB_FRESH_ROOT=DIR   another folder for the root (it is deleted and made anew)
#   WB_FRESH_KEEP=1     keep the root after a pass too (a failed run always keeps it: chroot DIR)
#
# Budget: the whole run must end within 40 minutes (2,400 s) on 2 cores; it fails past that.
# The one host-specific step: the root gets this host's DNS resolver, extra CA certificates and
# pip configuration (this machine reaches the registries through a TLS-inspecting gateway); a
# real user's machine needs none of it. If the Debian mirror or PyPI cannot be reached, it fails.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FRESH="${WB_FRESH_ROOT:-$REPO/build/fresh-root}"
MIRROR="http://deb.debian.org/debian"
BUDGET_S=2400
LOGS="$(mktemp -d)"
HOME_IN_ROOT=/root/inference-workbench   # where the newcomer's checkout lives inside the root
START=$(date +%s)
SUMMARY=()

die() { echo "test_fresh_machine: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and chroot need it)"

mounted_under() { findmnt -rn -o TARGET | grep -F "$FRESH/" || true; }

remove_root() {
  [ -d "$FRESH" ] || return 0
  # Every mount is made in a private namespace that dies with its process, so nothing should be
  # mounted here; if something is, deleting would reach into the host's /dev or /proc.
  local m; m="$(mounted_under)"
  [ -z "$m" ] || die "refusing to delete $FRESH: still mounted under it: $m"
  rm -rf --one-file-system "$FRESH"
}

# run_stage NAME COMMAND...: runs it with its output on stdout and in a log; on failure prints
# the stage and its first failing line, and exits.
run_stage() {
  local name="$1"; shift
  local log="$LOGS/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_').log"
  local t0=$(date +%s)
  printf '\n==== stage: %s\n' "$name"
  set +e
  ( set -e; "$@" ) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  local dt=$(( $(date +%s) - t0 ))
  SUMMARY+=("$(printf '%-44s %5d s  %s' "$name" "$dt" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")")")
  if [ $rc -ne 0 ]; then
    local first
    first="$(grep -m1 -E '(^|[^a-zA-Z_])(error|Error|ERROR|fatal|failed|FAILED|cannot|Could not|not found|No such|Unable)|^E: ' "$log" || tail -n1 "$log")"
    print_summary
    echo "test_fresh_machine: FAILED at stage '$name' (exit $rc); first failing line:" >&2
    echo "  $first" >&2
    exit 1
  fi
  local total=$(( $(date +%s) - START ))
  [ $total -le $BUDGET_S ] || { print_summary; die "over budget: $total s after stage '$name' (budget $BUDGET_S s)"; }
}

print_summary() {
  echo
  echo "==== fresh Debian 12 root: stage durations"
  printf '  %s\n' "${SUMMARY[@]}"
  echo "  total: $(( $(date +%s) - START )) s (budget $BUDGET_S s)"
}

host_tools() {
  local need=()
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v unshare >/dev/null || need+=(util-linux)
  [ ${#need[@]} -eq 0 ] && { echo "debootstrap and unshare present"; return 0; }
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
}

make_root() {
  remove_root
  mkdir -p "$FRESH"
  # In its own mount namespace: debootstrap's /proc and /sys mounts vanish with it, even if killed.
  unshare --mount --propagation private -- debootstrap --variant=minbase bookworm "$FRESH" "$MIRROR"
  echo "root: Debian $(cat "$FRESH/etc/debian_version") (minbase), $(du -sh --one-file-system "$FRESH" | cut -f1)"
}

# The host-specific network settings (see the header).
host_network_settings() {
  cp -L /etc/resolv.conf "$FRESH/etc/resolv.conf"
  cat > "$FRESH/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  mkdir -p "$FRESH/usr/local/share/ca-certificates"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$FRESH/usr/local/share/ca-certificates/"
  fi
  [ -f /etc/pip.conf ] && cp /etc/pip.conf "$FRESH/etc/pip.conf"
  # bootstrap.sh installs ca-certificates, whose set-up runs update-ca-certificates over the folder
  # above; the harness's own tools (xvfb) come after that.
  ls "$FRESH/usr/local/share/ca-certificates"
}

export_repo() {
  mkdir -p "$FRESH$HOME_IN_ROOT"
  git -C "$REPO" archive --format=tar HEAD | tar -x -C "$FRESH$HOME_IN_ROOT"
  echo "exported $(git -C "$REPO" rev-parse --short HEAD) into $HOME_IN_ROOT"
}

# in_root COMMAND: runs bash -c COMMAND in the root's checkout as root, with a clean environment
# (plus CI and pip's/TLS variables), in private mount and PID namespaces, so /proc, /dev, /sys
# and every process started inside vanish with it.
in_root() {
  local passed=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb)
  [ -n "${CI:-}" ] && passed+=("CI=$CI")
  [ -n "${WB_EXTRA_MODELS:-}" ] && passed+=("WB_EXTRA_MODELS=$WB_EXTRA_MODELS")
  local v
  # PIP_FIND_LINKS names a wheel folder of this host's own, which the root does not have.
  for v in $(compgen -e | grep -E '^(PIP_|SSL_CERT_|REQUESTS_CA_BUNDLE$)' | grep -vx PIP_FIND_LINKS || true); do
    passed+=("$v=${!v}")
  done
  unshare --mount --pid --fork --propagation private -- bash -c '
    set -e
    R="$1"; shift
    mount -t proc proc "$R/proc"
    mount --rbind /dev "$R/dev"
    mount --rbind /sys "$R/sys"
    # This shell stays PID 1 of the namespace (no exec): a program that sees PID 1 as its parent
    # behaves as if orphaned (Xvfb then never tells xvfb-run it is ready), and when this shell
    # ends, on a signal too, the kernel ends everything started inside.
    trap "exit 143" TERM INT
    chroot "$R" /usr/bin/env -i "$@" &
    wait $!' _ "$FRESH" "${passed[@]}" \
    bash -c "cd $HOME_IN_ROOT && $1"
}

# The smoke line must name the platform it ran on.
smoke() {
  local platform="$1" cmd="$2" out
  out="$(in_root "$cmd" 2>&1)" || { echo "$out"; return 1; }
  echo "$out"
  grep -q "workbench --smoke: ok: .*platform $platform\$" <<<"$out" || { echo "error: no smoke 'ok' line on platform $platform"; return 1; }
}

run_tests() {
  in_root 'installer/bootstrap.sh && ctest --test-dir build --output-on-failure' 2>&1 | tee "$LOGS/ctest.out"
  return "${PIPESTATUS[0]}"
}

# Everything runs from main, which bash reads whole before it starts: editing this file while it
# runs cannot change what the running copy does.
main() {
  trap 'rm -rf "$LOGS"' EXIT

  run_stage "host tools (debootstrap, unshare)" host_tools
  run_stage "debootstrap --variant=minbase bookworm" make_root
  run_stage "host network settings (DNS, CA, pip)" host_network_settings
  run_stage "export HEAD (git archive)" export_repo
  run_stage "command 1: installer/bootstrap.sh" in_root 'installer/bootstrap.sh'
  run_stage "command 1: workbench --smoke (offscreen)" smoke offscreen 'QT_QPA_PLATFORM=offscreen build/bin/workbench --smoke'
  run_stage "harness: xvfb for the X11 run" in_root 'apt-get update -q && apt-get install -y -q --no-install-recommends xvfb xauth'
  run_stage "command 1: workbench --smoke (X11, xvfb-run)" smoke xcb 'unset QT_QPA_PLATFORM; xvfb-run -a build/bin/workbench --smoke'
  run_stage "command 2: bootstrap.sh && ctest" run_tests
  run_stage "loader fuzz, 60 s (clang, ASan, UBSan)" in_root 'tests/fuzz/run_model_load_fuzz.sh 60'

  print_summary
  [ "${WB_FRESH_KEEP:-0}" = 1 ] && echo "kept: $FRESH" || remove_root
  # CTest's counts, last, for whoever reads the closing line.
  passed_line="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$LOGS/ctest.out" | tail -n1)"
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$passed_line")
  failed=$(sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/' <<<"$passed_line")
  skipped=$(grep -cE '\*\*\*Skipped' "$LOGS/ctest.out" || true)
  echo "fresh-root: $(( total - failed - skipped )) passed, $failed failed, $skipped skipped"
}

main "$@"
