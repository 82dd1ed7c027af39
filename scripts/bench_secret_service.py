"""make bench's Secret Service part, run under dbus-run-session: times `coffer secret-service` over a
store whose secret-service/login/ holds 1,000 items, from one client process (python3-secretstorage),
so that what is measured is the provider and the bus, not the start of a client. Prints JSON."""
import json
import statistics
import subprocess
import sys
import time

import secretstorage
from jeepney.bus_messages import message_bus
from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE

coffer, runs = sys.argv[1], int(sys.argv[2])
bus = secretstorage.dbus_init()
service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)


def search(attributes):
    unlocked, locked = service.call("SearchItems", "a{ss}", attributes)
    return unlocked


def start():
    provider = subprocess.Popen([coffer, "secret-service"], stderr=subprocess.DEVNULL)
    while not bus.send_and_get_reply(message_bus.NameHasOwner("org.freedesktop.secrets")).body[0]:
        if provider.poll() is not None:
            sys.exit("bench: coffer secret-service exited")
        time.sleep(0.002)
    return provider


def stop(provider):
    provider.terminate()
    provider.wait()


def median_time(action, count):
    times = []
    for _ in range(count):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


# Cold: from the provider's start (the index read from the 1,000 entries) to the first answer, and the
# first GetSecrets of a provider that has just started.
cold_search, cold_secret = [], []
for _ in range(runs):
    began = time.perf_counter()
    provider = start()
    found = search({"user": "user500"})
    cold_search.append(time.perf_counter() - began)
    assert len(found) == 1, found
    session = secretstorage.util.open_session(bus)
    began = time.perf_counter()
    secrets = service.call("GetSecrets", "aoo", found, session.object_path)
    cold_secret.append(time.perf_counter() - began)
    assert len(secrets[0]) == 1
    stop(provider)

# Warm: the same calls on a running provider.
provider = start()
assert len(search({"service": "bench"})) == 1000
one = search({"user": "user500"})
session = secretstorage.util.open_session(bus)
report = {
    "items": 1000,
    "start_to_first_search_s": statistics.median(cold_search),
    "get_secrets_first_s": statistics.median(cold_secret),
    "search_one_of_1000_s": median_time(lambda: search({"user": "user500"}), 20 * runs),
    "search_all_1000_s": median_time(lambda: search({"service": "bench"}), 20 * runs),
    "get_secrets_s": median_time(lambda: service.call("GetSecrets", "aoo", one, session.object_path), 20 * runs),
}
stop(provider)
print(json.dumps(report))
