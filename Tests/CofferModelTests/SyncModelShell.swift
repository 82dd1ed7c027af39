import CofferTestSupport

/// The shell side of the sync model: the helper files every command of a run goes through, and the
/// run's commands written down as a script that replays it.
///
/// Every command the model runs is one `sh` line, and the test runs exactly that line; so the script
/// printed for a failing seed is the run itself, not a description of it. The helpers find the sandbox
/// from their own place (`$S/run`, `$S/wrap/git`, `$S/editor`) and read `COFFER` and `SYNCMODEL_GIT`
/// from the environment.
struct SyncModelShell {
    /// How a command starts coffer: the three ways a user has it.
    enum Style: String, CaseIterable, Sendable {
        /// `coffer` found on `PATH`.
        case path
        /// `/…/coffer` by its absolute path, with no coffer on `PATH`.
        case full
        /// Only as `pass`: a symbolic link named pass, run by its absolute path, with no coffer on `PATH`.
        case pass
    }

    /// `$S/run STYLE STORE ARGUMENT...`: runs coffer (or `git -C`, style `git`) on the store `$S/STORE`.
    static let runHelper = """
        #!/bin/sh
        # run STYLE STORE ARGUMENT...: coffer on the store $S/STORE, started as a user would start it.
        S=$(cd "$(dirname "$0")" && pwd)
        style=$1 store=$2
        shift 2
        export PASSWORD_STORE_DIR="$S/$store"
        case $style in
        path) export PATH="$S/wrap:${COFFER%/*}:/usr/bin:/bin"; exec coffer "$@" ;;
        full) export PATH="$S/wrap:/usr/bin:/bin"; exec "$COFFER" "$@" ;;
        pass) export PATH="$S/wrap:/usr/bin:/bin"; exec "$S/bin/pass" "$@" ;;
        git) export PATH="$S/wrap:/usr/bin:/bin"; exec git -C "$S/$store" "$@" ;;
        esac
        echo "run: unknown style $style" >&2
        exit 2

        """

    /// `$S/wrap/git`: git, or with `SYNCMODEL_KILL="N PHASE"` a SIGKILL of the whole command (its process
    /// group) at its Nth git run that may change something (reading commands such as `rev-parse`,
    /// `status` or `config` are not counted): `before` it, `after` it, or that many seconds into it.
    static let gitWrapper = """
        #!/bin/sh
        # git; with SYNCMODEL_KILL="N PHASE" the process group is killed at the Nth git run that may change
        # something (PHASE: before, after, or seconds into the run). $S/kill-count counts those runs.
        if [ -n "${SYNCMODEL_KILL:-}" ]; then
            command=
            skip=
            for argument in "$@"; do
                if [ -n "$skip" ]; then skip=; continue; fi
                case $argument in
                -C | -c | --git-dir | --work-tree | --namespace) skip=1 ;;
                -*) ;;
                *) command=$argument; break ;;
                esac
            done
            case $command in
            rev-parse | status | config | diff | log | ls-files | ls-tree | cat-file | show | remote | rev-list | \
                merge-base | symbolic-ref | for-each-ref | var | version | check-attr | verify-commit | "") ;;
            *)
                counter="${0%/wrap/git}/kill-count"
                count=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 ))
                echo "$count" > "$counter"
                if [ "$count" = "${SYNCMODEL_KILL%% *}" ]; then
                    case ${SYNCMODEL_KILL#* } in
                    before) kill -KILL 0 ;;
                    after) "$SYNCMODEL_GIT" "$@"; kill -KILL 0 ;;
                    *) "$SYNCMODEL_GIT" "$@" & sleep "${SYNCMODEL_KILL#* }"; kill -KILL 0 ;;
                    esac
                fi
                ;;
            esac
        fi
        exec "$SYNCMODEL_GIT" "$@"

        """

    /// `$S/editor FILE`: an `EDITOR` that writes `SYNCMODEL_CONTENT` with `@@-` spelled as the value marker,
    /// so that no file of the sandbox holds the marker.
    static let editor = """
        #!/bin/sh
        # EDITOR for coffer edit: writes $SYNCMODEL_CONTENT, with @@- turned into the value marker.
        printf '%s' "$SYNCMODEL_CONTENT" | sed "s/@@-/MA""RK-/g" > "$1"

        """

    /// The helper files, relative to the sandbox, with their text.
    static let helpers: [(path: String, text: String)] = [
        ("run", runHelper), ("wrap/git", gitWrapper), ("editor", editor),
    ]

    /// The environment variables the helpers need, beyond the sandbox's own.
    static func environment(sandbox: String, coffer: String, git: String) -> [String: String] {
        ["S": sandbox, "COFFER": coffer, "SYNCMODEL_GIT": git]
    }

    /// `text` single-quoted for `sh`.
    static func quote(_ text: String) -> String {
        if !text.isEmpty && text.utf8.allSatisfy({ safeBytes.contains($0) }) { return text }
        return "'" + text.replacing("'", with: "'\\''") + "'"
    }

    /// Bytes that need no quoting.
    private static let safeBytes = Set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,".utf8)

    /// `printf` format text that writes exactly `bytes` (octal escapes for everything but plain ASCII).
    static func printfFormat(_ bytes: [UInt8]) -> String {
        var format = ""
        for byte in bytes {
            if (0x20...0x7e).contains(byte) && byte != UInt8(ascii: "%") && byte != UInt8(ascii: "\\")
                && byte != UInt8(ascii: "'")
            {
                format.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let octal = String(byte, radix: 8)
                format += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return "'" + format + "'"
    }

    /// The start of a replay script: a fresh sandbox with three throwaway keys and the helpers.
    static func preamble(seed: UInt64, summary: String) -> [String] {
        var lines = [
            "#!/bin/sh",
            "# coffer sync model, seed \(seed): \(summary)",
            "# Replay: COFFER=/path/to/coffer sh THIS-FILE  (kills marked 'timing' may land elsewhere)",
            "set -u",
            ": \"${COFFER:?set COFFER to the coffer executable}\"",
            "S=$(mktemp -d /tmp/syncmodel-XXXXXX)",
            "export S COFFER HOME=\"$S/home\" GNUPGHOME=\"$S/gnupg\" LC_ALL=C.UTF-8 TZ=UTC GIT_CONFIG_NOSYSTEM=1 EDITOR=false",
            "export SYNCMODEL_GIT=\"$(command -v git)\"",
            "mkdir -p \"$HOME\" \"$S/bin\" \"$S/wrap\" && mkdir -m 700 \"$GNUPGHOME\"",
            "printf '[user]\\n\\tname = Coffer Test\\n\\temail = test@coffer.test\\n[init]\\n\\tdefaultBranch = main\\n'"
                + " > \"$HOME/.gitconfig\"",
            "for name in one two three; do",
            "    gpg --batch --quiet --passphrase '' --quick-gen-key \"Coffer Test $name <$name@coffer.test>\" ed25519 sign never",
            "    fpr=$(gpg --batch --with-colons --list-keys \"$name@coffer.test\" | awk -F: '/^fpr/ {print $10; exit}')",
            "    gpg --batch --quiet --passphrase '' --quick-add-key \"$fpr\" cv25519 encr never",
            "done",
            "ln -s \"$COFFER\" \"$S/bin/pass\"",
        ]
        for helper in helpers {
            lines.append("cat > \"$S/\(helper.path)\" <<'EOF'")
            lines += helper.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(
                String.init)
            lines.append("EOF")
            lines.append("chmod +x \"$S/\(helper.path)\"")
        }
        lines.append("cd \"$S\"")
        return lines
    }

    /// The end of a replay script.
    static let epilogue = [
        "echo \"sandbox: $S (stop its agent with: GNUPGHOME=$S/gnupg gpgconf --kill all)\""
    ]
}
