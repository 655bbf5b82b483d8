#!/usr/bin/env bash
# Checks k8s/Dockerfile against what is built here, since no container engine runs where the
# tests run (the image itself is never built by the tests):
#   - every stage is Debian 12 (debian:12, debian:12-slim);
#   - the build stage installs only packages that .ci/install-deps installs (the build CI does);
#   - the runtime stage installs exactly the Debian packages that own the shared libraries the
#     built phalanxd links (ldd, then dpkg -S): one missing and phalanxd would not start, one too
#     many is more than "phalanxd only";
#   - the runtime stage copies one file, the build stage's phalanxd, from where its cmake puts it;
#   - it runs as a numeric non-root user, the one k8s/deploy/phalanxd.yaml asks for;
#   - every flag in its CMD and in the Deployment's args is one phalanxd --help lists;
#   - hadolint, when installed (Debian 12 does not package it), finds nothing.
#
#   dockerfile_test.sh SOURCE_DIR PHALANXD [DOCKERFILE]
# Exits 0 when all hold, 1 naming each that does not.
set -uo pipefail

src=$1
phalanxd=$2
dockerfile=${3:-$src/k8s/Dockerfile}
deployment=$src/k8s/deploy/phalanxd.yaml
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[[ -f $dockerfile ]] || { echo "no $dockerfile"; exit 1; }
[[ -x $phalanxd ]] || { echo "no phalanxd at $phalanxd (build it first)"; exit 1; }

# The Dockerfile with continuation lines joined, comments dropped.
joined=$(sed -e '/^[[:space:]]*#/d' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta')

# Stages: "FROM image [AS name]", in order.
mapfile -t froms < <(grep -E '^FROM ' <<<"$joined")
((${#froms[@]} == 2)) || fail "expected two stages (build, runtime), found ${#froms[@]}"
for f in "${froms[@]}"; do
  image=$(awk '{print $2}' <<<"$f")
  [[ $image == debian:12 || $image == debian:12-slim ]] ||
    fail "stage '$f' is not Debian 12 (debian:12 or debian:12-slim)"
done

# The text of stage N (0-based): from its FROM to the next.
stage() {
  awk -v n="$1" '/^FROM /{i++} i==n+1' <<<"$joined"
}
# The packages an `apt-get install` of a stage names (options and shell words after && left out).
packages_of() {
  stage "$1" | grep -oE 'apt-get install[^&]*' | tr ' ' '\n' |
    grep -vE '^(apt-get|install|-.*|)$' | sort -u
}

# Build stage: within .ci/install-deps.
ci_packages=$(sed -n '/^packages=(/,/^)/p' "$src/.ci/install-deps" | sed -e 's/#.*//' -e 's/packages=(//' -e 's/)//' |
  tr ' ' '\n' | grep -v '^$' | sort -u)
while read -r p; do
  [[ -z $p ]] && continue
  grep -qx "$p" <<<"$ci_packages" || fail "the build stage installs $p, which .ci/install-deps does not"
done < <(packages_of 0)

# Runtime stage: exactly the owners of phalanxd's shared libraries. dpkg knows each library by
# one of its paths: as linked, resolved, or the other side of Debian 12's merged /usr.
linked=$(ldd "$phalanxd" | awk '/=> \//{print $3}')
[[ -n $linked ]] || fail "ldd found no shared libraries in $phalanxd"
candidates=$(while read -r lib; do
  for path in "$lib" "$(readlink -f "$lib")"; do
    echo "$path"; echo "${path#/usr}"; [[ $path == /usr/* ]] || echo "/usr$path"
  done
done <<<"$linked" | sort -u)
# "package:arch: path" for each path dpkg knows, in one call (each call takes a while).
mapfile -t candidate_list <<<"$candidates"
owners=$(dpkg -S "${candidate_list[@]}" 2>/dev/null)
needed=$(while read -r lib; do
  owner=""
  for path in "$lib" "$(readlink -f "$lib")"; do
    for p in "$path" "${path#/usr}" "/usr${path#/usr}"; do
      owner=$(awk -v p="$p" -F': ' '$2 == p {split($1, a, ":"); print a[1]; exit}' <<<"$owners")
      [[ -n $owner ]] && break 2
    done
  done
  echo "${owner:-UNOWNED:$lib}"
done <<<"$linked" | sort -u)
if grep -q '^UNOWNED:' <<<"$needed"; then
  fail "libraries no Debian package owns: $(grep '^UNOWNED:' <<<"$needed" | cut -d: -f2- | tr '\n' ' ')"
fi
needed=$(grep -v '^UNOWNED:' <<<"$needed")
installed=$(packages_of 1)
missing=$(comm -23 <(echo "$needed") <(echo "$installed"))
extra=$(comm -13 <(echo "$needed") <(echo "$installed"))
[[ -z $missing ]] || fail "the runtime stage lacks $(tr '\n' ' ' <<<"$missing")(phalanxd links their libraries)"
[[ -z $extra ]] || fail "the runtime stage installs $(tr '\n' ' ' <<<"$extra")which phalanxd does not link"

# One COPY into the runtime stage: phalanxd from the build stage's cmake output.
mapfile -t copies < <(stage 1 | grep -E '^(COPY|ADD) ')
((${#copies[@]} == 1)) || fail "the runtime stage copies ${#copies[@]} things; phalanxd only"
copy=${copies[0]:-}
build_dir=$(stage 0 | grep -oE 'cmake -S \. -B [^ ]+' | awk '{print $5}')
workdir=$(stage 0 | awk '/^WORKDIR /{print $2}' | tail -n1)
[[ $copy == "COPY --from=build $workdir/$build_dir/actors/phalanxd /usr/local/bin/phalanxd" ]] ||
  fail "the runtime stage's copy '$copy' is not $workdir/$build_dir/actors/phalanxd (where the build stage's cmake puts it)"
[[ $phalanxd == */actors/phalanxd ]] || fail "phalanxd is not built at <build>/actors/phalanxd here: $phalanxd"
stage 0 | grep -qE -- '--target phalanxd( |$)' || fail "the build stage does not build the phalanxd target"

# A numeric non-root user, the Deployment's.
user=$(stage 1 | awk '/^USER /{print $2}' | tail -n1)
[[ $user =~ ^[0-9]+(:[0-9]+)?$ && ${user%%:*} != 0 ]] || fail "USER '$user' is not a numeric non-root user"
run_as=$(grep -oE 'runAsUser: [0-9]+' "$deployment" | awk '{print $2}' | head -n1)
[[ ${user%%:*} == "$run_as" ]] || fail "USER ${user%%:*} is not the Deployment's runAsUser $run_as"

# Flags: the image's CMD and the Deployment's args, each one phalanxd knows.
help=$("$phalanxd" --help 2>&1)
flags=$( (stage 1 | grep -E '^(CMD|ENTRYPOINT) ' | grep -oE -- '--[a-z-]+'
  sed -n '/args:/,/ports:/p' "$deployment" | grep -oE -- '- --[a-z-]+' | sed 's/^- //') | sort -u)
[[ -n $flags ]] || fail "found no flags in the CMD or the Deployment's args"
while read -r flag; do
  [[ -z $flag ]] && continue
  grep -qE -- "^  $flag( |$)|, $flag( |$)|^  $flag," <<<"$help" || fail "phalanxd --help does not list $flag"
done <<<"$flags"

if command -v hadolint >/dev/null; then
  hadolint "$dockerfile" || fail "hadolint found problems"
else
  echo "hadolint is not installed (Debian 12 does not package it): not run"
fi

if ((failures > 0)); then
  echo "$failures check(s) failed for $dockerfile"
  exit 1
fi
echo "Dockerfile checks passed: runtime packages $(tr '\n' ' ' <<<"$installed")"
