#!/usr/bin/env bash
# Runs the Secret Service clients' own test suites against one provider on a private session bus:
# SecretStorage 3.3.3's tests, and keyring's BackendBasicTests on its SecretService and libsecret
# backends, each on the default and the session collection.
#
#   scripts/peer-suites.sh coffer:/path/to/coffer OUTDIR
#   scripts/peer-suites.sh gnome-keyring OUTDIR
#
# Writes OUTDIR/results.txt, one line a test: SUITE TESTID pass|fail|error|skip. The logs of the
# provider and of each suite are beside it. Exits 0 when the suites ran, whatever their results;
# otherwise non-zero with one line on standard error. PEER_SUITES_KEEP=1 keeps the sandbox.
set -uo pipefail

die() {
    echo "peer-suites: $*" >&2
    exit 1
}

[[ $# -eq 2 ]] || die "usage: peer-suites.sh coffer:/path/to/coffer|gnome-keyring OUTDIR"
provider_name=$1
outdir=$2
helpers=$(cd "$(dirname "$0")/peer-suites" && pwd) || die "scripts/peer-suites is missing"
sdist=${PEER_SUITES_SDIST:-/usr/local/lib/coffer-test/secretstorage-3.3.3.tar.gz}
python=/usr/bin/python3
# Every suite ends within this many seconds, or is stopped.
suite_seconds=900

case $provider_name in
coffer:?*) coffer=${provider_name#coffer:} ;;
gnome-keyring) coffer= ;;
*) die "unknown provider $provider_name: use coffer:/path/to/coffer or gnome-keyring" ;;
esac
[[ -z $coffer || -x $coffer ]] || die "$coffer is not an executable file"
[[ -f $sdist ]] || die "$sdist is missing: run scripts/bootstrap.sh"

# The system's programs only, and nothing of the caller's desktop or Python set-up.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 TZ=UTC
unset PYTHONPATH PYTHONHOME PYTHON_KEYRING_BACKEND DISPLAY WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME GPG_AGENT_INFO SSH_AUTH_SOCK
export PYTHONDONTWRITEBYTECODE=1
for program in dbus-daemon dbus-send gpg gpgconf git tar timeout $python; do
    command -v "$program" >/dev/null || die "$program is missing: run scripts/bootstrap.sh"
done
[[ -n $coffer ]] || command -v gnome-keyring-daemon >/dev/null || die "gnome-keyring-daemon is missing"
$python -c '
import secretstorage, keyring, pytest, gi
gi.require_version("Secret", "1")
from gi.repository import Secret
' 2>/dev/null || die "python3-secretstorage, python3-keyring, python3-pytest or gir1.2-secret-1 is missing"

mkdir -p "$outdir" || die "cannot make $outdir"
outdir=$(cd "$outdir" && pwd)
results=$outdir/results.txt
: >"$results" || die "cannot write $results"
setup_log=$outdir/setup.log
: >"$setup_log"

# The sandbox: HOME, GNUPGHOME and XDG_RUNTIME_DIR of its own.
sandbox=$(mktemp -d /tmp/coffer-peer-suites-XXXXXX) || die "mktemp failed"
export HOME=$sandbox/home GNUPGHOME=$sandbox/gnupg XDG_RUNTIME_DIR=$sandbox/runtime
export PASSWORD_STORE_DIR=$HOME/.password-store GIT_CONFIG_NOSYSTEM=1 EDITOR=false
mkdir -m 700 "$HOME" "$GNUPGHOME" "$XDG_RUNTIME_DIR"
printf '[user]\n\tname = Coffer Test\n\temail = test@coffer.test\n[init]\n\tdefaultBranch = main\n' \
    >"$HOME/.gitconfig"

bus_pid=
provider=
cleanup() {
    [[ -n $provider ]] && kill "$provider" 2>/dev/null && wait "$provider" 2>/dev/null
    [[ -n $bus_pid ]] && kill "$bus_pid" 2>/dev/null && wait "$bus_pid" 2>/dev/null
    gpgconf --kill all 2>/dev/null
    [[ -n ${PEER_SUITES_KEEP:-} ]] || rm -rf "$sandbox"
}
trap cleanup EXIT

# A session bus that activates nothing: only the provider under test can answer.
cat >"$sandbox/session.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$sandbox</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
# It stays a child of this script, so that stopping it also reaps it.
dbus-daemon --config-file="$sandbox/session.conf" --nofork --print-address=3 \
    3>"$sandbox/bus-address" 2>>"$setup_log" &
bus_pid=$!
for _ in $(seq 100); do
    [[ -s $sandbox/bus-address ]] && break
    sleep 0.05
done
read -r DBUS_SESSION_BUS_ADDRESS <"$sandbox/bus-address" 2>/dev/null
[[ -n ${DBUS_SESSION_BUS_ADDRESS:-} ]] || die "dbus-daemon did not start (see $setup_log)"
export DBUS_SESSION_BUS_ADDRESS

# Waits until the provider owns org.freedesktop.secrets.
wait_for_name() {
    local i
    for i in $(seq 300); do
        dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
            org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
            grep -q 'boolean true' && return 0
        kill -0 "$provider" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

if [[ -n $coffer ]]; then
    # A store for a key of its own: ed25519 and cv25519, no passphrase.
    {
        gpg --batch --passphrase '' --quick-gen-key 'Peer Suites <peer@coffer.test>' ed25519 sign never &&
            fpr=$(gpg --with-colons --list-keys peer@coffer.test | awk -F: '/^fpr/ {print $10; exit}') &&
            gpg --batch --passphrase '' --quick-add-key "$fpr" cv25519 encr never &&
            "$coffer" init "$fpr" && "$coffer" git init
    } >>"$setup_log" 2>&1 || die "cannot make the store (see $setup_log)"
    "$coffer" secret-service 2>>"$outdir/provider.log" &
    provider=$!
else
    # The login keyring, made and unlocked with the password on standard input.
    printf %s 'keyring password' | gnome-keyring-daemon --unlock --components=secrets --foreground \
        >/dev/null 2>>"$outdir/provider.log" &
    provider=$!
fi
wait_for_name || die "$provider_name did not take org.freedesktop.secrets (see $outdir/provider.log)"

# run_suite NAME ARGUMENTS...: runs runner.py with ARGUMENTS. Its lines and tracebacks go to NAME.log,
# what the suite printed to NAME-stdout.log. A suite stopped by the time limit keeps the lines it
# wrote. A runner that fails otherwise could not run its suite.
run_suite() {
    local log=$outdir/$1.log status
    shift
    (cd "$sandbox" && timeout -k 10 "$suite_seconds" $python "$helpers/runner.py" "$@") \
        >"${log%.log}-stdout.log" 2>"$log"
    status=$?
    [[ $status -eq 124 ]] && echo "peer-suites: stopped after $suite_seconds seconds" >>"$log"
    [[ $status -eq 0 || $status -eq 124 ]] || die "the runner failed with status $status (see $log)"
}

# SecretStorage's tests: the tests folder of the source release alone, so that they import Debian's
# secretstorage.
tar -xzf "$sdist" -C "$sandbox" SecretStorage-3.3.3/tests 2>>"$setup_log" || die "cannot unpack $sdist"
run_suite secretstorage unittest secretstorage "$sandbox/SecretStorage-3.3.3/tests" "$results"
# keyring's tests: all four suites in one pytest run, with an empty pytest.ini so that no settings
# from folders above take part.
cp "$helpers/test_keyring_backends.py" "$sandbox/"
printf '[pytest]\n' >"$sandbox/pytest.ini"
run_suite keyring pytest test_keyring_backends.py "$results"
exit 0
