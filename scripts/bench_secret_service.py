"""make bench's Secret Service part, run under dbus-run-session.

Over a store whose secret-service/login/ holds ITEMS items, from one client process
(python3-secretstorage), so that what is measured is the provider and the bus, not the start of a
client: the start of `coffer secret-service` to its first SearchItems answer without the kept index
(every entry decrypted) and with it, the first GetSecrets, SearchItems and GetSecrets on a running
provider, and its peak resident memory. Then secret-tool storing CREATE new items, one process each as
people and scripts run it, against coffer (on an empty store with git) and against gnome-keyring-daemon
in the same run. Prints JSON.

Arguments: coffer, runs, items, the store for creating, gnome-keyring's home.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import secretstorage
from jeepney.bus_messages import message_bus
from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE

coffer, runs, items = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
create_store, keyring_home = sys.argv[4], sys.argv[5]
create = int(os.environ.get("BENCH_SS_CREATE", "200"))
bus = secretstorage.dbus_init()
service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)
index_folder = os.path.join(os.environ["HOME"], ".cache", "coffer", "secret-service")


def search(attributes):
    unlocked, locked = service.call("SearchItems", "a{ss}", attributes)
    return unlocked


def has_owner():
    return bus.send_and_get_reply(message_bus.NameHasOwner("org.freedesktop.secrets")).body[0]


def wait_for(provider):
    while not has_owner():
        if provider.poll() is not None:
            sys.exit("bench: the provider exited")
        time.sleep(0.001)
    return provider


def start(environment=None):
    return wait_for(subprocess.Popen([coffer, "secret-service"], stderr=subprocess.DEVNULL, env=environment))


def stop(provider):
    provider.terminate()
    provider.wait()
    while has_owner():
        time.sleep(0.001)


def median_time(action, count):
    times = []
    for _ in range(count):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def first_search():
    began = time.perf_counter()
    provider = start()
    found = search({"user": "user500"})
    elapsed = time.perf_counter() - began
    assert len(found) == 1, found
    return provider, found, elapsed


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


# Without the kept index: every entry is decrypted (once; it is slow). The provider keeps the index
# when it stops.
shutil.rmtree(index_folder, ignore_errors=True)
provider, _, no_index = first_search()
stop(provider)

# With the index: from the start to the first answer, and the first GetSecrets of a fresh provider.
cold_search, cold_secret = [], []
for _ in range(runs):
    provider, found, elapsed = first_search()
    cold_search.append(elapsed)
    session = secretstorage.util.open_session(bus)
    began = time.perf_counter()
    secrets = service.call("GetSecrets", "aoo", found, session.object_path)
    cold_secret.append(time.perf_counter() - began)
    assert len(secrets[0]) == 1
    stop(provider)

# Warm: the same calls on a running provider.
provider = start()
assert len(search({"service": "bench"})) == items
one = search({"user": "user500"})
session = secretstorage.util.open_session(bus)
report = {
    "items": items,
    "start_to_first_search_without_index_s": no_index,
    "start_to_first_search_s": statistics.median(cold_search),
    "get_secrets_first_s": statistics.median(cold_secret),
    "search_one_s": median_time(lambda: search({"user": "user500"}), 20 * runs),
    "search_all_s": median_time(lambda: search({"service": "bench"}), 2 * runs),
    "get_secrets_s": median_time(lambda: service.call("GetSecrets", "aoo", one, session.object_path), 20 * runs),
}
report["provider_peak_rss_kib"] = peak_rss_kib(provider.pid)
stop(provider)


def store_items(label):
    began = time.perf_counter()
    for number in range(create):
        subprocess.run(
            ["secret-tool", "store", f"--label={label} {number}", "service", "create", "user", f"u{number}"],
            input=f"secret-{number}".encode(), check=True)
    return (time.perf_counter() - began) / create


# Creating items with secret-tool: coffer on an empty store with git (one commit an item), then
# gnome-keyring-daemon, in this run.
environment = dict(os.environ, PASSWORD_STORE_DIR=create_store)
provider = start(environment)
report["create_items"] = create
report["create_coffer_s"] = store_items("coffer")
stop(provider)
keyring_environment = dict(os.environ, HOME=keyring_home, XDG_RUNTIME_DIR=keyring_home + "/runtime",
                           XDG_DATA_HOME=keyring_home + "/data")
os.makedirs(keyring_home + "/runtime", mode=0o700, exist_ok=True)
keyring = subprocess.Popen(
    ["gnome-keyring-daemon", "--unlock", "--components=secrets", "--foreground"],
    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=keyring_environment)
keyring.stdin.write(b"bench keyring password")
keyring.stdin.close()
wait_for(keyring)
report["create_gnome_keyring_s"] = store_items("gnome-keyring")
stop(keyring)
print(json.dumps(report))
