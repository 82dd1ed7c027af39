import CofferTestSupport

// The differential table: every scenario that `DifferentialTests` runs with pass and with coffer.
//
// A scenario is a setup (bash, run with the real pass in both sandboxes), the command under test and its
// standard input. Setups use `ins NAME CONTENT` (printf %b escapes) and `gitstore` from the prelude in
// `DifferentialSandbox`, and `$K1`…, `$E1`…, `$STORE`, `$SANDBOX`, `$GNUPGHOME`.

/// Every scenario of the differential suite, grouped by command.
enum DifferentialTable {
    /// The one table.
    static var scenarios: [DifferentialScenario] {
        general + initialisation + listing + showing + searching + grepping + inserting + insertingOnTerminal
            + editing + generating + removing + moving + copying + git + environment + extensions + otp
    }

    /// Where coffer deliberately differs from pass, with the reason (for the README): the scenarios marked
    /// `deliberate`, then the differences ignored in every scenario (``Tolerance``).
    static var deliberateDifferences: [(name: String, reason: String)] {
        scenarios.compactMap { scenario in scenario.deliberate.map { (scenario.name, $0) } }
            + Tolerance.rules.map { (name: "every scenario: " + $0.0, reason: $0.1) }
    }

    // MARK: - Stores

    /// Key 1 for the whole store; entries at several depths, a name with a space and a unicode name.
    static let basic = #"""
        pass init "$K1" >/dev/null
        ins bank 'bank-password\npin: 1234\n'
        ins email/work 'work-password\nlogin: alice\nurl: https://work.example\n'
        ins email/home 'home-password\n'
        ins 'social/my site' 'site password\n'
        ins web/ünïcødé 'unicode-password\n'

        """#

    /// ``basic`` in a git repository (made by `pass git init`).
    static let basicGit = basic + "gitstore\n"

    /// Only `pass init`.
    static let empty = "pass init \"$K1\" >/dev/null\n"

    /// A file and a folder of the same name, a leading dash, spaces, unicode, a glob character, an empty
    /// folder.
    static let tricky = #"""
        pass init "$K1" >/dev/null
        ins foo 'foo-file\n'
        ins foo/bar 'foo-bar\n'
        ins -dash 'dash-entry\n'
        ins 'with space/inner name' 'spaced\n'
        ins 'ünï/çødé' 'unicode\n'
        ins 'star*name' 'star\n'
        mkdir "$STORE/empty-folder"

        """#

    /// A link to an entry, a link to a folder and a dangling link.
    static let symlinks = #"""
        pass init "$K1" >/dev/null
        ins target 'target-password\n'
        ins dir/inner 'inner-password\n'
        ln -s target.gpg "$STORE/link.gpg"
        ln -s dir "$STORE/dirlink"
        ln -s /nonexistent/file.gpg "$STORE/dangling.gpg"

        """#

    /// Two links to one folder (a diamond), a third from the top, and a folder holding links only.
    static let diamond = #"""
        pass init "$K1" >/dev/null
        ins shared/inner 'inner-password\n'
        ins top 'top-password\n'
        mkdir "$STORE/pair"
        ln -s ../shared "$STORE/pair/one"
        ln -s ../shared "$STORE/pair/two"
        ln -s shared "$STORE/alias"

        """#

    /// Links back up the tree: to a folder's parent, to the folder itself, and one from the top into it.
    static let linkLoop = #"""
        pass init "$K1" >/dev/null
        ins a/b/deep 'deep-password\n'
        ln -s .. "$STORE/a/b/up"
        ln -s ../a "$STORE/a/self"
        ln -s a "$STORE/top"

        """#

    /// A ladder of 24 diamonds: folders d0 to d24, each dN holding links a and b to d(N+1), so 2^24 paths
    /// through the links lead to d24.
    static let ladder = #"""
        pass init "$K1" >/dev/null
        ins d0/first 'first-password\n'
        ins d24/last 'last-password\n'
        for i in $(seq 0 23); do
            mkdir -p "$STORE/d$i"
            ln -s "../d$((i + 1))" "$STORE/d$i/a"
            ln -s "../d$((i + 1))" "$STORE/d$i/b"
        done

        """#

    /// ``basic`` plus dotfiles, a hidden entry and files that are not entries.
    static let extras =
        basic + #"""
            mkdir -p "$STORE/.extensions" "$STORE/.public-keys"
            printf 'key\n' > "$STORE/.public-keys/alice.asc"
            printf '{}\n' > "$STORE/.browserpass.json"
            printf 'notes\n' > "$STORE/notes.txt"
            ins email/.hidden 'hidden-password\n'
            ins 'intl/naïve' 'pässword-ü\ncafé: crème brûlée\nlogin: zoë_1\n'

            """#

    /// Names whose order differs between byte order and other collations.
    static let sorting = #"""
        pass init "$K1" >/dev/null
        for name in B a Z _under 10 9 é 'a b' A a-b a.b; do ins "$name" "$name\n"; done

        """#

    /// Two keys at the top, key 3 for `team/` (its own `.gpg-id`).
    static let multi = #"""
        pass init "$K1" "$K2" >/dev/null
        ins shared 'shared-password\n'
        ins team/secret 'team-password\n'
        pass init -p team "$K3" >/dev/null
        ins team/deeper/plan 'plan\n'

        """#

    /// A `.gpg-id` with comments and blank lines.
    static let comments = #"""
        pass init "$K1" >/dev/null
        mkdir -p "$STORE/sub"
        printf '# the team\n\n%s # two\n   \n%s\n' "$K2" "$K3" > "$STORE/sub/.gpg-id"
        ins sub/existing 'existing\n'

        """#

    /// A gpg.conf group `team` = keys 2 and 3.
    static let groupLine = #"printf 'group team = %s %s\n' "$K2" "$K3" >> "$GNUPGHOME/gpg.conf""# + "\n"

    /// A store initialised for the group `team`.
    static let groups = groupLine + "pass init team >/dev/null\nins member 'member-password\\n'\n"

    /// Entries but no `.gpg-id` anywhere.
    static let noGPGID = #"""
        pass init "$K1" >/dev/null
        ins a 'a-password\n'
        ins sub/b 'b-password\n'
        rm "$STORE/.gpg-id"

        """#

    /// A store whose `.gpg-id` is signed with key 1.
    static let signed = #"""
        PASSWORD_STORE_SIGNING_KEY="$K1" pass init "$K1" >/dev/null
        ins bank 'bank-password\n'

        """#

    /// ``basic`` plus a plain file where an entry's folder could be.
    static let plainFile = basic + "printf 'not an entry\\n' > \"$STORE/plainfile\"\n"

    /// A deep tree.
    static let deep = #"""
        pass init "$K1" >/dev/null
        ins a/b/c/d 'deep\n'
        ins a/b/x 'x\n'
        ins a/y 'y\n'

        """#

    /// Entries without a final newline, with NUL and invalid UTF-8, empty, with blank lines.
    static let binary = #"""
        pass init "$K1" >/dev/null
        printf 'no newline at end' | pass insert -m -f nonl >/dev/null
        printf 'a\000b\377c\n' | pass insert -m -f binary >/dev/null
        printf '' | pass insert -m -f empty >/dev/null
        printf 'first\n\n\nfourth\n' | pass insert -m -f blanks >/dev/null

        """#

    /// ``basic`` plus lines for grep: a line starting with a dash, a hidden entry.
    static let grepStore =
        basic + #"""
            ins notes 'line one\n-flag value\nurl: https://notes.example\n'
            ins email/.hidden 'hidden-password\n'
            ins 'intl/naïve' 'pässword-ü\ncafé: crème brûlée\nlogin: zoë_1\n'

            """#

    /// ``basic`` plus an entry for key 3 whose secret key is then deleted.
    static let noSecretKey =
        basic + #"""
            printf 'lost\n' | PASSWORD_STORE_KEY="$K3" pass insert -m -f lost >/dev/null
            gpg --batch --yes --delete-secret-keys "$K3" 2>/dev/null

            """#

    /// ``basicGit`` with a git repository of its own in `email/`.
    static let innerGit =
        basic + #"""
            git -C "$STORE/email" init -q
            git -C "$STORE/email" add -A
            git -C "$STORE/email" commit -q -m 'inner start'

            """#

    /// ``basic`` plus an extension `hello` in `$STORE/.extensions`.
    static let extensionStore =
        basic + #"""
            mkdir -p "$STORE/.extensions"
            printf '#!/usr/bin/env bash\necho "hello from the extension: $*"\necho "PROGRAM=$PROGRAM COMMAND=$COMMAND"\n' \
                > "$STORE/.extensions/hello.bash"
            chmod +x "$STORE/.extensions/hello.bash"

            """#

    // MARK: - Helpers

    static func make(
        _ name: String, _ setup: String, _ arguments: [String], input: DifferentialScenario.Input = .pipe(""),
        environment: [String: String?] = [:], locales: [TestLocale] = [.utf8],
        generated: GeneratedPassword? = nil, unordered: Bool = false, deliberate: String? = nil
    ) -> DifferentialScenario {
        DifferentialScenario(
            name: name, setup: setup, arguments: arguments, input: input, environment: environment,
            locales: locales, generated: generated, unordered: unordered, deliberate: deliberate)
    }

    private static func typed(_ text: String) -> DifferentialScenario.Input { .pipe(text) }

    static let both = TestLocale.both

    // MARK: - help, version, dispatch

    static let general: [DifferentialScenario] = [
        make("help.word", empty, ["help"]),
        make("help.option", empty, ["--help"]),
        make("help.extra-arguments", empty, ["help", "me"]),
        make(
            "help.environment", empty, ["help"],
            environment: [
                "PASSWORD_STORE_CLIP_TIME": "7", "PASSWORD_STORE_GENERATED_LENGTH": "30", "EDITOR": "vim -f",
            ]),
        make("version.word", empty, ["version"]),
        make("version.option", empty, ["--version"]),
        make("version.extra-arguments", empty, ["version", "x"]),
        make("dispatch.no-store", "", []),
        make("dispatch.lists-store", basic, [], locales: both),
        make("dispatch.shows-entry", basic, ["email/work"]),
        make("dispatch.unknown-word", basic, ["frobnicate"]),
        make("dispatch.double-dash", basic, ["--", "bank"]),
        make("dispatch.clip-without-name", basic, ["-c"]),
    ]

    // MARK: - init

    static let initialisation: [DifferentialScenario] = [
        make("init.fresh", "", ["init", "$K1"]),
        make("init.fresh-two-keys", "", ["init", "$K1", "$K2"]),
        make("init.by-email", "", ["init", "$E1"]),
        make("init.user-id", "", ["init", "Coffer Test Two <two@coffer.test>"]),
        make("init.same-key", basic, ["init", "$K1"]),
        make("init.same-key-git", basicGit, ["init", "$K1"]),
        make("init.reencrypt", basic, ["init", "$K2"], unordered: true),
        make("init.reencrypt-add-key", basic, ["init", "$K1", "$K2"], unordered: true),
        make("init.reencrypt-git", basicGit, ["init", "$K2"], unordered: true),
        make("init.path-short", basic, ["init", "-p", "email", "$K2"], unordered: true),
        make("init.path-long-equals", basic, ["init", "--path=email", "$K2"], unordered: true),
        make("init.path-long-separate", basic, ["init", "--path", "email", "$K2"], unordered: true),
        make("init.path-trailing-slash", basic, ["init", "-p", "email/", "$K2"], unordered: true),
        make("init.path-new-folder", basic, ["init", "-p", "newteam", "$K3"]),
        make("init.path-git", basicGit, ["init", "-p", "email", "$K2"], unordered: true),
        make("init.path-keeps-sub-store", multi, ["init", "$K2"], unordered: true),
        make("init.no-arguments", basic, ["init"]),
        make("init.path-without-id", basic, ["init", "-p", "email"]),
        make("init.invalid-option", basic, ["init", "-x", "$K1"]),
        make(
            "init.remove-gpg-id", basic, ["init", ""],
            deliberate: "init \"\" that would leave entries without recipients changes nothing and says why; "
                + "pass removes the .gpg-id (and commits it) before failing"),
        make("init.remove-gpg-id-path", multi, ["init", "-p", "team", ""]),
        make(
            "init.remove-gpg-id-git", basicGit, ["init", ""],
            deliberate: "init \"\" that would leave entries without recipients changes nothing and says why; "
                + "pass removes the .gpg-id (and commits it) before failing"),
        make("init.remove-missing", basic, ["init", "-p", "email", ""]),
        make(
            "init.remove-empties-folder", basic + "pass init -p Zeta \"$K1\" >/dev/null\n",
            ["init", "-p", "Zeta", ""], locales: both),
        // Soak seed 8121652605967977547: find names the removed folder quoted for the locale (octal
        // escapes for what is not printable in it, a backslash before a backslash or the closing quote).
        make(
            "init.remove-empties-folder-quoting",
            basic + "pass init -p 'ünï\\x' \"$K1\" >/dev/null\n",
            ["init", "-p", "ünï\\x", ""], locales: both),
        make(
            "init.remove-empties-folder-quote-mark",
            basic + "pass init -p \"it's\" \"$K1\" >/dev/null\n", ["init", "-p", "it's", ""], locales: both),
        make("init.sneaky-path", basic, ["init", "-p", "../escape", "$K1"]),
        make("init.path-is-file", plainFile, ["init", "-p", "plainfile", "$K1"]),
        make("init.group-empty-store", groupLine, ["init", "team"]),
        make("init.group-reencrypt", basic + groupLine, ["init", "team"], unordered: true),
        make("init.unknown-key-empty-store", "", ["init", "nobody@nowhere.test"]),
        make(
            "init.unknown-key-with-entries", basic, ["init", "nobody@nowhere.test"], unordered: true,
            deliberate:
                "coffer changes nothing when an entry cannot be encrypted for the new recipients, says why "
                + "in one line and exits 1; pass writes the .gpg-id, prints gpg's errors for every entry and exits 0"
        ),
        make(
            "init.signing-key", basicGit, ["init", "$K1"], environment: ["PASSWORD_STORE_SIGNING_KEY": "$K1"]),
        make("init.comments-in-sub-gpg-id", comments, ["init", "$K1"]),
    ]

    // MARK: - ls, list, show of folders

    static let listing: [DifferentialScenario] = [
        make("ls.basic", basic, ["ls"], locales: both),
        make("ls.list-alias", basic, ["list"]),
        make("ls.show-without-name", basic, ["show"]),
        make("ls.subfolder", basic, ["ls", "email"], locales: both),
        make("ls.subfolder-trailing-slash", basic, ["ls", "email/"]),
        make("ls.deep-subfolder", deep, ["ls", "a/b"]),
        make("ls.deep", deep, ["ls"], locales: both),
        make("ls.missing-folder", basic, ["ls", "nope"]),
        make("ls.initialised-empty-store", empty, ["ls"]),
        make("ls.no-store", "", ["ls"]),
        make("ls.without-gpg-id", noGPGID, ["ls"]),
        make("ls.file-and-folder-same-name", tricky, ["ls"], locales: both),
        make("ls.symlinks", symlinks, ["ls"], locales: both),
        make("ls.folder-symlink", symlinks, ["ls", "dirlink"]),
        // tree keeps the device and inode of every folder it lists: a link to one listed already is drawn
        // once, marked "[recursive, not followed]"; a folder itself is always listed.
        make("ls.diamond", diamond, ["ls"], locales: both),
        make("ls.diamond-subfolder", diamond, ["ls", "pair"]),
        make("ls.link-loop", linkLoop, ["ls"], locales: both),
        make("ls.link-loop-subfolder", linkLoop, ["ls", "a/b"]),
        make("ls.ladder", ladder, ["ls"]),
        make("ls.ladder-subfolder", ladder, ["ls", "d0"], environment: ["TERM": nil]),
        make("ls.dotfiles-and-other-files", extras, ["ls"]),
        make("ls.sorting", sorting, ["ls"], locales: both),
        make("ls.without-term", basic, ["ls"], environment: ["TERM": nil]),
        make("ls.symlinks-without-term", symlinks, ["ls"], environment: ["TERM": nil]),
        make("ls.extras-without-term", extras, ["ls"], environment: ["TERM": nil]),
        make("ls.ls-colors", basic, ["ls"], environment: ["LS_COLORS": "di=01;31:ex=01;32"]),
        make("ls.on-terminal", basic, ["ls"], input: .terminal([])),
        make("ls.two-folders", basic, ["ls", "email", "social"]),
        make("ls.invalid-option", basic, ["ls", "-x"]),
    ]

    // MARK: - show

    static let showing: [DifferentialScenario] = [
        make("show.entry", basic, ["show", "email/work"]),
        make("show.top-level", basic, ["show", "bank"]),
        make("show.spaces", basic, ["show", "social/my site"]),
        make("show.unicode", basic, ["show", "web/ünïcødé"], locales: both),
        make("show.dash-after-double-dash", tricky, ["show", "--", "-dash"]),
        make("show.dash-as-option", tricky, ["show", "-dash"]),
        make("show.glob-character", tricky, ["show", "star*name"]),
        make("show.no-final-newline", binary, ["show", "nonl"]),
        make("show.binary", binary, ["show", "binary"]),
        make("show.empty-entry", binary, ["show", "empty"]),
        make("show.blank-lines", binary, ["show", "blanks"]),
        make("show.missing", basic, ["show", "nope"]),
        make("show.missing-nested", basic, ["show", "email/nope"]),
        make("show.sneaky-leading", basic, ["show", "../etc/passwd"]),
        make("show.sneaky-middle", basic, ["show", "email/../bank"]),
        make("show.sneaky-trailing", basic, ["show", "email/.."]),
        make("show.sneaky-alone", basic, [".."]),
        make("show.dot-slash", basic, ["show", "./bank"]),
        make("show.file-of-same-name", tricky, ["show", "foo"]),
        make("show.folder-of-same-name", tricky, ["show", "foo/"]),
        make("show.folder", basic, ["show", "email"]),
        make("show.symlinked-entry", symlinks, ["show", "link"]),
        make("show.dangling-symlink", symlinks, ["show", "dangling"]),
        make("show.through-folder-symlink", symlinks, ["show", "dirlink/inner"]),
        make("show.without-gpg-id", noGPGID, ["show", "sub/b"]),
        make("show.clip-without-display", basic, ["show", "-c", "bank"]),
        make("show.clip-line-without-display", basic, ["show", "-c2", "bank"]),
        make("show.clip-long-option", basic, ["show", "--clip=2", "bank"]),
        make("show.clip-not-a-number", basic, ["show", "--clip=abc", "bank"]),
        make("show.clip-line-beyond-end", basic, ["show", "-c5", "bank"]),
        make("show.clip-line-zero", basic, ["show", "-c0", "bank"]),
        make("show.clip-missing-entry", basic, ["show", "-c", "nope"]),
        make("show.qrcode", basic, ["show", "-q", "bank"], locales: both),
        make("show.qrcode-line", basic, ["show", "--qrcode=2", "bank"]),
        make("show.clip-and-qrcode", basic, ["show", "-c", "-q", "bank"]),
        make("show.on-terminal", basic, ["show", "email/work"], input: .terminal([])),
        make(
            "show.no-secret-key", noSecretKey, ["show", "lost"]),
        make(
            "show.not-openpgp", basic + "printf 'garbage' > \"$STORE/corrupt.gpg\"\n", ["show", "corrupt"]),
    ]

    // MARK: - find, search

    static let searching: [DifferentialScenario] = [
        make("find.term", basic, ["find", "o"], locales: both),
        make("find.search-alias", basic, ["search", "work"]),
        make("find.several-terms", basic, ["find", "work", "site"]),
        make("find.ignores-case", basic, ["find", "WORK"]),
        make("find.folder-name", basic, ["find", "email"]),
        make("find.no-match", basic, ["find", "zzz"]),
        make("find.no-arguments", basic, ["find"]),
        make("find.glob", basic, ["find", "w*k"]),
        make("find.unicode", basic, ["find", "ünï"], locales: both),
        make("find.symlinks", symlinks, ["find", "in"]),
        make("find.symlinks-without-term", symlinks, ["find", "in"], environment: ["TERM": nil]),
        make("find.diamond", diamond, ["find", "inner"]),
        make("find.diamond-folder-name", diamond, ["find", "pair", "alias"]),
        make("find.link-loop", linkLoop, ["find", "deep"]),
        make("find.ladder", ladder, ["find", "last"]),
        make("find.ladder-folder-names", ladder, ["find", "d2"]),
        make("find.leading-dash", tricky, ["find", "-dash"]),
        make("find.hidden-entries", extras, ["find", "hidden"]),
    ]

    // MARK: - grep

    static let grepping: [DifferentialScenario] = [
        make("grep.simple", grepStore, ["grep", "password"], locales: both, unordered: true),
        make("grep.ignore-case", grepStore, ["grep", "-i", "LOGIN"], unordered: true),
        make("grep.no-match", grepStore, ["grep", "zzz"]),
        make("grep.no-arguments", grepStore, ["grep"]),
        make("grep.extended-regex", grepStore, ["grep", "-E", "^(work|home)-"], unordered: true),
        make("grep.pattern-with-dash", grepStore, ["grep", "--", "-flag"]),
        make("grep.ignore-case-double-dash", grepStore, ["grep", "-i", "--", "URL"], unordered: true),
        make("grep.count", grepStore, ["grep", "-c", "password"], unordered: true),
        make(
            "grep.words-line-numbers", grepStore, ["grep", "-n", "-w", "password"], locales: both,
            unordered: true),
        make("grep.invert-count", grepStore, ["grep", "-vc", "login"], locales: both, unordered: true),
        make(
            "grep.fixed-ignore-case", grepStore, ["grep", "-iF", "HTTPS://"], locales: both, unordered: true),
        make(
            "grep.extended-words", grepStore, ["grep", "-Ewn", "(pin|login): [a-z0-9_]+"], locales: both,
            unordered: true),
        make("grep.non-ascii", grepStore, ["grep", "crème"], locales: both, unordered: true),
        make("grep.any-character", grepStore, ["grep", "-n", "p.ssword"], locales: both, unordered: true),
        make(
            "grep.options-after-pattern", grepStore, ["grep", "site", "-i", "-c"], locales: both,
            unordered: true),
        make("grep.context", grepStore, ["grep", "-A1", "work-password"]),
        make("grep.invalid-option", grepStore, ["grep", "--bogus", "x"], unordered: true),
        make(
            "grep.symlinked-folder", symlinks, ["grep", "inner"], unordered: true,
            deliberate: "grep searches each folder once, under its own name; pass's find -L searches a "
                + "folder again through every link to it (2^24 times at the foot of a ladder of 24 diamonds)"),
        make("grep.empty-store", empty, ["grep", "x"]),
    ]

    // MARK: - insert, add (pipes)

    static let inserting: [DifferentialScenario] = [
        make("insert.echo", basic, ["insert", "-e", "new"], input: typed("line\n")),
        make("insert.echo-long-option", basic, ["insert", "--echo", "new"], input: typed("line\n")),
        make(
            "insert.echo-keeps-first-line", basic, ["insert", "-e", "new"], input: typed("first\nsecond\n")),
        make("insert.echo-no-newline", basic, ["insert", "-e", "new"], input: typed("abc")),
        make("insert.echo-empty-input", basic, ["insert", "-e", "new"]),
        make("insert.echo-trims-blanks", basic, ["insert", "-e", "new"], input: typed("  spaced out  \n")),
        make("insert.echo-backslash", basic, ["insert", "-e", "new"], input: typed("a\\b\\\\c\n")),
        make("insert.hidden", basic, ["insert", "new"], input: typed("pw\npw\n")),
        make("insert.hidden-mismatch", basic, ["insert", "new"], input: typed("one\ntwo\n")),
        make("insert.hidden-one-line", basic, ["insert", "new"], input: typed("pw\n")),
        make("insert.hidden-empty-input", basic, ["insert", "new"]),
        make("insert.multiline", basic, ["insert", "-m", "new"], input: typed("l1\nl2\n\nl4")),
        make(
            "insert.multiline-long-option", basic, ["insert", "--multiline", "new"], input: typed("a\nb\n")),
        make("insert.multiline-empty", basic, ["insert", "-m", "new"]),
        make("insert.multiline-binary", basic, ["insert", "-m", "new"], input: .pipe([0, 255, 10, 1])),
        make("insert.overwrite-without-terminal", basic, ["insert", "-e", "bank"], input: typed("new\n")),
        make("insert.force", basic, ["insert", "-f", "-e", "bank"], input: typed("new\n")),
        make(
            "insert.multiline-force-double-dash", basic, ["insert", "--multiline", "--force", "--", "bank"],
            input: typed("x\ny\n")),
        make("insert.force-twice-typed", basic, ["insert", "--force", "bank"], input: typed("pw\npw\n")),
        make("insert.echo-and-multiline", basic, ["insert", "-e", "-m", "x"], input: typed("x\n")),
        make("insert.no-name", basic, ["insert"], input: typed("x\n")),
        make("insert.two-names", basic, ["insert", "a", "b"], input: typed("x\n")),
        make("insert.invalid-option", basic, ["insert", "-z", "x"], input: typed("x\n")),
        make("insert.new-folders", basic, ["insert", "-e", "deep/er/new"], input: typed("x\n")),
        make(
            "insert.spaces", basic, ["insert", "-e", "my folder/my entry"], input: typed("x\n"), locales: both
        ),
        make("insert.unicode", basic, ["insert", "-e", "ünï/çødé"], input: typed("x\n"), locales: both),
        make("insert.leading-dash", basic, ["insert", "-e", "--", "-dash"], input: typed("x\n")),
        make("insert.trailing-slash", basic, ["insert", "-e", "slashy/"], input: typed("x\n")),
        make("insert.sneaky", basic, ["insert", "-e", "../evil"], input: typed("x\n")),
        make("insert.sneaky-middle", basic, ["insert", "-e", "a/../../evil"], input: typed("x\n")),
        make("insert.without-gpg-id", noGPGID, ["insert", "-e", "x"], input: typed("x\n")),
        make("insert.without-store", "", ["insert", "-e", "x"], input: typed("x\n")),
        make("insert.git", basicGit, ["insert", "-e", "new"], input: typed("x\n")),
        make("insert.git-overwrite", basicGit, ["insert", "-f", "-m", "bank"], input: typed("x\n")),
        make("insert.inner-git-repository", innerGit, ["insert", "-e", "email/new"], input: typed("x\n")),
        make(
            "insert.key-variable", basic, ["insert", "-e", "new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_KEY": "$K2 $K3"]),
        make("insert.nearest-gpg-id", multi, ["insert", "-e", "team/deeper/new"], input: typed("x\n")),
        make("insert.two-recipients", multi, ["insert", "-e", "new"], input: typed("x\n")),
        make("insert.gpg-id-comments", comments, ["insert", "-e", "sub/new"], input: typed("x\n")),
        make("insert.group", groups, ["insert", "-e", "new"], input: typed("x\n")),
        make(
            "insert.umask", basic, ["insert", "-e", "newdir/new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_UMASK": "022"]),
        make(
            "insert.gpg-options-armor", basic, ["insert", "-e", "new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_GPG_OPTS": "--armor"]),
        make(
            "insert.signed-gpg-id", signed, ["insert", "-e", "new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_SIGNING_KEY": "$K1"]),
        make(
            "insert.signature-missing", basic, ["insert", "-e", "new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_SIGNING_KEY": "$K1"]),
        make(
            "insert.signature-invalid", signed + "printf '%s\\n' \"$K2\" >> \"$STORE/.gpg-id\"\n",
            ["insert", "-e", "new"], input: typed("x\n"), environment: ["PASSWORD_STORE_SIGNING_KEY": "$K1"]),
        make(
            "insert.signature-other-key", signed, ["insert", "-e", "new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_SIGNING_KEY": "$K2"]),
        make("insert.under-plain-file", plainFile, ["insert", "-e", "plainfile/x"], input: typed("x\n")),
        make("insert.add-alias", basic, ["add", "-e", "new"], input: typed("x\n")),
    ]

    // MARK: - insert (terminal)

    static let insertingOnTerminal: [DifferentialScenario] = [
        make(
            "insert.terminal-hidden", basic, ["insert", "new"],
            input: .terminal([
                .wait("Enter password for new: "), .type("secret\r"), .wait("Retype password for new: "),
                .type("secret\r"),
            ])),
        make(
            "insert.terminal-hidden-mismatch", basic, ["insert", "new"],
            input: .terminal([
                .wait("Enter password for new: "), .type("one\r"), .wait("Retype password for new: "),
                .type("two\r"),
            ])),
        make(
            "insert.terminal-hidden-end-of-input", basic, ["insert", "new"],
            input: .terminal([.wait("Enter password for new: "), .type("\u{4}")])),
        make(
            "insert.terminal-echo", basic, ["insert", "-e", "new"],
            input: .terminal([.wait("Enter password for new: "), .type("visible\r")])),
        make(
            "insert.terminal-multiline", basic, ["insert", "-m", "new"],
            input: .terminal([
                .wait("Ctrl+D when finished:"), .type("line one\r"), .type("line two\r"), .type("\u{4}"),
            ])),
        make(
            "insert.terminal-overwrite-no", basic, ["insert", "-e", "bank"],
            input: .terminal([.wait("Overwrite it? [y/N] "), .type("n\r")])),
        make(
            "insert.terminal-overwrite-yes", basic, ["insert", "-e", "bank"],
            input: .terminal([
                .wait("Overwrite it? [y/N] "), .type("y\r"), .wait("Enter password for bank: "),
                .type("new\r"),
            ])),
        make(
            "insert.terminal-overwrite-forced", basic, ["insert", "-f", "-e", "bank"],
            input: .terminal([.wait("Enter password for bank: "), .type("new\r")])),
        make(
            "insert.terminal-prompts-on-stderr", basic, ["insert", "new"],
            input: .terminalStderrOnly([
                .wait("Enter password for new: "), .type("secret\r"), .wait("Retype password for new: "),
                .type("secret\r"),
            ])),
    ]

    // MARK: - edit

    private static func editor(_ name: String) -> [String: String?] { ["EDITOR": "$SANDBOX/bin/\(name)"] }

    static let editing: [DifferentialScenario] = [
        make("edit.existing", basic, ["edit", "email/work"], environment: editor("edit-append")),
        make("edit.existing-git", basicGit, ["edit", "email/work"], environment: editor("edit-append")),
        make("edit.new-entry", basic, ["edit", "new"], environment: editor("edit-replace")),
        make("edit.new-entry-git", basicGit, ["edit", "new"], environment: editor("edit-replace")),
        make("edit.new-folders", basic, ["edit", "fresh/folder/new"], environment: editor("edit-replace")),
        make("edit.unchanged", basic, ["edit", "bank"], environment: editor("edit-nothing")),
        make("edit.editor-fails-unchanged", basic, ["edit", "bank"], environment: editor("edit-fail")),
        make(
            "edit.editor-fails-after-change", basicGit, ["edit", "bank"],
            environment: editor("edit-change-then-fail"),
            deliberate:
                "an editor that exits non-zero saves nothing (exit 1, one line); pass encrypts and commits "
                + "whatever the failed editor left in the file"),
        make("edit.editor-deletes-file", basic, ["edit", "bank"], environment: editor("edit-delete")),
        make("edit.new-entry-not-written", basic, ["edit", "new"], environment: editor("edit-nothing")),
        make("edit.temporary-file", basic, ["edit", "email/work"], environment: editor("edit-report")),
        make(
            "edit.temporary-file-spaces", basic, ["edit", "social/my site"],
            environment: editor("edit-report")),
        make(
            "edit.editor-with-arguments", basicGit, ["edit", "bank"],
            environment: ["EDITOR": "$SANDBOX/bin/edit-args --wait"]),
        make("edit.editor-unset", basicGit, ["edit", "bank"], environment: ["EDITOR": nil]),
        make("edit.binary-content", basic, ["edit", "bank"], environment: editor("edit-binary")),
        make("edit.no-arguments", basic, ["edit"], environment: editor("edit-append")),
        make("edit.two-arguments", basic, ["edit", "a", "b"], environment: editor("edit-append")),
        make("edit.sneaky", basic, ["edit", "../evil"], environment: editor("edit-append")),
        make("edit.without-gpg-id", noGPGID, ["edit", "a"], environment: editor("edit-append")),
        make("edit.trailing-slash", basic, ["edit", "bank/"], environment: editor("edit-append")),
        make("edit.symlinked-entry", symlinks, ["edit", "link"], environment: editor("edit-append")),
        make(
            "edit.on-terminal", basic, ["edit", "email/work"], input: .terminal([]),
            environment: editor("edit-append")),
        make(
            "edit.signature-missing", basic, ["edit", "bank"],
            environment: editor("edit-append").merging(["PASSWORD_STORE_SIGNING_KEY": "$K1"]) { $1 }),
    ]

    // MARK: - generate

    private static let length25 = GeneratedPassword(length: 25)

    static let generating: [DifferentialScenario] = [
        make("generate.default", basic, ["generate", "new"], generated: length25),
        make("generate.length", basic, ["generate", "new", "40"], generated: .init(length: 40)),
        make(
            "generate.no-symbols", basic, ["generate", "-n", "new", "12"],
            generated: .init(length: 12, characters: .alphanumeric)),
        make(
            "generate.no-symbols-long-option", basic, ["generate", "--no-symbols", "new"],
            generated: .init(length: 25, characters: .alphanumeric)),
        make("generate.git", basicGit, ["generate", "new"], generated: length25),
        make("generate.clip-without-display", basicGit, ["generate", "-c", "new"], generated: length25),
        make("generate.qrcode", basic, ["generate", "-q", "new"], generated: length25),
        make("generate.in-place", basic, ["generate", "-i", "email/work"], generated: length25),
        make("generate.in-place-git", basicGit, ["generate", "-i", "email/work"], generated: length25),
        make(
            "generate.in-place-long-option", basic, ["generate", "--in-place", "email/work", "10"],
            generated: .init(length: 10)),
        make("generate.in-place-missing-entry", basic, ["generate", "-i", "nope"], generated: length25),
        make("generate.force", basic, ["generate", "-f", "bank"], generated: length25),
        make("generate.overwrite-without-terminal", basic, ["generate", "bank"], generated: length25),
        make("generate.force-and-in-place", basic, ["generate", "-i", "-f", "bank"]),
        make("generate.clip-and-qrcode", basic, ["generate", "-c", "-q", "new"]),
        make("generate.length-not-a-number", basic, ["generate", "new", "abc"]),
        make("generate.length-zero", basic, ["generate", "new", "0"]),
        make("generate.length-negative", basic, ["generate", "new", "-5"]),
        make("generate.no-arguments", basic, ["generate"]),
        make("generate.too-many-arguments", basic, ["generate", "a", "10", "x"]),
        make("generate.new-folders", basic, ["generate", "x/y/new", "8"], generated: .init(length: 8)),
        make(
            "generate.spaces", basic, ["generate", "my folder/new name", "10"], generated: .init(length: 10)),
        make("generate.sneaky", basic, ["generate", "../evil"]),
        make("generate.without-gpg-id", noGPGID, ["generate", "new"]),
        make(
            "generate.length-variable", basic, ["generate", "new"],
            environment: ["PASSWORD_STORE_GENERATED_LENGTH": "8"], generated: .init(length: 8)),
        make(
            "generate.length-variable-not-a-number", basic, ["generate", "new"],
            environment: ["PASSWORD_STORE_GENERATED_LENGTH": "abc"]),
        make(
            "generate.character-set-variable", basic, ["generate", "new", "30"],
            environment: ["PASSWORD_STORE_CHARACTER_SET": "a-c"],
            generated: .init(length: 30, characters: .only("abc"))),
        make(
            "generate.character-set-class", basic, ["generate", "new", "30"],
            environment: ["PASSWORD_STORE_CHARACTER_SET": "[:digit:]x"],
            generated: .init(length: 30, characters: .only("0123456789x"))),
        make(
            "generate.no-symbols-set-variable", basic, ["generate", "-n", "new", "30"],
            environment: ["PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS": "0-9"],
            generated: .init(length: 30, characters: .only("0123456789"))),
        make(
            "generate.key-variable", basic, ["generate", "new"], environment: ["PASSWORD_STORE_KEY": "$K2"],
            generated: length25),
        make(
            "generate.terminal-overwrite-no", basic, ["generate", "bank"],
            input: .terminal([.wait("Overwrite it? [y/N] "), .type("n\r")])),
        make(
            "generate.terminal-overwrite-yes", basic, ["generate", "bank"],
            input: .terminal([.wait("Overwrite it? [y/N] "), .type("y\r")]), generated: length25),
        make("generate.on-terminal", basic, ["generate", "new"], input: .terminal([]), generated: length25),
    ]

    // MARK: - rm, remove, delete

    static let removing: [DifferentialScenario] = [
        make("rm.entry", basic, ["rm", "bank"]),
        make("rm.force", basic, ["rm", "-f", "bank"]),
        make("rm.remove-alias", basic, ["remove", "bank"]),
        make("rm.delete-alias", basic, ["delete", "bank"]),
        make("rm.git", basicGit, ["rm", "email/work"]),
        make("rm.last-entry-of-folder", basic, ["rm", "social/my site"]),
        make("rm.folder-without-recursive", basic, ["rm", "email"]),
        make("rm.folder-recursive", basic, ["rm", "-r", "email"], unordered: true),
        make("rm.folder-recursive-git", basicGit, ["rm", "-r", "email"], unordered: true),
        make("rm.folder-trailing-slash", basic, ["rm", "-r", "email/"], unordered: true),
        make(
            "rm.recursive-force-long-options", basic, ["rm", "--recursive", "--force", "email"],
            unordered: true),
        make("rm.missing", basic, ["rm", "nope"]),
        make("rm.sneaky", basic, ["rm", "../evil"]),
        make("rm.no-arguments", basic, ["rm"]),
        make("rm.two-arguments", basic, ["rm", "bank", "email/home"]),
        make("rm.invalid-option", basic, ["rm", "-x", "bank"]),
        make("rm.file-of-same-name", tricky, ["rm", "foo"]),
        make("rm.folder-of-same-name", tricky, ["rm", "-r", "foo/"], unordered: true),
        make("rm.symlinked-entry", symlinks, ["rm", "link"]),
        make("rm.unicode", basic, ["rm", "web/ünïcødé"], locales: both),
        make("rm.leading-dash", tricky, ["rm", "--", "-dash"]),
        make(
            "rm.whole-store", basic, ["rm", "-r", ""], unordered: true,
            deliberate:
                "rm of the store itself (\"\" or \".\") is refused as rm refuses \".\"; pass deletes the "
                + "whole store, .git included"),
        make(
            "rm.terminal-yes", basic, ["rm", "bank"],
            input: .terminal([.wait("delete bank? [y/N] "), .type("y\r")])),
        make(
            "rm.terminal-no", basic, ["rm", "bank"],
            input: .terminal([.wait("delete bank? [y/N] "), .type("n\r")])),
        make("rm.terminal-forced", basic, ["rm", "-f", "bank"], input: .terminal([])),
    ]

    // MARK: - mv, rename

    static let moving: [DifferentialScenario] =
        [
            make("mv.entry", basic, ["mv", "bank", "vault"]),
            make("mv.rename-alias", basic, ["rename", "bank", "vault"]),
            make("mv.into-existing-folder", basic, ["mv", "bank", "email"]),
            make("mv.into-new-folder", basic, ["mv", "bank", "vault/"]),
            make("mv.folder", basic, ["mv", "email", "mail"]),
            make("mv.folder-into-folder", basic, ["mv", "email", "social"]),
            make("mv.overwrite-without-terminal", basic, ["mv", "bank", "email/home"]),
            make("mv.force", basic, ["mv", "-f", "bank", "email/home"]),
            make("mv.reencrypt", multi, ["mv", "shared", "team/shared"]),
            make(
                "mv.onto-same-bytes-git", basicGit + "pass cp bank twin >/dev/null\n",
                ["mv", "-f", "twin", "bank"]),
            // Soak seed 71405013049429549: into a folder that holds a copy, from inside that folder (which
            // keeps another entry: pass's git status warns about a folder git rm removed, a quirk coffer
            // leaves out, see the fuzzer's rules).
            make(
                "mv.into-folder-onto-same-bytes-git",
                basicGit + "ins 'a b/web/two  spaces' 'x\\n'\nins 'a b/web/other' 'y\\n'\n"
                    + "pass cp 'a b/web/two  spaces' 'a b' >/dev/null\n",
                ["mv", "--force", "--", "a b/web/two  spaces", "a b"]),
            make(
                "mv.quoting-quote-and-question-mark",
                basic + "ins \"it's\" 'q\\n'\nmkdir -p \"$STORE/q?mark\"\n",
                ["mv", "-f", "it's", "q?mark/"], locales: both),
            make("mv.reencrypt-folder", multi, ["mv", "team", "old-team"], unordered: true),
            make("mv.git", basicGit, ["mv", "bank", "vault"]),
            make("mv.git-folder", basicGit, ["mv", "email", "mail"]),
            make("mv.missing", basic, ["mv", "nope", "x"]),
            make("mv.sneaky-source", basic, ["mv", "../evil", "x"]),
            make("mv.sneaky-destination", basic, ["mv", "bank", "../evil"]),
            make("mv.one-argument", basic, ["mv", "bank"]),
            make("mv.file-of-same-name", tricky, ["mv", "foo", "baz"]),
            make("mv.folder-of-same-name", tricky, ["mv", "foo/", "baz"]),
            make("mv.unicode-and-spaces", basic, ["mv", "social/my site", "web/ünï new"], locales: both),
            make("mv.symlinked-entry", symlinks, ["mv", "link", "link2"]),
            make(
                "mv.store-dir-trailing-slash", basic, ["mv", "bank", "vault"],
                environment: ["PASSWORD_STORE_DIR": "$STORE/"],
                deliberate: "pass prints the store's paths with a double slash; coffer prints one"),
        ] + overwritePrompts("mv")

    /// `COMMAND bank email/home` at a terminal, answering the overwrite question yes and no.
    private static func overwritePrompts(_ command: String) -> [DifferentialScenario] {
        ["y", "n"].map { answer in
            make(
                "\(command).terminal-overwrite-\(answer == "y" ? "yes" : "no")", basic,
                [command, "bank", "email/home"],
                input: .terminal([.wait("home.gpg'? "), .type(answer + "\r")]))
        }
    }

    // MARK: - cp, copy

    static let copying: [DifferentialScenario] =
        [
            make("cp.entry", basic, ["cp", "bank", "vault"]),
            make("cp.copy-alias", basic, ["copy", "bank", "vault"]),
            make("cp.into-existing-folder", basic, ["cp", "bank", "email"]),
            make("cp.into-new-folder", basic, ["cp", "bank", "vault/"]),
            make("cp.folder", basic, ["cp", "email", "mail"], unordered: true),
            make("cp.folder-with-gpg-id", multi, ["cp", "team", "team2"], unordered: true),
            make("cp.reencrypt", multi, ["cp", "shared", "team/shared"]),
            make("cp.overwrite-without-terminal", basic, ["cp", "bank", "email/home"]),
            make("cp.force", basic, ["cp", "-f", "bank", "email/home"]),
            make("cp.git", basicGit, ["cp", "bank", "vault"]),
            make("cp.git-folder", basicGit, ["cp", "email", "mail"], unordered: true),
            make("cp.missing", basic, ["cp", "nope", "x"]),
            make("cp.sneaky", basic, ["cp", "bank", "a/../../evil"]),
            make("cp.no-arguments", basic, ["cp"]),
            make("cp.invalid-option", basic, ["cp", "-r", "bank", "x"]),
        ] + overwritePrompts("cp")

    // MARK: - git

    static let git: [DifferentialScenario] = [
        make("git.init", basic, ["git", "init"]),
        make("git.init-empty-store", empty, ["git", "init"]),
        make("git.init-without-store", "", ["git", "init"]),
        make("git.init-again", basicGit, ["git", "init"]),
        make("git.log", basicGit, ["git", "log", "--format=%s"]),
        make("git.status", basicGit, ["git", "status"]),
        make("git.no-repository", basic, ["git", "log"]),
        make(
            "git.no-arguments", basicGit, ["git"],
            deliberate: "coffer git exits with git's status (here 1); pass exits 0 whatever git did"),
        make("git.config", basicGit, ["git", "config", "--local", "--get", "diff.gpg.textconv"]),
        make(
            "git.diff-decrypts", basicGit + "ins bank 'changed-bank\\n'\n",
            ["git", "log", "-p", "-1", "--format=%s"]),
        make(
            "git.signed-commits",
            basicGit + "git -C \"$STORE\" config pass.signcommits true\n"
                + "git -C \"$STORE\" config user.signingkey \"$K1\"\n",
            ["insert", "-e", "new"], input: typed("x\n")),
        make("git.inner-repository-status", innerGit, ["git", "status", "--short"]),
    ]

    // MARK: - PASSWORD_STORE_* and other variables

    static let environment: [DifferentialScenario] = [
        make(
            "env.store-dir", "export PASSWORD_STORE_DIR=\"$HOME/other\"\n" + basic, ["ls"],
            environment: ["PASSWORD_STORE_DIR": "$HOME/other"]),
        make(
            "env.store-dir-relative", "mkdir relative\nexport PASSWORD_STORE_DIR=relative\n" + basic,
            ["show", "bank"],
            environment: ["PASSWORD_STORE_DIR": "relative"]),
        make(
            "env.store-dir-relative-insert",
            "mkdir relative\nexport PASSWORD_STORE_DIR=relative\n" + basicGit,
            ["insert", "-e", "new"], input: typed("x\n"), environment: ["PASSWORD_STORE_DIR": "relative"],
            deliberate: "with a relative PASSWORD_STORE_DIR, pass's git add names the entry from the wrong "
                + "folder and leaves it uncommitted; coffer commits it"),
        make("env.store-dir-default", basic, ["ls"], environment: ["PASSWORD_STORE_DIR": nil]),
        make(
            "env.extensions-enabled", extensionStore, ["hello", "a", "b"],
            environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"]),
        make("env.extensions-disabled", extensionStore, ["hello", "a"]),
        make(
            "env.extensions-dir-without-extension", extensionStore, ["hello"],
            environment: [
                "PASSWORD_STORE_ENABLE_EXTENSIONS": "true",
                "PASSWORD_STORE_EXTENSIONS_DIR": "$SANDBOX/no-extensions",
            ]),
        make(
            "env.wayland-without-compositor", basic, ["show", "-c", "bank"],
            environment: ["WAYLAND_DISPLAY": "wayland-none", "XDG_RUNTIME_DIR": "$SANDBOX/tmp"]),
        make(
            "env.extensions-not-exactly-true", extensionStore, ["hello"],
            environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "yes"]),
        make(
            "env.clip-time-in-messages", basic, ["show", "-c", "bank"],
            environment: ["PASSWORD_STORE_CLIP_TIME": "3", "PASSWORD_STORE_X_SELECTION": "primary"]),
        make(
            "env.key-overrides-gpg-id", multi, ["insert", "-e", "team/new"], input: typed("x\n"),
            environment: ["PASSWORD_STORE_KEY": "$K1"]),
        make(
            "env.gpg-options-for-show", basic, ["show", "bank"],
            environment: ["PASSWORD_STORE_GPG_OPTS": "--no-greeting"]),
    ]
}
