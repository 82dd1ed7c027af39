import CofferTestSupport
import Testing

@testable import CofferCLI

/// The shell completions in `completions/`, driven through real bash, zsh and fish against a store made
/// of plain files (nothing is encrypted: completion only looks at names).
@Suite("Shell completion")
struct ShellCompletionTests {
    /// A temporary store and home folder, removed when the value is released.
    final class Fixture {
        let folder: String
        let store: String
        let home: String

        /// The completion file `name` of the package.
        static func completion(_ name: String) -> String { TestFiles.packageRoot + "/completions/" + name }

        init() throws {
            folder = try TestFiles.temporaryFolder("coffer-completion")
            store = folder + "/store with space"
            home = folder + "/home"
            for sub in ["", "/web", "/solo", "/solo/deep", "/.git", "/.extensions"] {
                try Self.makeFolder(store + sub)
            }
            try Self.makeFolder(home)
            for file in [
                "web/github.com.gpg", "web/my site.gpg", "web/.hidden.gpg", "email.gpg", "solo/deep/only.gpg",
                ".gpg-id", "notes.txt", ".git/config", ".extensions/x.bash",
            ] {
                try TestFiles.write("", to: store + "/" + file)
            }
        }

        deinit { _ = try? TestProcess.run(["rm", "-rf", folder], environment: ["PATH": "/usr/bin:/bin"]) }

        /// The environment each shell runs with.
        func environment(path: String = "/usr/bin:/bin") -> [String: String] {
            ["PATH": path, "HOME": home, "PASSWORD_STORE_DIR": store, "LC_ALL": "C.UTF-8", "TERM": "dumb"]
        }

        /// A folder `name` in the fixture holding links `links` (link name to completion file), as a shell
        /// finds completions installed there.
        func completionFolder(_ name: String, links: [(link: String, file: String)]) throws -> String {
            let path = folder + "/" + name
            try Self.makeFolder(path)
            for (link, file) in links {
                guard symlink(Self.completion(file), path + "/" + link) == 0 else {
                    throw TestProcess.Failure(
                        description: "symlink \(link): \(String(cString: strerror(errno)))")
                }
            }
            return path
        }

        static func makeFolder(_ path: String) throws {
            guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
                throw TestProcess.Failure(description: "mkdir \(path): \(String(cString: strerror(errno)))")
            }
        }

        /// Runs a shell and returns its standard output, failing on a non-zero status.
        func run(_ arguments: [String], environment: [String: String]? = nil) throws -> String {
            try TestProcess.check(arguments, environment: environment ?? self.environment(), timeout: 120)
                .outputText
        }
    }

    /// Fails with a clear message when a shell is not installed (scripts/bootstrap.sh installs them).
    static func requireCommand(_ name: String) throws {
        let found = ["/usr/bin/", "/bin/", "/usr/local/bin/"].contains { access($0 + name, X_OK) == 0 }
        if !found {
            throw TestProcess.Failure(description: "\(name) is not installed; run scripts/bootstrap.sh")
        }
    }

    // MARK: - bash

    /// Calls `_coffer` as bash's programmable completion would for `words` (the last one is completed)
    /// and returns `COMPREPLY`, one element a line.
    static func bashComplete(
        _ fixture: Fixture, _ words: [String], file: String = Fixture.completion("coffer.bash"),
        preamble: String = ""
    ) throws -> [String] {
        let script = """
            \(preamble)
            source "$1" || exit 3
            shift
            COMP_WORDS=("$@")
            COMP_CWORD=$(( $# - 1 ))
            COMP_LINE="$*"
            COMP_POINT=${#COMP_LINE}
            _coffer "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let output = try fixture.run(["bash", "--norc", "--noprofile", "-c", script, "bash", file] + words)
        return output.split(separator: "\n").map(String.init)
    }

    @Test("bash completes commands, entries and folders, without hidden files or the .gpg suffix")
    func bashCommandsAndEntries() throws {
        try Self.requireCommand("bash")
        let fixture = try Fixture()
        let first = try Self.bashComplete(fixture, ["coffer", ""])
        // Every command, from the registry.
        for command in CommandRegistry.visible.map(\.name) {
            #expect(first.contains(command), "missing \(command) in \(first)")
        }
        #expect(first.contains("web/") && first.contains("email") && first.contains("solo/"))
        #expect(!first.contains { $0.hasPrefix(".") || $0.contains(".gpg") || $0.contains("notes") })
        #expect(try Self.bashComplete(fixture, ["coffer", "sh"]) == ["show"])
        #expect(try Self.bashComplete(fixture, ["coffer", "help", "hi"]) == ["history"])
        #expect(
            try Set(Self.bashComplete(fixture, ["coffer", "show", "web/"])) == [
                "web/github.com", "web/my site",
            ])
        #expect(try Self.bashComplete(fixture, ["coffer", "edit", "web/gi"]) == ["web/github.com"])
        // A lone folder is followed down to its only entry, as pass does for show.
        #expect(try Self.bashComplete(fixture, ["coffer", "show", "so"]) == ["solo/deep/only"])
        #expect(try Self.bashComplete(fixture, ["coffer", "init", "--path", "w"]) == ["web/"])
        #expect(try Self.bashComplete(fixture, ["coffer", "init", "--path", "=", "w"]) == ["web/"])
        #expect(try Self.bashComplete(fixture, ["coffer", "history", "em"]) == ["email"])
        #expect(
            try Self.bashComplete(fixture, ["coffer", "restore", "--revision", "HEAD", "em"]) == ["email"])
        // generate NAME LENGTH: nothing is offered for the length.
        #expect(try Self.bashComplete(fixture, ["coffer", "generate", "email", ""]).isEmpty)
    }

    @Test("bash completes each command's options")
    func bashOptions() throws {
        try Self.requireCommand("bash")
        let fixture = try Fixture()
        let expected: [String: Set<String>] = [
            "init": ["--path", "-p"],
            "show": ["--clip", "-c", "--qrcode", "-q", "--revision", "-r", "--field", "--json", "--flat"],
            "ls": ["--clip", "-c", "--qrcode", "-q", "--flat"],
            "insert": ["--echo", "-e", "--multiline", "-m", "--force", "-f", "--field"],
            "add": ["--echo", "-e", "--multiline", "-m", "--force", "-f", "--field"],
            "generate": [
                "--no-symbols", "-n", "--clip", "-c", "--qrcode", "-q", "--in-place", "-i", "--force", "-f",
            ],
            "rm": ["--recursive", "-r", "--force", "-f"],
            "delete": ["--recursive", "-r", "--force", "-f"],
            "mv": ["--force", "-f"],
            "cp": ["--force", "-f"],
            "restore": ["--revision"],
            "fsck": ["--fix"],
            "clone": ["--path"],
            "otp": ["--clip", "-c"],
            "setup": ["--name", "--email", "--no-passphrase", "--remote", "--clone"],
            "recipients": ["--path", "-p"],
            "audit": ["--json", "--show-passwords", "--age", "--breached", "--min-bits"],
        ]
        for (command, options) in expected {
            let offered = try Set(Self.bashComplete(fixture, ["coffer", command, "-"]))
            #expect(offered == options, "coffer \(command) -")
        }
        #expect(try Self.bashComplete(fixture, ["coffer", "show", "--q"]) == ["--qrcode"])
        // otp: its subcommands and entries, then each subcommand's options, as pass-otp's.
        #expect(try Self.bashComplete(fixture, ["coffer", "otp", "ur"]) == ["uri"])
        #expect(try Self.bashComplete(fixture, ["coffer", "otp", "em"]) == ["email"])
        #expect(
            try Set(Self.bashComplete(fixture, ["coffer", "otp", "insert", "-"])) == [
                "--force", "-f", "--echo", "-e", "--secret", "-s", "--issuer", "-i", "--account", "-a",
            ])
        #expect(
            try Set(Self.bashComplete(fixture, ["coffer", "otp", "uri", "-"])) == [
                "--clip", "-c", "--qrcode", "-q",
            ])
        #expect(try Self.bashComplete(fixture, ["coffer", "otp", "uri", "web/gi"]) == ["web/github.com"])
        #expect(try Self.bashComplete(fixture, ["coffer", "otp", "insert", "-i", ""]).isEmpty)
        #expect(
            try Set(Self.bashComplete(fixture, ["coffer", "recipients", ""])) == ["add", "rm", "accept"])
        #expect(
            try Set(Self.bashComplete(fixture, ["coffer", "recipients", "-p", "web", ""])) == [
                "add", "rm", "accept",
            ])
        #expect(try Self.bashComplete(fixture, ["coffer", "recipients", "-p", "w"]) == ["web/"])
        #expect(try Self.bashComplete(fixture, ["coffer", "audit", "w"]) == ["web/"])
        #expect(try Self.bashComplete(fixture, ["coffer", "au"]) == ["audit"])
    }

    @Test("bash completes names with spaces, typed quoted or escaped, and readline quotes them")
    func bashNamesWithSpaces() throws {
        try Self.requireCommand("bash")
        let fixture = try Fixture()
        for typed in ["web/my", "\"web/my s", "'web/my", "web/my\\ s"] {
            #expect(
                try Self.bashComplete(fixture, ["coffer", "rm", typed]) == ["web/my site"], "typed \(typed)")
        }
        // -o filenames is what makes readline insert `web/my\ site`.
        let registration = try fixture.run([
            "bash", "--norc", "--noprofile", "-c", "source \"$1\" && complete -p coffer", "bash",
            Fixture.completion("coffer.bash"),
        ])
        #expect(registration.contains("-o filenames") && registration.contains("-F _coffer"))
    }

    @Test("bash inserts a name with a space as one word in an interactive shell")
    func bashInteractiveQuoting() throws {
        try Self.requireCommand("bash")
        try Self.requireCommand("expect")
        let fixture = try Fixture()
        // Types `coffer show web/my<TAB>`, then turns the line into `printf '<%s>\n' coffer show ...`.
        let script = """
            set timeout 20
            spawn -noecho bash --norc --noprofile
            expect "READY>"
            send "source \\"$env(COMPLETION)\\"\\r"
            expect "READY>"
            send "coffer show web/my\\t"
            sleep 0.5
            send "\\001printf '<%s>\\\\n' \\r"
            expect {
                "<web/my site>" { exit 0 }
                timeout { exit 1 }
            }
            """
        var environment = fixture.environment()
        environment["PS1"] = "READY>"
        environment["INPUTRC"] = "/dev/null"
        environment["COMPLETION"] = Fixture.completion("coffer.bash")
        let result = try TestProcess.run(["expect", "-c", script], environment: environment, timeout: 60)
        #expect(result.status == 0, "expect: \(result.outputText)\(result.errorText)")
    }

    @Test("bash works with bash-completion loaded, and completes pass when loaded under that name")
    func bashWithBashCompletionAndPass() throws {
        try Self.requireCommand("bash")
        let fixture = try Fixture()
        let bashCompletion = "/usr/share/bash-completion/bash_completion"
        if access(bashCompletion, R_OK) == 0 {
            let words = try Self.bashComplete(
                fixture, ["coffer", "show", "web/"], preamble: "source \(bashCompletion)")
            #expect(Set(words) == ["web/github.com", "web/my site"])
        }
        let folder = try fixture.completionFolder("bash-completions", links: [("pass", "coffer.bash")])
        let registration = try fixture.run([
            "bash", "--norc", "--noprofile", "-c", "source \"$1\" && complete -p pass coffer", "bash",
            folder + "/pass",
        ])
        #expect(registration.contains("_coffer pass") && registration.contains("_coffer coffer"))
        #expect(try Self.bashComplete(fixture, ["pass", "sy"], file: folder + "/pass") == ["sync"])
        // Loaded as coffer, it leaves pass's own completion alone.
        let alone = try TestProcess.run(
            [
                "bash", "--norc", "--noprofile", "-c", "source \"$1\" && complete -p pass", "bash",
                Fixture.completion("coffer.bash"),
            ], environment: fixture.environment())
        #expect(alone.status != 0)
    }

    // MARK: - zsh

    /// Drives an interactive zsh in a pseudo-terminal (the zpty module): for each line, types it and TAB,
    /// then a key bound to a widget that records the line (`BUFFER:`) and every match compadd was given
    /// (`HIT:`) into a file.
    static let zshDriver = #"""
        zmodload zsh/zpty || exit 2
        local dir=$1 out=$2 setup=$3
        shift 3
        zpty coffer_test zsh -f -i
        zpty -w coffer_test "PS1='> '; LISTMAX=100000; fpath=(${(q)dir} \$fpath)"
        zpty -w coffer_test "autoload -Uz compinit; compinit -u -d ${(q)out}/zcompdump; $setup"
        zpty -w coffer_test 'typeset -ga _test_hits; typeset -gi _test_count'
        zpty -w coffer_test 'compadd() { if [[ ${(j: :)${@[1,(i)--]}} != *-[OAD]* ]]; then local -a _test_matched; builtin compadd -O _test_matched "$@"; _test_hits+=( $_test_matched ); fi; builtin compadd "$@"; }'
        zpty -w coffer_test '_test_dump() { { print -r -- "BUFFER:$BUFFER"; print -rl -- ${_test_hits/#/HIT:}; } >| '${(q)out}'/partial; mv '${(q)out}'/partial '${(q)out}'/result.$(( ++_test_count )); _test_hits=(); BUFFER=; }'
        zpty -w coffer_test 'zle -N _test_dump; bindkey "^Xq" _test_dump'
        local line number=0 chunk waited
        for line in "$@"; do
            (( number++ ))
            zpty -w -n coffer_test "$line"$'\t'
            sleep 0.3
            zpty -w -n coffer_test $'\C-xq'
            waited=0
            while [[ ! -e $out/result.$number ]] && (( waited < 150 )); do
                zpty -r -t coffer_test chunk
                sleep 0.1
                (( waited++ ))
            done
            print -r -- "=== $line"
            cat $out/result.$number 2>/dev/null || print -r -- "TIMEOUT"
        done
        zpty -d coffer_test
        """#

    /// What zsh did for one typed line.
    struct ZshResult {
        var buffer = ""
        var hits: [String] = []
    }

    /// Types each line followed by TAB in one zsh session with `folder` on `fpath`.
    static func zshComplete(
        _ fixture: Fixture, _ lines: [String], folder: String, setup: String = ""
    ) throws -> [String: ZshResult] {
        let output = fixture.folder + "/zsh-\(lines.count)-\(lines.first?.utf8.count ?? 0)"
        try Fixture.makeFolder(output)
        try TestFiles.write(zshDriver, to: output + "/driver.zsh")
        let text = try fixture.run(["zsh", "-f", output + "/driver.zsh", folder, output, setup] + lines)
        var results: [String: ZshResult] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("=== ") {
                current = String(line.dropFirst(4))
                results[current!] = ZshResult()
            } else if let key = current, line.hasPrefix("BUFFER:") {
                results[key]?.buffer = String(line.dropFirst(7))
            } else if let key = current, line.hasPrefix("HIT:") {
                results[key]?.hits.append(String(line.dropFirst(4)))
            } else if let key = current, line == "TIMEOUT" {
                results[key]?.buffer = "TIMEOUT"
            }
        }
        return results
    }

    @Test("zsh completes commands, options, entries and names with spaces")
    func zsh() throws {
        try Self.requireCommand("zsh")
        let fixture = try Fixture()
        let folder = try fixture.completionFolder("zsh-functions", links: [("_coffer", "_coffer")])
        let lines = [
            "coffer ", "coffer sh", "coffer help hi", "coffer show --", "coffer generate -",
            "coffer insert -",
            "coffer rm -", "coffer mv -", "coffer init -", "coffer restore --", "coffer fsck -",
            "coffer audit -",
            "coffer clone https://example.com/store.git --", "coffer show web/", "coffer show web/gi",
            "coffer show web/my", "coffer rm \"web/my", "coffer edit so", "coffer ls ", "pass sy",
            "coffer otp ur", "coffer otp append -", "coffer otp uri web/gi",
        ]
        let results = try Self.zshComplete(fixture, lines, folder: folder, setup: "compdef _coffer pass")
        func result(_ line: String) -> ZshResult { results[line] ?? ZshResult(buffer: "MISSING") }

        let first = Set(result("coffer ").hits)
        // Every command and alias, from the registry.
        for command in CommandRegistry.visible.flatMap(\.names) {
            #expect(first.contains(command), "missing \(command)")
        }
        #expect(first.contains("web") && first.contains("email") && !first.contains { $0.hasPrefix(".") })
        #expect(result("coffer sh").buffer == "coffer show ")
        #expect(result("coffer help hi").buffer == "coffer help history ")
        #expect(Set(result("coffer show --").hits).isSuperset(of: ["--clip", "--qrcode", "--revision"]))
        #expect(
            Set(result("coffer generate -").hits).isSuperset(of: [
                "--no-symbols", "-n", "--clip", "-c", "--qrcode", "-q", "--in-place", "-i", "--force", "-f",
            ]))
        #expect(
            Set(result("coffer insert -").hits).isSuperset(of: [
                "--echo", "-e", "--multiline", "-m", "--force", "-f",
            ]))
        #expect(Set(result("coffer rm -").hits).isSuperset(of: ["--recursive", "-r", "--force", "-f"]))
        #expect(Set(result("coffer mv -").hits).isSuperset(of: ["--force", "-f"]))
        #expect(Set(result("coffer init -").hits).isSuperset(of: ["--path", "-p"]))
        #expect(result("coffer restore --").buffer == "coffer restore --revision=")
        #expect(result("coffer fsck -").buffer == "coffer fsck --fix ")
        #expect(
            Set(result("coffer audit -").hits).isSuperset(of: [
                "--json", "--show-passwords", "--age", "--breached", "--min-bits",
            ]))
        #expect(result("coffer clone https://example.com/store.git --").hits.contains("--path"))
        let inWeb = Set(result("coffer show web/").hits)
        #expect(inWeb.contains { $0.hasSuffix("github.com") } && inWeb.contains { $0.hasSuffix("my site") })
        #expect(!inWeb.contains { $0.contains(".hidden") })
        #expect(result("coffer show web/gi").buffer == "coffer show web/github.com ")
        #expect(result("coffer show web/my").buffer == "coffer show web/my\\ site ")
        #expect(result("coffer rm \"web/my").buffer == "coffer rm \"web/my site\" ")
        #expect(result("coffer edit so").buffer == "coffer edit solo/deep/only ")
        #expect(!result("coffer ls ").hits.contains { $0.contains("notes") || $0.hasPrefix(".") })
        #expect(result("pass sy").buffer == "pass sync ")
        #expect(result("coffer otp ur").buffer == "coffer otp uri ")
        #expect(
            Set(result("coffer otp append -").hits).isSuperset(of: [
                "--force", "-f", "--echo", "-e", "--secret", "-s", "--issuer", "-i", "--account", "-a",
            ]))
        #expect(result("coffer otp uri web/gi").buffer == "coffer otp uri web/github.com ")
    }

    // MARK: - fish

    /// `complete -C LINE` in fish with the completions autoloaded from `folder` and a `coffer` command on
    /// `PATH` (fish loads completions only for commands that exist); lines of `candidate\tdescription`.
    static func fishComplete(_ fixture: Fixture, _ line: String, folder: String) throws -> [String] {
        let bin = fixture.folder + "/bin"
        if !TestFiles.exists(bin + "/coffer") {
            try Fixture.makeFolder(bin)
            try TestFiles.write("#!/bin/sh\nexit 0\n", to: bin + "/coffer", mode: 0o755)
            try TestFiles.write("#!/bin/sh\nexit 0\n", to: bin + "/pass", mode: 0o755)
        }
        let output = try fixture.run(
            [
                "fish", "--no-config", "-c",
                "set fish_complete_path $argv[1] $fish_complete_path; complete -C $argv[2]", folder, line,
            ], environment: fixture.environment(path: bin + ":/usr/bin:/bin"))
        return output.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
    }

    @Test("fish completes commands, options, entries and names with spaces, for coffer and pass")
    func fish() throws {
        try Self.requireCommand("fish")
        let fixture = try Fixture()
        let folder = try fixture.completionFolder(
            "fish-completions", links: [("coffer.fish", "coffer.fish"), ("pass.fish", "coffer.fish")])
        func complete(_ line: String) throws -> [String] {
            try Self.fishComplete(fixture, line, folder: folder)
        }

        let first = Set(try complete("coffer "))
        // Every command, from the registry.
        for command in CommandRegistry.visible.map(\.name) {
            #expect(first.contains(command), "missing \(command)")
        }
        #expect(first.isSuperset(of: ["web/", "email", "solo/"]))
        #expect(!first.contains { $0.hasPrefix(".") || $0.contains(".gpg") || $0.contains("notes") })
        #expect(try complete("coffer sh") == ["show"])
        #expect(try complete("coffer help hi") == ["history"])
        #expect(
            try Set(complete("coffer show --")) == [
                "--clip", "--qrcode", "--revision", "--field", "--json", "--flat",
            ])
        #expect(
            try Set(complete("coffer generate --")) == [
                "--no-symbols", "--clip", "--qrcode", "--in-place", "--force",
            ])
        #expect(try Set(complete("coffer insert --")) == ["--echo", "--multiline", "--force", "--field"])
        #expect(try Set(complete("coffer rm --")) == ["--recursive", "--force"])
        #expect(try Set(complete("coffer cp --")) == ["--force"])
        #expect(try Set(complete("coffer init --")) == ["--path"])
        #expect(try Set(complete("coffer restore --")) == ["--revision"])
        #expect(try Set(complete("coffer fsck --")) == ["--fix"])
        #expect(
            try Set(complete("coffer audit --")) == [
                "--json", "--show-passwords", "--age", "--breached", "--min-bits",
            ])
        #expect(try complete("coffer audit w") == ["web/"])
        #expect(try complete("coffer clone url --").contains("--path"))
        #expect(try Set(complete("coffer show web/")) == ["web/github.com", "web/my site"])
        #expect(try complete("coffer show web/my") == ["web/my site"])
        #expect(try complete("coffer edit em") == ["email"])
        #expect(try complete("coffer init --path ") == ["solo/", "web/"])
        #expect(try complete("coffer history web/g") == ["web/github.com"])
        #expect(try complete("coffer otp ur") == ["uri"])
        #expect(try complete("coffer otp uri web/g") == ["web/github.com"])
        #expect(
            try Set(complete("coffer otp insert --")) == [
                "--force", "--echo", "--secret", "--issuer", "--account",
            ])
        #expect(try Set(complete("coffer otp uri --")) == ["--clip", "--qrcode"])
        #expect(try complete("coffer restore --revision HEAD em") == ["email"])
        #expect(try complete("coffer generate email ").isEmpty)
        #expect(try complete("pass sy") == ["sync"])
        #expect(try Set(complete("pass show web/")) == ["web/github.com", "web/my site"])
    }
}
