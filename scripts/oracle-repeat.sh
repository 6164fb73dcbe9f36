#!/usr/bin/env bash
# Runs the example suite N times with the scripted agent (each task's oracle
# solution), each run in a fresh output folder and every task in a fresh VM,
# then prints per-task tallies and "K/M oracle episodes succeeded". Exits 0
# only if every episode of every run succeeded: the oracles must not depend
# on timing.
#
#   scripts/oracle-repeat.sh N [--tasks DIR] [--out DIR] [-- EXTRA deskenv run ARGS...]
#
# Needs target/release/deskenv (scripts/run.sh builds it) and a built image
# (`deskenv image build`). Honours $DESKENV_CACHE. Results stay in
# DIR/run-1 … DIR/run-N (default DIR: target/oracle-repeat).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
(($#)) || usage
n=$1
shift
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "oracle-repeat: N must be a positive integer, got '$n'" >&2; usage; }
tasks=tasks/examples
out=target/oracle-repeat
extra=()
while (($#)); do
  case $1 in
    --tasks) tasks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "oracle-repeat: unknown argument $1" >&2; usage ;;
  esac
done

deskenv=$root/target/release/deskenv
[[ -x $deskenv ]] || { echo "oracle-repeat: $deskenv not found: build it with cargo build --release -p deskenv-controller" >&2; exit 1; }
command -v jq >/dev/null || { echo "oracle-repeat: jq not found (apt-get install jq)" >&2; exit 1; }
mapfile -t ids < <(find "$tasks" -maxdepth 1 -name '*.json' -print0 | xargs -0 -r jq -r '.id' | LC_ALL=C sort)
((${#ids[@]})) || { echo "oracle-repeat: no task files (*.json) in $tasks" >&2; exit 1; }

declare -A ok
for id in "${ids[@]}"; do ok[$id]=0; done
total=0
good=0
for ((i = 1; i <= n; i++)); do
  dir=$out/run-$i
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "== oracle run $i/$n into $dir" >&2
  rc=0
  "$deskenv" run --tasks "$tasks" --agent scripted --out "$dir" "${extra[@]}" >"$dir/run.log" 2>&1 || rc=$?
  ((rc == 0)) || echo "oracle-repeat: run $i: deskenv run exited $rc (log: $dir/run.log)" >&2
  for id in "${ids[@]}"; do
    total=$((total + 1))
    # <out>/<action_space>/<observation>/<model>/<domain>/<task>/result.json
    res=$(find "$dir" -path "*/$id/result.json" -print -quit)
    if [[ -n $res && $(jq -r '.success' "$res") == true ]]; then
      good=$((good + 1))
      ok[$id]=$((ok[$id] + 1))
    else
      why=${res:+$(jq -c '{score: .score, "end": .end, errors: .errors}' "$res")}
      echo "oracle-repeat: run $i: $id failed: ${why:-no result.json}" >&2
    fi
  done
done
for id in "${ids[@]}"; do
  printf '  %-32s %d/%d\n' "$id" "${ok[$id]}" "$n"
done
echo "$good/$total oracle episodes succeeded"
((good == total))
