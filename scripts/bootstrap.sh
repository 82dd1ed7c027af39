#!/usr/bin/env bash
# Installs the system packages Coffer builds and tests with, when they are missing.
# Debian/Ubuntu: apt-get (as root, or through sudo). macOS: Homebrew.
set -euo pipefail

debian_packages=(
    libgpgme-dev libgcrypt20-dev pkg-config gnupg gpg-agent git pass tree
    xclip xvfb wl-clipboard qrencode expect util-linux procps
    zsh fish bash-completion mandoc man-db time hyperfine
    sq sqop rnp python3-pgpy
    oathtool faketime pass-extension-otp pass-extension-tail pass-extension-audit python3-venv python3-pip
    golang-docker-credential-helpers jq
    libsystemd-dev dbus dbus-daemon dbus-bin libsecret-tools python3-secretstorage python3-keyring gnome-keyring
    python3-pytest python3-gi gir1.2-secret-1
)

# PyPI's pass-import (the `pass import` extension), in a virtual environment of its own: the tests put
# its bin folder first on PATH and read its import.bash from there.
pass_import_venv=/usr/local/lib/coffer-test/pass-import

# SecretStorage 3.3.3's source release from PyPI: scripts/peer-suites.sh runs the tests in it against the
# Secret Service providers. Debian 12's python3-secretstorage is the same version.
secretstorage_sdist=/usr/local/lib/coffer-test/secretstorage-3.3.3.tar.gz
secretstorage_sha256=2403533ef369eca6d2ba81718576c5e0f564d5cca1b58f73a8b23e7d4eeebd77

if [[ "$(uname -s)" == Darwin ]]; then
    command -v brew >/dev/null || { echo "bootstrap: Homebrew is needed on macOS" >&2; exit 1; }
    for formula in gpgme libgcrypt gnupg git pass tree qrencode; do
        brew list --versions "$formula" >/dev/null || brew install "$formula"
    done
    exit 0
fi

install_pass_import() {
    [[ -x $pass_import_venv/bin/python3 ]] && "$pass_import_venv/bin/python3" -c 'import pass_import' 2>/dev/null && return 0
    echo "bootstrap: installing pass-import from PyPI into $pass_import_venv" >&2
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" python3 -m venv "$pass_import_venv"
    "${sudo[@]}" "$pass_import_venv/bin/pip" install --quiet --disable-pip-version-check pass-import
}

fetch_secretstorage_sdist() {
    [[ -f $secretstorage_sdist ]] && return 0
    echo "bootstrap: downloading the secretstorage 3.3.3 source release into $secretstorage_sdist" >&2
    local sudo=() folder
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    folder=$(mktemp -d)
    "$pass_import_venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
        --dest "$folder" secretstorage==3.3.3
    echo "$secretstorage_sha256  $folder/SecretStorage-3.3.3.tar.gz" | sha256sum --check --quiet
    "${sudo[@]}" install -D -m 644 "$folder/SecretStorage-3.3.3.tar.gz" "$secretstorage_sdist"
    rm -rf "$folder"
}

missing=()
for package in "${debian_packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    install_pass_import
    fetch_secretstorage_sdist
    exit 0
fi

echo "bootstrap: installing ${missing[*]}" >&2
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_pass_import
fetch_secretstorage_sdist
