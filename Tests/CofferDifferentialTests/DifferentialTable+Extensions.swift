import CofferTestSupport

// pass's bash extensions run by pass and by coffer: Debian's pass-extension-tail and -audit, PyPI's
// pass-import, and extensions of the user's folder that use pass's helpers, die or exit.

extension DifferentialTable {
    /// A user extension (`helpers.bash`) that reads pass's variables and calls the helpers extensions use:
    /// `check_sneaky_paths`, `cmd_show`, `cmd_insert`, `set_gpg_recipients`, `$GPG` with `GPG_OPTS` and
    /// the recipients, `set_git` and `git_add_file`; plus extensions that die, exit with a status, fail
    /// without exiting, use `tmpdir` and `yesno`, and one that is not executable.
    static let userExtensions =
        basicGit + #"""
            mkdir -p "$STORE/.extensions"
            cat > "$STORE/.extensions/helpers.bash" <<'EOF'
            local name="$1"
            check_sneaky_paths "$name"
            echo "PROGRAM=$PROGRAM COMMAND=$COMMAND args=$# X=$X_SELECTION CLIP=$CLIP_TIME LENGTH=$GENERATED_LENGTH"
            echo "SET=$CHARACTER_SET NOSYM=$CHARACTER_SET_NO_SYMBOLS GPG=$GPG OPTS=${GPG_OPTS[*]}"
            echo "PREFIX=${PREFIX#$HOME/} EXTENSIONS=${EXTENSIONS#$HOME/} SYSTEM=$SYSTEM_EXTENSION_DIR umask=$(umask)"
            echo "GETOPT=$GETOPT SHRED=$SHRED BASE64=$BASE64 ceiling=${GIT_CEILING_DIRECTORIES#$HOME/}"
            cmd_show "$name"
            printf 'from the extension\nsecond line\n' | cmd_insert -m "$name-copy"
            set_gpg_recipients "$(dirname -- "$name")"
            echo "recipients: ${#GPG_RECIPIENTS[@]} args: ${#GPG_RECIPIENT_ARGS[@]}"
            printf 'raw\n' | $GPG -e "${GPG_RECIPIENT_ARGS[@]}" -o "$PREFIX/$name-raw.gpg" "${GPG_OPTS[@]}"
            set_git "$PREFIX/$name-raw.gpg"
            echo "git: ${INNER_GIT_DIR#$HOME/}"
            git_add_file "$PREFIX/$name-raw.gpg" "Add raw copy of $name."
            cmd_show "$name-raw"
            echo done
            EOF
            printf 'die "Error: the extension gave up on $1"\necho never\n' > "$STORE/.extensions/dies.bash"
            printf 'echo leaving with 3\nexit 3\n' > "$STORE/.extensions/exits.bash"
            printf 'echo last command fails\nfalse\n' > "$STORE/.extensions/fails.bash"
            printf 'tmpdir\n[[ $SECURE_TMPDIR == /dev/shm/* && -d $SECURE_TMPDIR ]] && echo private folder\nyesno "Go on?"\necho answered\n' \
                > "$STORE/.extensions/private.bash"
            printf 'cmd_show "$@"\ncmd_find bank\ncmd_git log --format=%%s -1\n' > "$STORE/.extensions/reads.bash"
            printf 'cmd_copy_move copy "$1" "$2"\ncmd_copy_move move "$2" "$3"\ncmd_delete -f "$3"\n' \
                > "$STORE/.extensions/changes.bash"
            printf 'echo not run\n' > "$STORE/.extensions/plain.bash"
            chmod +x "$STORE/.extensions/"{helpers,dies,exits,fails,private,reads,changes}.bash
            printf '#!/bin/sh\necho "tail from the user folder: $*"\n' > "$STORE/.extensions/tail.bash"
            chmod +x "$STORE/.extensions/tail.bash"

            """#

    /// Debian's pass-audit with a stand-in for the haveibeenpwned range API (``pwnedRangeStub``). The
    /// command runs under pass's name (`$HOME/bin/coffer` runs the program under test as `pass`, as for
    /// people who installed coffer as pass): there pass's extension wins over coffer's own `audit`.
    static let auditStub =
        basic + #"""
            ins weak 'password\n'
            ins strong 'Vq8#pL2!zR7@mK4$wX9&\n'
            ins twin 'site password\n'
            mkdir -p "$HOME/stub"
            cat > "$HOME/stub/requests.py" <<'EOF'
            \#(pwnedRangeStub)
            EOF
            mkdir -p "$HOME/bin" && ln -s ../../bin/coffer "$HOME/bin/pass"
            printf '#!/bin/bash\nexec -a pass "$HOME/../bin/coffer" "$@"\n' > "$HOME/bin/coffer"
            chmod +x "$HOME/bin/coffer"

            """#

    /// The stand-in for haveibeenpwned's range API (``TestFiles/pwnedRangeStub``).
    static let pwnedRangeStub = TestFiles.pwnedRangeStub

    /// A Bitwarden export and pass-import's `import.bash` in the user's extensions folder; `pass` on
    /// `PATH` (`$HOME/bin/pass`, a link to the sandbox's `coffer`) is the program under test, which pass-import runs to write the entries.
    static let importStore =
        basicGit + #"""
            mkdir -p "$STORE/.extensions"
            cp /usr/local/lib/coffer-test/pass-import/lib/python3*/site-packages/usr/lib/password-store/extensions/import.bash \
                "$STORE/.extensions/import.bash"
            chmod +x "$STORE/.extensions/import.bash"
            printf '%s\n' 'folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp' \
                ',,login,Example,,,0,https://example.com,alice,Vq8#pL2!zR7@mK4$wX9&,' \
                'Work,,login,Mail,a note,,0,https://mail.example,bob,another-Long-passphrase-42,' > "$HOME/export.csv"
            mkdir -p "$HOME/bin" && ln -s ../../bin/coffer "$HOME/bin/pass"

            """#

    /// Extensions (in a store without git) whose helper dies, or should: `cmd_git` outside a git store,
    /// `cmd_find` and `cmd_grep` without arguments, `clip` without a display; one that sets
    /// `PASSWORD_STORE_KEY` without exporting it before `cmd_insert`; one that exits 139.
    static let dyingHelpers =
        basic + #"""
            mkdir -p "$STORE/.extensions"
            printf 'cmd_git push\necho published\n' > "$STORE/.extensions/publish.bash"
            printf 'cmd_find\necho found\n' > "$STORE/.extensions/lookup.bash"
            printf 'cmd_grep\necho searched\n' > "$STORE/.extensions/scan.bash"
            printf 'clip "$(cmd_show "$1" | head -1)" "$1"\necho copied\ncmd_delete -f "$1"\n' \
                > "$STORE/.extensions/copydel.bash"
            printf 'PASSWORD_STORE_KEY=%s\n' "$K2" > "$STORE/.extensions/share.bash"
            cat >> "$STORE/.extensions/share.bash" <<'EOF'
            cmd_insert -m -f "shared/$1" <<<for-K2-only
            $GPG --batch --list-packets "$PREFIX/shared/$1.gpg" 2>/dev/null | sed -n 's/.* keyid \([0-9A-F]*\).*/\1/p'
            EOF
            printf 'echo crashing\nexit 139\n' > "$STORE/.extensions/high.bash"
            chmod +x "$STORE/.extensions/"{publish,lookup,scan,copydel,share,high}.bash

            """#

    private static let enabled: [String: String?] = ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"]

    /// The extension scenarios.
    static let extensions: [DifferentialScenario] = [
        make("ext.tail", basic, ["tail", "email/work"]),
        make("ext.tail-missing", basic, ["tail", "nope"]),
        make("ext.tail-no-argument", basic, ["tail"]),
        make("ext.tail-sneaky", basic, ["tail", "../x"]),
        make("ext.user-wins-over-system", userExtensions, ["tail", "a"], environment: enabled),
        make("ext.system-without-switch", userExtensions, ["tail", "bank"]),
        make("ext.helpers", userExtensions, ["helpers", "email/work"], environment: enabled, locales: both),
        make(
            "ext.helpers-settings", userExtensions, ["helpers", "bank"],
            environment: [
                "PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "PASSWORD_STORE_X_SELECTION": "primary",
                "PASSWORD_STORE_CLIP_TIME": "9", "PASSWORD_STORE_GENERATED_LENGTH": "7",
                "PASSWORD_STORE_CHARACTER_SET": "abc", "PASSWORD_STORE_UMASK": "027",
                "PASSWORD_STORE_GPG_OPTS": "--no-greeting",
            ]),
        make("ext.helpers-sneaky", userExtensions, ["helpers", "a/../../b"], environment: enabled),
        make("ext.helpers-missing-entry", userExtensions, ["helpers", "nope"], environment: enabled),
        make("ext.dies", userExtensions, ["dies", "now"], environment: enabled),
        make("ext.exits", userExtensions, ["exits"], environment: enabled),
        make("ext.last-command-fails", userExtensions, ["fails"], environment: enabled),
        make("ext.tmpdir-and-yesno", userExtensions, ["private"], environment: enabled),
        make("ext.reads", userExtensions, ["reads", "bank"], environment: enabled),
        make("ext.changes", userExtensions, ["changes", "bank", "copy", "moved"], environment: enabled),
        make("ext.not-executable", userExtensions, ["plain"], environment: enabled),
        make("ext.git-not-a-repository", dyingHelpers, ["publish"], environment: enabled),
        make("ext.find-without-arguments", dyingHelpers, ["lookup"], environment: enabled),
        make("ext.grep-without-arguments", dyingHelpers, ["scan"], environment: enabled),
        make(
            "ext.clip-without-display", dyingHelpers, ["copydel", "bank"],
            environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "DISPLAY": nil, "WAYLAND_DISPLAY": nil]),
        make("ext.unexported-key", dyingHelpers, ["share", "x"], environment: enabled),
        make("ext.exit-139", dyingHelpers, ["high"], environment: enabled),
        make("ext.not-enabled", userExtensions, ["helpers", "bank"]),
        make(
            "ext.unsigned-with-signing-key", userExtensions, ["helpers", "bank"],
            environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "PASSWORD_STORE_SIGNING_KEY": "$K1"]),
        make(
            "ext.audit", auditStub, ["audit"],
            environment: [
                "PYTHONPATH": "$HOME/stub", "PYTHONDONTWRITEBYTECODE": "1",
                "PATH": "$HOME/bin:$SANDBOX/bin:/usr/bin:/bin",
            ]),
        make(
            "ext.import", importStore, ["import", "bitwarden", "$HOME/export.csv"],
            environment: [
                "PASSWORD_STORE_ENABLE_EXTENSIONS": "true",
                "PATH": "$HOME/bin:$SANDBOX/bin:/usr/local/lib/coffer-test/pass-import/bin:/usr/bin:/bin",
                "PYTHONDONTWRITEBYTECODE": "1",
            ]),
    ]
}
