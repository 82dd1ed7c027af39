"""Reads hyperfine's JSON files and prints the bench table; writes bench/results.json."""
import json
import os
import sys

out, show_rss, grep_rss, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
order = ["version", "show", "ls", "find", "grep", "insert", "generate", "mv", "init"]
rows = []
for name in order:
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        continue
    results = {r["command"]: r for r in json.load(open(path))["results"]}
    coffer, passes, floor = (results[k]["median"] for k in ("coffer", "pass", "gpg -d"))
    rows.append({"benchmark": name, "coffer_s": coffer, "pass_s": passes, "gpg_d_s": floor,
                 "speedup_vs_pass": passes / coffer, "ratio_to_gpg_d": coffer / floor})
report = {"rows": rows, "peak_rss_kib": {"show": show_rss, "grep_10000": grep_rss}}
secret_service_path = os.path.join(out, "secret-service.json")
if os.path.exists(secret_service_path):
    report["secret_service"] = json.load(open(secret_service_path))
json.dump(report, open(target, "w"), indent=2)
print(f"{'benchmark':<10} {'coffer':>10} {'pass':>10} {'gpg -d':>10} {'pass/coffer':>12} {'coffer/gpg':>11}")
for r in rows:
    print(f"{r['benchmark']:<10} {r['coffer_s']*1000:>8.1f}ms {r['pass_s']*1000:>8.1f}ms "
          f"{r['gpg_d_s']*1000:>8.1f}ms {r['speedup_vs_pass']:>11.2f}x {r['ratio_to_gpg_d']:>10.2f}x")
if rows:
    print(f"peak RSS: show {show_rss/1024:.1f} MiB, grep over 10,000 entries {grep_rss/1024:.1f} MiB")
if "secret_service" in report:
    s = report["secret_service"]
    print(f"secret-service over {s['items']:,} items: start to first SearchItems {s['start_to_first_search_s']*1000:.1f}ms "
          f"(without the kept index {s['start_to_first_search_without_index_s']*1000:.0f}ms), "
          f"SearchItems (1 found) {s['search_one_s']*1000:.2f}ms, (all found) {s['search_all_s']*1000:.2f}ms, "
          f"GetSecrets first {s['get_secrets_first_s']*1000:.1f}ms, warm {s['get_secrets_s']*1000:.2f}ms, "
          f"peak RSS {s['provider_peak_rss_kib']/1024:.1f} MiB")
    print(f"secret-tool store of {s['create_items']} items: coffer {s['create_coffer_s']*1000:.1f}ms an item, "
          f"gnome-keyring {s['create_gnome_keyring_s']*1000:.1f}ms an item "
          f"({s['create_gnome_keyring_s']/s['create_coffer_s']:.2f}x)")
