import Coffer
import CofferTestSupport
import Testing

@testable import CofferCLI

/// Fast tests of the command line's own parts: the getopt emulation, coreutils quoting, tree's pattern
/// matching and listing, and small helpers. The differential suite compares whole runs with pass.
@Suite("Command-line parts")
struct CLIUnitTests {
    // The option tables are the commands' own, from the registry.
    private static let insertOptions = InsertCommand.command.options
    private static let showOptions = ShowCommand.command.options
    private static let initOptions = InitCommand.command.options

    private func parse(_ arguments: [String], _ options: [OptionParser.Option], posix: Bool = false)
        -> OptionParser.Result
    {
        OptionParser(options: options, program: "pass", stopAtFirstOperand: posix).parse(arguments)
    }

    @Test("An OTP URI in an error message shows no secret")
    func otpSecretsMasked() {
        #expect(
            OneTimePassword.masked("otpauth://totp/a:b?secret=JBSWY3DP&digits=6")
                == "otpauth://totp/a:b?secret=<hidden>&digits=6")
        #expect(
            OneTimePassword.masked("otpauth://hotp/a?issuer=x&secret=JB&secret=KC#frag")
                == "otpauth://hotp/a?issuer=x&secret=<hidden>&secret=<hidden>#frag")
        #expect(
            OneTimePassword.masked("otpauth://totp/a?secret=&digits=6") == "otpauth://totp/a?secret=&digits=6"
        )
        #expect(OneTimePassword.masked("otpauth://totp/mysecret=x?a=1") == "otpauth://totp/mysecret=x?a=1")
        #expect(OneTimePassword.masked("secret=ABC") == "secret=ABC")
    }

    @Test("Options may follow operands, combine, and stop at --")
    func permutation() {
        let result = parse(["name", "-mf", "--", "-e"], Self.insertOptions)
        #expect(result.options.map(\.name) == ["multiline", "force"])
        #expect(result.operands == ["name", "-e"])
        #expect(result.errors.isEmpty)
    }

    @Test("POSIXLY_CORRECT stops at the first operand")
    func posixlyCorrect() {
        let result = parse(["name", "-f"], Self.insertOptions, posix: true)
        #expect(result.options.isEmpty)
        #expect(result.operands == ["name", "-f"])
    }

    @Test("Long options take unique prefixes; glibc's messages for the rest")
    func longOptions() {
        #expect(parse(["--for", "x"], Self.insertOptions).options.map(\.name) == ["force"])
        #expect(parse(["--foo=bar"], Self.insertOptions).errors == ["pass: unrecognized option '--foo=bar'"])
        #expect(
            parse(["--force=1"], Self.insertOptions).errors == [
                "pass: option '--force' doesn't allow an argument"
            ])
        #expect(
            parse(["--=x"], Self.insertOptions).errors == [
                "pass: option '--=x' is ambiguous; possibilities: '--multiline' '--echo' '--force'"
            ])
        #expect(parse(["--path"], Self.initOptions).errors == ["pass: option '--path' requires an argument"])
        #expect(parse(["--path", "sub", "id"], Self.initOptions).options.map(\.value) == ["sub"])
        #expect(parse(["--path=sub"], Self.initOptions).options.map(\.value) == ["sub"])
    }

    @Test("Short options: unknown letters, required and optional values")
    func shortOptions() {
        let unknown = parse(
            ["-rfz", "x"], [.init(short: UInt8(ascii: "r"), long: "recursive", argument: .none)])
        #expect(unknown.errors == ["pass: invalid option -- 'f'", "pass: invalid option -- 'z'"])
        #expect(unknown.options.map(\.name) == ["recursive"])
        #expect(parse(["-p"], Self.initOptions).errors == ["pass: option requires an argument -- 'p'"])
        #expect(parse(["-psub"], Self.initOptions).options.map(\.value) == ["sub"])
        #expect(parse(["-p", "sub"], Self.initOptions).options.map(\.value) == ["sub"])
        let clip = parse(["-c2", "-c", "name", "--clip", "3", "--qrcode=4"], Self.showOptions)
        #expect(clip.options.map(\.value) == ["2", nil, nil, "4"])
        #expect(clip.operands == ["name", "3"])
    }

    @Test("coreutils quoting, as `ls --quoting-style=shell-escape-always` prints it")
    func quoting() {
        func quote(_ bytes: [UInt8], multibyte: Bool = true) -> String {
            String(decoding: CoreutilsMessages.quote(bytes: bytes, multibyte: multibyte), as: UTF8.self)
        }
        func quote(_ text: String, multibyte: Bool = true) -> String {
            quote(Array(text.utf8), multibyte: multibyte)
        }
        #expect(quote("plain") == "'plain'")
        #expect(quote("sp ace") == "'sp ace'")
        #expect(quote("it's") == "\"it's\"")
        #expect(quote("#it's") == "\"#it's\"")
        #expect(quote("it's!") == "'it'\\''s!'")
        #expect(quote("it's#x") == "'it'\\''s#x'")
        #expect(quote("new\nline") == "'new'$'\\n''line'")
        #expect(quote("\ttab") == "''$'\\t''tab'")
        #expect(quote("back\\slash") == "'back\\slash'")
        #expect(quote("é") == "'é'")
        #expect(quote("é", multibyte: false) == "''$'\\303\\251'")
        #expect(quote([0xff]) == "''$'\\377'")
        #expect(quote("\u{2028}") == "''$'\\342\\200\\250'")
        #expect(quote("\u{3000}") == "'\u{3000}'")
    }

    @Test("coreutils quoting of seeded names equals what ls prints for them (C locale, single bytes)")
    func quotingAgreesWithLs() throws {
        var random = SeededRandom(seed: 14)
        let alphabet = Array(" !\"#$%&'()*+,-.:;<=>?@[\\]^_`{|}~aZ09\t".utf8)
        var names = Set<[UInt8]>()
        while names.count < 300 {
            let name = (0..<Int.random(in: 1...5, using: &random)).map { _ in random.pick(alphabet) }
            if name != Array(".".utf8) && name != Array("..".utf8) { names.insert(name) }
        }
        var template = Array("/tmp/coffer-quoting-XXXXXX".utf8CString)
        let folder = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { _ = system("rm -rf '\(folder)'") }
        for name in names {
            let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name
            close(open(path.map { CChar(bitPattern: $0) } + [0], O_CREAT | O_WRONLY, 0o600))
        }
        let listed = try TestProcess.check(
            ["ls", "-1", "-A", "--quoting-style=shell-escape-always", folder],
            environment: ["LC_ALL": "C", "PATH": "/usr/bin:/bin"])
        let expected = Set(listed.outputText.split(separator: "\n").map(String.init))
        let ours = Set(
            names.map {
                String(decoding: CoreutilsMessages.quote(bytes: $0, multibyte: false), as: UTF8.self)
            })
        let extra = ours.subtracting(expected).sorted()
        let missing = expected.subtracting(ours).sorted()
        #expect(
            extra.isEmpty && missing.isEmpty, "ours only: \(extra.prefix(6)); ls only: \(missing.prefix(6))")
    }

    @Test("coreutils lines for store events")
    func eventLines() {
        #expect(CoreutilsMessages.line(for: .createdFolder("/s/a")) == "mkdir: created directory '/s/a'")
        #expect(CoreutilsMessages.line(for: .removedFolder("/s/a/")) == "removed directory '/s/a/'")
        #expect(CoreutilsMessages.line(for: .renamed(from: "/s/a", to: "/s/b")) == "renamed '/s/a' -> '/s/b'")
        #expect(CoreutilsMessages.line(for: .copied(from: "/s/a", to: "/s/b")) == "'/s/a' -> '/s/b'")
        #expect(
            CoreutilsMessages.line(for: .reencrypted(name: "a/b", keyIDs: ["AA", "BB"]))
                == "a/b: reencrypting to AA BB")
        #expect(
            CoreutilsMessages.line(for: .initialized(recipients: ["a", "b"], subfolder: "sub"))
                == "Password store initialized for a, b (sub)")
    }

    @Test("tree's -P matching: * stops at /, classes, alternatives, malformed patterns match")
    func patterns() {
        func matches(_ pattern: String, _ name: String, directory: Bool = false) -> Bool {
            TreePattern(Array(pattern.utf8), ignoreCase: true).matches(
                Array(name.utf8), isDirectory: directory)
        }
        #expect(matches("*sub*", "SubFolder"))
        #expect(!matches("*sub*", "x/sub-y"))
        #expect(!matches("*sub*", "sub/deeper"))
        #expect(matches("*a*|*b*", "xbx"))
        #expect(matches("*[0-9]*", "a7"))
        #expect(!matches("[a-c]x", "dx"))
        // As in tree, a negated class also matches the end of the name.
        #expect(matches("*[^a-z]*", "abc"))
        #expect(matches("*a|*", "zzz"))
        #expect(matches("*[s*", "anything"))
        #expect(matches("S?b", "sub"))
        #expect(matches("**", ""))
    }

    @Test("pass's sed removes .gpg before an optional colour and ' ->' or the end")
    func gpgSuffix() {
        func strip(_ line: String) -> String {
            String(decoding: TreeListing.strippingGPG(Array(line.utf8)), as: UTF8.self)
        }
        #expect(strip("\u{1b}[00ma.gpg\u{1b}[0m") == "\u{1b}[00ma\u{1b}[0m")
        #expect(strip("a.gpg -> b.gpg") == "a -> b")
        #expect(strip("a.gpg.gpg") == "a.gpg")
        #expect(strip("a.gpgx") == "a.gpgx")
        #expect(
            strip("\u{1b}[01;34md.gpg\u{1b}[0m  [recursive, not followed]")
                == "\u{1b}[01;34md.gpg\u{1b}[0m  [recursive, not followed]")
    }

    @Test("The listing of a folder, with colours and ASCII lines")
    func listing() throws {
        var template = Array("/tmp/coffer-cli-unit-XXXXXX".utf8CString)
        let folder = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { _ = system("rm -rf '\(folder)'") }
        mkdir(folder + "/web", 0o700)
        for file in ["/web/mail.gpg", "/bank.gpg", "/.gpg-id", "/notes.txt"] {
            close(open(folder + file, O_CREAT | O_WRONLY, 0o600))
        }
        symlink("bank.gpg", folder + "/alias.gpg")
        var listing = TreeListing(environment: ["TERM": "xterm", "TREE_CHARSET": "ascii"])
        let text = String(decoding: listing.render(folder + "/"), as: UTF8.self)
        #expect(
            text == """
                |-- \u{1b}[01;36malias\u{1b}[0m -> \u{1b}[00mbank\u{1b}[0m
                |-- \u{1b}[00mbank\u{1b}[0m
                |-- \u{1b}[00mnotes.txt\u{1b}[0m
                `-- \u{1b}[01;34mweb\u{1b}[0m
                    `-- \u{1b}[00mmail\u{1b}[0m

                """)
        var plain = TreeListing(environment: ["TREE_CHARSET": "UTF-8"])
        #expect(
            String(decoding: plain.render(folder + "/"), as: UTF8.self).hasPrefix(
                "\u{251c}\u{2500}\u{2500} alias -> bank\n"))
        var search = TreeListing(
            pattern: TreePattern(Array("*mail*".utf8), ignoreCase: true),
            environment: ["TREE_CHARSET": "ascii"])
        #expect(String(decoding: search.render(folder), as: UTF8.self) == "`-- web\n    `-- mail\n")
    }

    @Test("pass find's *a*|*b* patterns: the substring search agrees with tree's matcher")
    func substringSearch() {
        #expect(TreePattern(Array("*ab*|*C-d*".utf8), ignoreCase: true).isSubstringSearch)
        for notQuick in ["*a", "a*", "*a*|", "|*a*", "*a*||*b*", "*a?*", "*[ab]*", "**", "*a/b*", "*a\\b*"] {
            #expect(!TreePattern(Array(notQuick.utf8), ignoreCase: true).isSubstringSearch, "\(notQuick)")
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aAbB.-_ \u{e9}".utf8)
        func random(_ length: Int) -> [UInt8] {
            (0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] }
        }
        for _ in 0..<3000 {
            let terms = (0..<Int(generator.next(upperBound: 3 as UInt) + 1)).map { _ in
                "*" + String(decoding: random(Int(generator.next(upperBound: 3 as UInt)) + 1), as: UTF8.self)
                    + "*"
            }
            let pattern = Array(terms.joined(separator: "|").utf8)
            let name = random(Int(generator.next(upperBound: 8 as UInt)))
            for ignoreCase in [true, false] {
                let quick = TreePattern(pattern, ignoreCase: ignoreCase)
                let full = TreePattern(pattern, ignoreCase: ignoreCase, quickSubstrings: false)
                #expect(quick.isSubstringSearch)
                #expect(
                    quick.matches(name, isDirectory: false) == full.matches(name, isDirectory: false),
                    "\(terms) on \(name), ignoreCase \(ignoreCase)")
            }
        }
    }

    @Test("LS_COLORS keys, extensions and ln=target")
    func colors() {
        let colors = TreeColors(environment: ["TERM": "xterm", "LS_COLORS": "di=1:*.gpg=35:ln=target"])
        #expect(
            colors.start(mode: S_IFDIR | 0o755, name: [], orphan: false, isLinkTarget: false)
                == Array("\u{1b}[1m".utf8))
        #expect(
            colors.start(mode: S_IFREG | 0o600, name: Array("a.gpg".utf8), orphan: false, isLinkTarget: false)
                == Array("\u{1b}[35m".utf8))
        #expect(
            colors.start(mode: S_IFREG | 0o600, name: Array("a".utf8), orphan: false, isLinkTarget: false)
                == nil)
        #expect(colors.linkAsTarget)
        #expect(!TreeColors(environment: [:]).enabled)
        // Endings are searched last-given first; an empty ending matches every file.
        let endings = TreeColors(environment: ["TERM": "xterm", "LS_COLORS": "*=33:*.gpg=35:*pg=36"])
        func color(_ name: String) -> String? {
            endings.start(mode: S_IFREG | 0o600, name: Array(name.utf8), orphan: false, isLinkTarget: false)
                .map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(color("a.gpg") == "\u{1b}[36m")
        #expect(color("a.txt") == "\u{1b}[33m")
        #expect(color("") == "\u{1b}[33m")
        let builtIn = TreeColors(environment: ["TERM": "xterm"])
        #expect(
            builtIn.start(
                mode: S_IFREG | 0o600, name: Array("x.tar.gz".utf8), orphan: false, isLinkTarget: false)
                == Array("\u{1b}[01;31m".utf8))
        #expect(
            builtIn.start(mode: S_IFREG | 0o700, name: Array("x.gz".utf8), orphan: false, isLinkTarget: false)
                == Array("\u{1b}[01;32m".utf8))
    }

    @Test("dirname, program names and sleep durations")
    func helpers() {
        #expect(Invocation.dirname("a/b/c") == "a/b")
        #expect(Invocation.dirname("c") == ".")
        #expect(Invocation.dirname("a//b//") == "a")
        #expect(Invocation.dirname("/c") == "/")
        #expect(CofferCLI.programName("/usr/bin/pass") == "pass")
        #expect(CofferCLI.programName("coffer") == "coffer")
        #expect(ClipboardRestorer.seconds("45") == 45)
        #expect(ClipboardRestorer.seconds("1.5m") == 90)
        #expect(ClipboardRestorer.seconds("soon") == 0)
    }

    @Test("Only PASSWORD_STORE_GPG_OPTS words that change pass's behaviour are reported")
    func gpgOptions() {
        #expect(GPGMessages.unapplied(["--no-greeting", "--keyserver", "hkp://x"], encrypting: true) == [])
        #expect(GPGMessages.unapplied(["--armor"], encrypting: true) == ["--armor"])
        #expect(GPGMessages.unapplied(["--armor", "--cipher-algo", "AES256"], encrypting: false) == [])
        #expect(
            GPGMessages.unapplied(["--pinentry-mode", "loopback"], encrypting: false) == [
                "--pinentry-mode loopback"
            ])
    }

    @Test("The progress line: bar, count, rate and time left")
    func progressLine() {
        #expect(
            ProgressMeter.line(label: "checking", done: 250, total: 1000, elapsed: 2.5)
                == "checking [======                  ] 250/1000  100/s  8s left")
        #expect(
            ProgressMeter.line(label: "x", done: 3, total: 3, elapsed: 1)
                == "x [========================] 3/3  3/s")
        #expect(ProgressMeter.duration(59.2) == "1m00s")
        #expect(ProgressMeter.duration(185) == "3m05s")
        #expect(ProgressMeter.duration(3720) == "1h02m")
    }

    @Test("The progress line is drawn on a terminal only, after the delay, and erased by clear")
    func progressOnTerminal() throws {
        let (master, terminal) = try #require(Self.openPseudoTerminal())
        defer {
            close(master)
            close(terminal)
        }
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer { pipeEnds.forEach { close($0) } }

        func drawn(_ descriptor: Int32, _ reader: Int32, delay: Double, environment: [String: String])
            -> String
        {
            let meter = ProgressMeter(
                label: "checking", environment: environment, descriptor: descriptor, delay: delay)
            meter.update(done: 1, total: 4)
            meter.clear()
            meter.update(done: 2, total: 4)
            meter.update(done: 4, total: 4)
            // A terminal passes data on asynchronously: read until nothing more comes for half a second.
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var wait = [pollfd(fd: reader, events: Int16(POLLIN), revents: 0)]
            while poll(&wait, 1, 500) > 0 {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                received += buffer[..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
        let shown = drawn(terminal, master, delay: 0, environment: ["TERM": "xterm"])
        #expect(shown.hasPrefix("\r\u{1b}[Kchecking [======                  ] 1/4"))
        // Cleared, drawn again at once after a clear, and gone when the work is done.
        #expect(shown.contains("\r\u{1b}[K\r\u{1b}[Kchecking [============            ] 2/4"))
        #expect(shown.hasSuffix("/s  1s left\r\u{1b}[K"))
        #expect(drawn(terminal, master, delay: 60, environment: ["TERM": "xterm"]).isEmpty)
        #expect(drawn(terminal, master, delay: 0, environment: ["TERM": "dumb"]).isEmpty)
        #expect(drawn(terminal, master, delay: 0, environment: ["COFFER_PROGRESS": "0"]).isEmpty)
        #expect(drawn(pipeEnds[1], pipeEnds[0], delay: 0, environment: ["TERM": "xterm"]).isEmpty)
    }

    /// A pseudo-terminal pair: `(master, terminal)`.
    static func openPseudoTerminal() -> (Int32, Int32)? {
        #if os(Linux)
            // posix_openpt and friends are not in Swift's Glibc module: open the multiplexer, unlock
            // the pair (TIOCSPTLCK) and ask for its number (TIOCGPTN), as unlockpt and ptsname do.
            let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            guard master >= 0 else { return nil }
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard ioctl(master, UInt(0x4004_5431), &unlock) == 0,
                ioctl(master, UInt(0x8004_5430), &number) == 0
            else {
                close(master)
                return nil
            }
            let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        #else
            let master = posix_openpt(O_RDWR | O_NOCTTY)
            guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
                return nil
            }
            let terminal = open(name, O_RDWR | O_NOCTTY)
        #endif
        guard terminal >= 0 else {
            close(master)
            return nil
        }
        return (master, terminal)
    }
}
