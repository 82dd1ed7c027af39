#!/usr/bin/env bash
# Installs the system packages Coffer builds and tests with, when they are missing.
# Debian/Ubuntu: apt-get (as root, or through sudo). macOS: Homebrew.
set -euo pipefail

debian_packages=(
    libgpgme-dev libgcrypt20-dev pkg-config gnupg gpg-agent git pass tree
    xclip xvfb wl-clipboard qrencode expect util-linux procps
    zsh fish bash-completion mandoc man-db time hyperfine
    sq sqop rnp python3-pgpy
)

if [[ "$(uname -s)" == Darwin ]]; then
    command -v brew >/dev/null || { echo "bootstrap: Homebrew is needed on macOS" >&2; exit 1; }
    for formula in gpgme libgcrypt gnupg git pass tree qrencode; do
        brew list --versions "$formula" >/dev/null || brew install "$formula"
    done
    exit 0
fi

missing=()
for package in "${debian_packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "bootstrap: installing ${missing[*]}" >&2
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
