#!/usr/bin/env bash
# The Debian packages that own the shared libraries BINARY loads, one a
# line, sorted: what the runtime image installs (deploy/Dockerfile), so that
# it carries those libraries and nothing else of the build.
#
#   deploy/runtime-packages.sh BINARY
set -euo pipefail

binary=$1
# ldd's "NAME => PATH (ADDRESS)" lines; the vDSO and the loader have no
# "=> /" and come with libc6, which every Debian image has.
mapfile -t libraries < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
# dpkg knows a file by the path its package installed it at; with /usr
# merged, ldd may name it through the other alias. One dpkg -S for all.
candidates=()
for path in "${libraries[@]}"; do
  case $path in
    /usr/*) candidates+=("$path" "${path#/usr}") ;;
    *) candidates+=("$path" "/usr$path") ;;
  esac
done
owners=$(dpkg -S "${candidates[@]}" 2>/dev/null || true)
for path in "${libraries[@]}"; do
  grep -q "/${path##*/}\$" <<<"$owners" || {
    echo "runtime-packages: no package owns $path" >&2
    exit 1
  }
done
# "pkg:arch[, pkg2:arch]: /path" lines to package names.
sed -E 's/: \/.*$//' <<<"$owners" | tr ',' '\n' | sed -E 's/^ +//; s/:.*$//' | sort -u
