#!/usr/bin/env bash
# make bench: coffer against pass on the same stores in the same run, with raw gpg -d as the floor.
# Writes bench/results.json and prints a table of medians; see bench/README.md for how to read it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runs=${BENCH_RUNS:-10}
slow_runs=${BENCH_SLOW_RUNS:-3}

swift build -c release --static-swift-stdlib --product coffer >/dev/null
coffer="$(swift build -c release --static-swift-stdlib --show-bin-path)/coffer"

sandbox=$(mktemp -d /tmp/coffer-bench.XXXXXX)
export HOME="$sandbox/home" GNUPGHOME="$sandbox/gnupg" LC_ALL=C.UTF-8 TZ=UTC
mkdir -p "$HOME" && mkdir -m 700 "$GNUPGHOME"
cleanup() { gpgconf --kill all 2>/dev/null || true; rm -rf "$sandbox"; }
trap cleanup EXIT
git config --global user.name Bench && git config --global user.email bench@coffer.test
git config --global init.defaultBranch main
out="$sandbox/results" && mkdir -p "$out"

echo "bench: keys" >&2
gpg --batch --quiet --passphrase '' --quick-gen-key 'Bench Curve <curve@bench.test>' ed25519 sign never
curve=$(gpg --with-colons --list-keys curve@bench.test | awk -F: '/^fpr/ {print $10; exit}')
gpg --batch --quiet --passphrase '' --quick-add-key "$curve" cv25519 encr never
gpg --batch --quiet --passphrase '' --quick-gen-key 'Bench RSA <rsa@bench.test>' rsa3072 sign never
rsa=$(gpg --with-colons --list-keys rsa@bench.test | awk -F: '/^fpr/ {print $10; exit}')
gpg --batch --quiet --passphrase '' --quick-add-key "$rsa" rsa3072 encr never

# A store of 1,000 entries in 10 folders, one folder ("team") with its own recipients for mv.
echo "bench: stores" >&2
store="$sandbox/store" && export PASSWORD_STORE_DIR="$store"
pass init "$curve" >/dev/null
pass init -p team "$curve" "$rsa" >/dev/null
mkdir -p "$store"/folder{0..9}
for i in $(seq -w 0 999); do
    printf 'password-%s\nlogin: user%s\nurl: https://site%s.example\nnote: entry number %s\n' "$i" "$i" "$i" "$i" \
        | gpg --quiet --batch --yes --compress-algo=none --no-encrypt-to -e -r "$curve" \
            -o "$store/folder${i:0:1}/entry$i.gpg"
done
git -C "$store" init -q && git -C "$store" add -A && git -C "$store" commit -qm "bench store"
cp -a "$store" "$sandbox/store.pristine"
one="$store/folder5/entry500.gpg"

# 10,000 entries for ls and find: copies of one ciphertext (listing does not decrypt).
big="$sandbox/big"
mkdir -p "$big" && cp "$store/.gpg-id" "$big/"
for d in $(seq -w 0 99); do
    mkdir -p "$big/dir$d"
    for e in $(seq -w 0 99); do cp "$one" "$big/dir$d/item$e.gpg"; done
done

# hyperfine runs commands without a shell (-N): the store is put back by a script.
printf '#!/bin/sh\nrm -rf "%s" && cp -a "%s" "%s"\n' "$store" "$sandbox/store.pristine" "$store" > "$sandbox/restore"
chmod +x "$sandbox/restore"
restore_store="$sandbox/restore"
bench() { # name runs command-for-coffer command-for-pass [prepare]
    local name=$1 count=$2 ours=$3 theirs=$4 prepare=${5:-}
    echo "bench: $name" >&2
    local args=(--style none --runs "$count" --warmup 1 --export-json "$out/$name.json" -N)
    [[ -n $prepare ]] && args+=(--prepare "$prepare")
    hyperfine "${args[@]}" -n coffer "$ours" -n pass "$theirs" -n "gpg -d" "gpg --quiet --batch -d $one" >&2
}
# BENCH_ONLY=secret-service measures the Secret Service alone.
if [[ ${BENCH_ONLY:-} != secret-service ]]; then
bench show "$runs" "$coffer show folder5/entry500" "pass show folder5/entry500"
bench version "$runs" "$coffer --version" "pass --version"
PASSWORD_STORE_DIR="$big" bench ls "$runs" "$coffer ls" "pass ls"
PASSWORD_STORE_DIR="$big" bench find "$runs" "$coffer find item42" "pass find item42"
bench grep "$slow_runs" "$coffer grep site123" "pass grep site123"
bench insert "$runs" "sh -c 'echo pw | $coffer insert -e -f bench/new'" \
    "sh -c 'echo pw | pass insert -e -f bench/new'"
bench generate "$runs" "$coffer generate -f bench/gen 20" "pass generate -f bench/gen 20"
bench mv "$slow_runs" "$coffer mv folder1 team/" "pass mv folder1 team/" "$restore_store"
bench init "$slow_runs" "$coffer init $curve $rsa" "pass init $curve $rsa" "$restore_store"

# Peak memory (maximum resident set size) of coffer show and of grep over 10,000 entries.
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
show_rss=$(rss "$coffer" show folder5/entry500)
grep_rss=$(PASSWORD_STORE_DIR="$big" rss "$coffer" grep zzz-no-match)
else
    show_rss=0 grep_rss=0
fi

# The Secret Service over 10,000 items (BENCH_SS_ITEMS), on a private session bus: SearchItems and
# GetSecrets from one client, from the provider's start without and with its kept index, and warm;
# then secret-tool creating items against coffer and gnome-keyring-daemon.
echo "bench: secret-service" >&2
ss_items=${BENCH_SS_ITEMS:-10000}
login="$store/secret-service/login"
mkdir -p "$login"
for i in $(seq -w 0 999); do
    printf 'secret-%s\nlabel: Item %s\ncontent-type: text/plain\ncreated: 1\nmodified: 1\nattribute.service: bench\nattribute.user: user%s\n' \
        "$i" "$i" "$((10#$i))" \
        | gpg --quiet --batch --yes --compress-algo=none --no-encrypt-to -e -r "$curve" \
            -o "$login/item$i.gpg"
done
# The rest are copies of one ciphertext (service bench, user copy): decrypting them costs the same.
printf 'secret-copy\nlabel: Copy\ncontent-type: text/plain\ncreated: 1\nmodified: 1\nattribute.service: bench\nattribute.user: copy\n' \
    | gpg --quiet --batch --yes --compress-algo=none --no-encrypt-to -e -r "$curve" -o "$sandbox/copy.gpg"
for i in $(seq 1000 $((ss_items - 1))); do cp "$sandbox/copy.gpg" "$login/copy$i.gpg"; done
create_store="$sandbox/create-store"
PASSWORD_STORE_DIR="$create_store" pass init "$curve" >/dev/null
PASSWORD_STORE_DIR="$create_store" pass git init -q >/dev/null
mkdir -p "$sandbox/keyring"
# A session bus that starts nothing by activation (no gnome-keyring behind coffer's back).
printf '%s\n' '<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>' \
    '<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>' \
    '<allow own="*"/></policy></busconfig>' \
    > "$sandbox/session.conf"
dbus-run-session --config-file="$sandbox/session.conf" -- /usr/bin/python3 "$root/scripts/bench_secret_service.py" \
    "$coffer" "$slow_runs" "$ss_items" "$create_store" "$sandbox/keyring" \
    > "$out/secret-service.json"

results="$root/bench/results.json"
[[ ${BENCH_ONLY:-} == secret-service ]] && results="$root/bench/secret-service.json"
python3 "$root/scripts/bench_report.py" "$out" "$show_rss" "$grep_rss" "$results"
