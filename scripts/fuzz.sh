#!/usr/bin/env bash
# Builds each libFuzzer target with AddressSanitizer and runs it for FUZZ_SECONDS (default 30) on a copy
# of its checked-in seed corpus. Usage: scripts/fuzz.sh [target...];
# targets: entry archive gpgid arguments packets agent.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
out=.build/fuzz
mkdir -p "$out"

# The support files everything that touches the file system needs.
support="Sources/Coffer/Support/FileSystem.swift Sources/Coffer/Support/FileTree.swift Sources/Coffer/Support/SystemCall.swift Sources/Coffer/Support/Locked.swift \
    Sources/Coffer/Support/SecureBytes.swift Sources/Coffer/Support/CofferError.swift Sources/Coffer/Support/PathText.swift \
    Sources/Coffer/Support/Quoting.swift"
# The in-process crypto (libgcrypt, the agent, packets); it and OneTimePassword (in Entry) need each other.
crypto="Sources/Coffer/Crypto/Direct/*.swift Sources/Coffer/Crypto/OpenPGPPackets.swift \
    Sources/Coffer/Crypto/CryptoEngine.swift Sources/Coffer/Crypto/GPGError.swift \
    Sources/Coffer/Crypto/GPGGroups.swift Sources/Coffer/Crypto/GPGOptions.swift"
sources_for() {
    case $1 in
        entry | archive)
            # OneTimePassword (in Entry) makes its codes with libgcrypt and keeps secrets in SecureBytes.
            echo Sources/Coffer/Entry/*.swift $crypto $support ;;
        gpgid)
            echo Sources/Coffer/Store/GPGIDFile.swift Sources/Coffer/Crypto/GPGGroups.swift \
                Sources/Coffer/Crypto/GPGOptions.swift $support ;;
        arguments)
            echo Sources/CofferCLI/Support/OptionParser.swift ;;
        packets | agent)
            echo Sources/Coffer/Entry/*.swift $crypto $support ;;
    esac
}
harness_for() {
    case $1 in
        entry) echo Fuzz/FuzzEntry.swift ;;
        archive) echo Fuzz/FuzzArchive.swift ;;
        gpgid) echo Fuzz/FuzzGPGID.swift ;;
        arguments) echo Fuzz/FuzzArguments.swift ;;
        packets) echo Fuzz/FuzzPackets.swift ;;
        agent) echo Fuzz/FuzzAgent.swift ;;
    esac
}

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(entry archive gpgid arguments packets agent)
for target in "${targets[@]}"; do
    echo "fuzz: building $target"
    # shellcheck disable=SC2046
    swiftc -parse-as-library -sanitize=fuzzer,address -O -module-name CofferFuzz -package-name coffer \
        -I Sources/CGcrypt -lgcrypt \
        $(sources_for "$target") "$(harness_for "$target")" -o "$out/fuzz-$target" 2>&1 \
        | { grep -v "Cannot export local symbol" || true; }
    corpus="$out/corpus-$target"
    rm -rf "$corpus" && mkdir -p "$corpus" && cp Fuzz/corpus/"$target"/* "$corpus"/
    echo "fuzz: running $target for ${seconds}s"
    "$out/fuzz-$target" -max_total_time="$seconds" -print_final_stats=1 "$corpus" 2>&1 | tail -n 4
done
echo "fuzz: ${#targets[@]} targets ran without a crash"
