/// The bash that runs a pass extension (`NAME.bash`): pass 1.7.4's variables and helper functions, as
/// pass's documentation and the extensions people use rely on them, written for coffer.
///
/// bash runs it as `bash -c PRELUDE ARGV0 COFFER SYSTEM_EXTENSION_DIR PROGRAM GETOPT SHRED BASE64 COMMAND
/// ARGUMENT...`. It sets pass's variables from the environment as pass does, defines the helpers, then
/// sources the extension from inside `cmd_extension`, as pass does (so an extension may use `local`),
/// and exits 0 unless the extension exited itself.
///
/// Helpers that read or change the store (`cmd_show`, `cmd_insert`, `cmd_delete`, `cmd_copy_move`,
/// `reencrypt_path`, `verify_file`, ...) run coffer again, by its absolute path and under the
/// extension's program name, so coffer's store lock, atomic writes, messages and commits apply; `clip`
/// and `qrcode` hand their text to coffer on a pipe, never as an argument. The git helpers run git as
/// pass's do.
enum ExtensionPrelude {
    /// The script.
    static let script = #"""
        __coffer_executable=$1 SYSTEM_EXTENSION_DIR=$2 PROGRAM=$3 GETOPT=$4 SHRED=$5 BASE64=$6
        shift 6

        set -o pipefail
        umask "${PASSWORD_STORE_UMASK:-077}"

        PREFIX="${PASSWORD_STORE_DIR:-$HOME/.password-store}"
        EXTENSIONS="${PASSWORD_STORE_EXTENSIONS_DIR:-$PREFIX/.extensions}"
        X_SELECTION="${PASSWORD_STORE_X_SELECTION:-clipboard}"
        CLIP_TIME="${PASSWORD_STORE_CLIP_TIME:-45}"
        GENERATED_LENGTH="${PASSWORD_STORE_GENERATED_LENGTH:-25}"
        CHARACTER_SET="${PASSWORD_STORE_CHARACTER_SET:-[:punct:][:alnum:]}"
        CHARACTER_SET_NO_SYMBOLS="${PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS:-[:alnum:]}"

        unset GIT_DIR GIT_WORK_TREE GIT_NAMESPACE GIT_INDEX_FILE GIT_INDEX_VERSION GIT_OBJECT_DIRECTORY \
            GIT_COMMON_DIR
        export GIT_CEILING_DIRECTORIES="$PREFIX/.."

        # gpg as pass calls it: gpg2 when there is one, pass's options after the user's.
        GPG=gpg
        if command -v gpg2 >/dev/null 2>&1; then GPG=gpg2; fi
        GPG_OPTS=($PASSWORD_STORE_GPG_OPTS --quiet --yes --compress-algo=none --no-encrypt-to)
        if [[ -n $GPG_AGENT_INFO || $GPG == gpg2 ]]; then GPG_OPTS+=(--batch --use-agent); fi
        export GPG_TTY="${GPG_TTY:-$(tty 2>/dev/null)}"

        # coffer itself, under the extension's program name, with the store as the extension sees it now:
        # pass's cmd_* read these as shell variables of the extension's own shell, exported or not, so
        # each call gets them in its environment. GPG_OPTS, an array, goes as PASSWORD_STORE_GPG_OPTS
        # without the options pass adds itself (coffer adds them again).
        __coffer() {
            (
                local option gpg_options=()
                for option in "${GPG_OPTS[@]}"; do
                    case $option in
                    --quiet | --yes | --compress-algo=none | --no-encrypt-to | --batch | --use-agent) ;;
                    *) gpg_options+=("$option") ;;
                    esac
                done
                export PASSWORD_STORE_DIR="$PREFIX" PASSWORD_STORE_EXTENSIONS_DIR="$EXTENSIONS" \
                    PASSWORD_STORE_X_SELECTION="$X_SELECTION" PASSWORD_STORE_CLIP_TIME="$CLIP_TIME" \
                    PASSWORD_STORE_GENERATED_LENGTH="$GENERATED_LENGTH" \
                    PASSWORD_STORE_CHARACTER_SET="$CHARACTER_SET" \
                    PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS="$CHARACTER_SET_NO_SYMBOLS" \
                    PASSWORD_STORE_GPG_OPTS="${gpg_options[*]}" \
                    PASSWORD_STORE_KEY PASSWORD_STORE_SIGNING_KEY EDITOR TMPDIR
                exec -a "$PROGRAM" "$__coffer_executable" "$@"
            )
        }
        # The same, for the helpers after which pass stops when they fail.
        __coffer_or_exit() {
            __coffer "$@" || exit $?
        }

        die() {
            echo "$@" >&2
            exit 1
        }

        yesno() {
            if [[ -t 0 ]]; then
                local answer
                read -r -p "$1 [y/N] " answer
                [[ $answer == [yY] ]] || exit 1
            fi
            return 0
        }

        check_sneaky_paths() {
            local name
            for name in "$@"; do
                case "/$name/" in
                */../*) die "Error: You've attempted to pass a sneaky path to pass. Go home." ;;
                esac
            done
        }

        verify_file() {
            [[ -n $PASSWORD_STORE_SIGNING_KEY ]] || return 0
            __coffer_or_exit extension-helper verify "$1"
        }

        set_gpg_recipients() {
            GPG_RECIPIENT_ARGS=()
            GPG_RECIPIENTS=()
            local id
            if [[ -n $PASSWORD_STORE_KEY ]]; then
                for id in $PASSWORD_STORE_KEY; do
                    GPG_RECIPIENT_ARGS+=(-r "$id")
                    GPG_RECIPIENTS+=("$id")
                done
                return
            fi
            local folder="$PREFIX/$1"
            while [[ $folder != "$PREFIX" && ! -f $folder/.gpg-id ]]; do
                folder="${folder%/*}"
            done
            local list="$folder/.gpg-id"
            if [[ ! -f $list ]]; then
                printf 'Error: You must run:\n    %s init your-gpg-id\nbefore you may use the password store.\n\n' \
                    "$PROGRAM" >&2
                cmd_usage
                exit 1
            fi
            verify_file "$list"
            while read -r id; do
                id="${id%%#*}"
                [[ -n $id ]] || continue
                GPG_RECIPIENT_ARGS+=(-r "$id")
                GPG_RECIPIENTS+=("$id")
            done <"$list"
        }

        set_git() {
            INNER_GIT_DIR="${1%/*}"
            while [[ ! -d $INNER_GIT_DIR && ${INNER_GIT_DIR%/*}/ == "${PREFIX%/}/"* ]]; do
                INNER_GIT_DIR="${INNER_GIT_DIR%/*}"
            done
            if [[ $(git -C "$INNER_GIT_DIR" rev-parse --is-inside-work-tree 2>/dev/null) != true ]]; then
                INNER_GIT_DIR=""
            fi
        }

        git_commit() {
            [[ -n $INNER_GIT_DIR ]] || return
            local sign=()
            if [[ $(git -C "$INNER_GIT_DIR" config --bool --get pass.signcommits) == true ]]; then sign=(-S); fi
            git -C "$INNER_GIT_DIR" commit "${sign[@]}" -m "$1"
        }

        git_add_file() {
            [[ -n $INNER_GIT_DIR ]] || return
            git -C "$INNER_GIT_DIR" add "$1" || return
            [[ -n $(git -C "$INNER_GIT_DIR" status --porcelain "$1") ]] || return
            git_commit "$2"
        }

        reencrypt_path() {
            __coffer_or_exit extension-helper reencrypt "$1"
        }

        # pass's clip dies when it cannot copy; the exit is in this shell, not in the pipeline's subshell.
        clip() {
            printf '%s' "$1" | __coffer extension-helper clip "$2" || exit $?
        }

        # pass's qrcode never dies: its status is returned.
        qrcode() {
            printf '%s' "$1" | __coffer extension-helper qrcode "$2"
        }

        tmpdir() {
            [[ -n $SECURE_TMPDIR ]] && return
            local template="$PROGRAM.XXXXXXXXXXXXX"
            if [[ -d /dev/shm && -w /dev/shm && -x /dev/shm ]]; then
                SECURE_TMPDIR="$(mktemp -d "/dev/shm/$template")" || die "Error: cannot make a private folder."
                __coffer_remove_tmpdir() {
                    rm -rf "$SECURE_TMPDIR"
                }
            else
                if [[ $1 != nowarn ]]; then
                    yesno "$(printf '%s\n%s\n%s\n\n%s' \
                        "Your system does not have /dev/shm, which means that it may" \
                        "be difficult to entirely erase the temporary non-encrypted" \
                        "password file after editing." "Are you sure you would like to continue?")"
                fi
                SECURE_TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/$template")" || die "Error: cannot make a private folder."
                __coffer_remove_tmpdir() {
                    find "$SECURE_TMPDIR" -type f -exec $SHRED {} +
                    rm -rf "$SECURE_TMPDIR"
                }
            fi
            # EXIT only, as pass: a trap on INT or TERM that does not exit would swallow the signal.
            trap __coffer_remove_tmpdir EXIT
        }

        cmd_version() { __coffer version; }
        cmd_usage() { __coffer help; }
        cmd_init() { __coffer_or_exit init "$@"; }
        cmd_show() { __coffer_or_exit show "$@"; }
        cmd_find() {
            [[ $# -eq 0 ]] && die "Usage: $PROGRAM $COMMAND pass-names..."
            __coffer find "$@"
        }
        cmd_grep() {
            [[ $# -lt 1 ]] && die "Usage: $PROGRAM $COMMAND [GREPOPTIONS] search-string"
            __coffer grep "$@"
        }
        cmd_insert() { __coffer_or_exit insert "$@"; }
        cmd_edit() { __coffer_or_exit edit "$@"; }
        cmd_generate() { __coffer_or_exit generate "$@"; }
        cmd_delete() { __coffer_or_exit rm "$@"; }
        # pass's: dies when `git init` fails or the store is no git repository, else git's status.
        cmd_git() {
            set_git "$PREFIX/"
            if [[ $1 == init ]]; then
                __coffer git "$@" || exit 1
            elif [[ -n $INNER_GIT_DIR ]]; then
                __coffer git "$@"
            else
                die "Error: the password store is not a git repository. Try \"$PROGRAM git init\"."
            fi
        }
        cmd_copy_move() {
            local how=$1
            shift
            if [[ $how == copy ]]; then __coffer_or_exit cp "$@"; else __coffer_or_exit mv "$@"; fi
        }

        # The extension named by $1: the user's (only when extensions are enabled), then the system's.
        # pass's, with its local variables, which the extension sees ($extension is its own path).
        cmd_extension() {
            check_sneaky_paths "$1"
            local user_extension system_extension extension
            [[ -n $SYSTEM_EXTENSION_DIR ]] && system_extension="$SYSTEM_EXTENSION_DIR/$1.bash"
            [[ $PASSWORD_STORE_ENABLE_EXTENSIONS == true ]] && user_extension="$EXTENSIONS/$1.bash"
            if [[ -n $user_extension && -f $user_extension && -x $user_extension ]]; then
                verify_file "$user_extension"
                extension="$user_extension"
            elif [[ -n $system_extension && -f $system_extension && -x $system_extension ]]; then
                extension="$system_extension"
            else
                return 1
            fi
            shift
            source "$extension" "$@"
            return 0
        }

        cmd_extension_or_show() {
            if ! cmd_extension "$@"; then
                COMMAND=show
                cmd_show "$@"
            fi
        }

        COMMAND="$1"
        cmd_extension_or_show "$@"
        exit 0
        """#
}
