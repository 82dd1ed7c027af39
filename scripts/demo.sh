#!/usr/bin/env bash
# The end-to-end tour: a throwaway HOME and GNUPGHOME, a key, a git-backed store driven by coffer,
# the Keychain library from a Swift program, and proof that gpg and pass read the same files.
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR}
coffer="$bin/coffer"

sandbox=$(mktemp -d /tmp/coffer-demo.XXXXXX)
export HOME="$sandbox/home" GNUPGHOME="$sandbox/gnupg" PASSWORD_STORE_DIR="$sandbox/home/.password-store"
mkdir -p "$HOME" && mkdir -m 700 "$GNUPGHOME"
cleanup() { gpgconf --kill all 2>/dev/null || true; rm -rf "$sandbox"; }
trap cleanup EXIT
git config --global user.name "Coffer Demo"
git config --global user.email demo@coffer.test
git config --global init.defaultBranch main

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a throwaway key (ed25519 + cv25519, no passphrase)"
gpg --batch --quiet --passphrase '' --quick-gen-key 'Demo User <demo@coffer.test>' ed25519 sign never
fpr=$(gpg --with-colons --list-keys demo@coffer.test | awk -F: '/^fpr/ {print $10; exit}')
gpg --batch --quiet --passphrase '' --quick-add-key "$fpr" cv25519 encr never
echo "$fpr"

step "coffer init, git init"
"$coffer" init demo@coffer.test
"$coffer" git init

step "insert and generate"
printf 'correct horse battery staple\nlogin: alice\nurl: https://example.com\n' | "$coffer" insert -m web/example.com
"$coffer" generate -n email/work 20 >/dev/null
"$coffer" ls

step "show"
"$coffer" show web/example.com

step "the Keychain library from a Swift program"
"$bin/keychain-example"

step "the same files through plain gpg -d and pass show"
gpg --quiet -d "$PASSWORD_STORE_DIR/web/example.com.gpg"
pass show com.example.app/alice
diff <("$coffer" show web/example.com) <(pass show web/example.com) && echo "coffer show == pass show"
diff <("$coffer" show com.example.app/bob) <(gpg --quiet -d "$PASSWORD_STORE_DIR/com.example.app/bob.gpg") \
    && echo "coffer show == gpg -d"

step "git history"
git -C "$PASSWORD_STORE_DIR" log --format='%s'
echo
echo "demo: all steps passed"
