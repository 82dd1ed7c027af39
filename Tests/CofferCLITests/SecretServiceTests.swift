import Coffer
import CofferSecretService
import CofferTestSupport
import Testing

/// A store and a private session bus for `coffer secret-service`: each test is a bash script run under
/// `dbus-run-session` (a bus of its own with no activatable services, so nothing but the provider under
/// test can answer), with coffer by its absolute path and `PATH=/usr/bin:/bin`. The script's prelude
/// starts the provider, waits until it owns `org.freedesktop.secrets`, and stops it on exit.
struct SecretServiceSandbox {
    let installed: InstalledAsPass
    let coffer: String
    /// The bus configuration: a session bus that activates nothing.
    let busConfig: String
    /// Where the provider's standard error goes.
    var providerLog: String { installed.sandbox.directory + "/provider.log" }

    static let prelude = #"""
        set -u
        coffer=$1
        provider=
        wait_for_name() {
            local i
            for i in $(seq 300); do
                if dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
                    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
                    grep -q 'boolean true'; then
                    return 0
                fi
                if [ -n "$provider" ] && ! kill -0 "$provider" 2>/dev/null; then
                    echo "the provider exited" >&2
                    return 1
                fi
                sleep 0.1
            done
            echo "the provider did not take the name" >&2
            return 1
        }
        start_provider() {
            "$coffer" secret-service "$@" 2>>"$PROVIDER_LOG" &
            provider=$!
            wait_for_name || exit 1
        }
        # A key with the passphrase lock-pass: its fingerprint in $fpr.
        make_lock_key() {
            gpg --batch --quiet --pinentry-mode loopback --passphrase 'lock-pass' \
                --quick-gen-key 'Lock Test <lock@coffer.test>' ed25519 sign never
            fpr=$(gpg --with-colons --list-keys lock@coffer.test | awk -F: '/^fpr/ {print $10; exit}')
            gpg --batch --quiet --pinentry-mode loopback --passphrase 'lock-pass' --quick-add-key "$fpr" cv25519 encr never
        }
        # The lock key, a pinentry (the program given, if any) for gpg-agent, which starts again, and
        # secret-service/login encrypted to the key; its keygrip in $grip.
        lock_login() {
            make_lock_key
            printf 'allow-preset-passphrase\n' >> "$GNUPGHOME/gpg-agent.conf"
            if [ -n "${1:-}" ]; then printf 'pinentry-program %s\n' "$1" >> "$GNUPGHOME/gpg-agent.conf"; fi
            gpgconf --kill gpg-agent
            /usr/bin/pass init -p secret-service/login "$fpr" >/dev/null
            grip=$(gpg --with-colons --with-keygrip --list-secret-keys lock@coffer.test | awk -F: '/^grp/ {g=$10} END {print g}')
        }
        stop_provider() {
            if [ -n "$provider" ]; then
                kill "$provider" 2>/dev/null
                wait "$provider" 2>/dev/null
                provider=
            fi
        }
        trap stop_provider EXIT
        call() {
            dbus-send --session --print-reply --dest=org.freedesktop.secrets "$@"
        }

        """#

    /// A sandbox whose bus activates the services described in `serviceDirectory`, when given.
    init(serviceDirectory: String? = nil) throws {
        installed = try InstalledAsPass(git: true)
        coffer = try CofferBinary.path()
        busConfig = installed.sandbox.directory + "/session.conf"
        let services = serviceDirectory.map { "  <servicedir>\($0)</servicedir>\n" } ?? ""
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=\(installed.sandbox.directory)</listen>
          <auth>EXTERNAL</auth>
        \(services)  <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """.write(toFile: busConfig)
    }

    /// The environment of the script: the sandbox's, the short `PATH`, the provider's log.
    var environment: [String: String] {
        var environment = installed.environment
        environment["PROVIDER_LOG"] = providerLog
        environment["PYTHON_KEYRING_BACKEND"] = "keyring.backends.SecretService.Keyring"
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        return environment
    }

    /// Runs `script` (after the prelude) on a private session bus.
    func run(_ script: String, timeout: Double = 180) throws -> ProcessResult {
        let file = installed.sandbox.directory + "/script.sh"
        try (Self.prelude + script).write(toFile: file)
        return try TestProcess.run(
            ["dbus-run-session", "--config-file=" + busConfig, "--", "bash", file, coffer],
            environment: environment, timeout: timeout)
    }

    /// Runs `script` and throws unless it exits 0.
    @discardableResult
    func check(_ script: String, timeout: Double = 180) throws -> ProcessResult {
        let result = try run(script, timeout: timeout)
        guard result.status == 0 else {
            throw SandboxError(
                "the script exited \(result.status)\(result.timedOut ? " (timed out)" : ""):\n"
                    + result.outputText + result.errorText + "\nprovider: " + providerText())
        }
        return result
    }

    /// A new sandbox, and what `script` did in it once the provider had started (``check(_:timeout:)``).
    static func started(_ script: String) throws -> (SecretServiceSandbox, ProcessResult) {
        let bus = try SecretServiceSandbox()
        return (bus, try bus.check("start_provider\n" + script))
    }

    /// A new sandbox, and what the secretstorage script `python` did in it (``checkPython(_:)``).
    static func startedPython(_ python: String) throws -> (SecretServiceSandbox, ProcessResult) {
        let bus = try SecretServiceSandbox()
        return (bus, try bus.checkPython(python))
    }

    /// Starts the provider and runs `python`, a secretstorage script that finds `bus` connected and
    /// `collection_with_item(label, item_label, attributes, secret)` (which makes a collection holding one
    /// item and returns it) defined, and throws unless it exits 0.
    @discardableResult
    func checkPython(_ python: String) throws -> ProcessResult {
        try check(
            #"""
            start_provider
            python3 - <<'PYTHON'
            import secretstorage
            bus = secretstorage.dbus_init()
            def collection_with_item(label, item_label, attributes, secret):
                collection = secretstorage.create_collection(bus, label)
                collection.create_item(item_label, attributes, secret)
                return collection

            """# + python + "\nPYTHON")
    }

    /// What the provider printed.
    func providerText() -> String {
        String(decoding: (try? installed.sandbox.read(providerLog)) ?? [], as: UTF8.self)
    }

    /// The item entries of `collection`, by name.
    func items(_ collection: String = "login") -> [String] {
        let folder = installed.store + "/secret-service/" + collection
        let names = (try? FileSystem.contents(of: folder)) ?? []
        return names.filter { $0.hasSuffix(".gpg") && !$0.hasPrefix(".") }.map {
            "secret-service/" + collection + "/" + String($0.dropLast(4))
        }
    }

    /// Every byte the store holds in clear: its files as they are (git's objects decompressed), the
    /// commit messages, and the provider's log.
    func clearBytes() throws -> String {
        var text = try installed.sandbox.check(
            [
                "sh", "-c", "find \"$1\" -type f ! -path '*/.git/objects/*' -exec cat {} +", "sh",
                installed.store,
            ]
        ).outputText
        text += try installed.sandbox.check(
            ["sh", "-c", "git -C \"$1\" cat-file --batch-all-objects --batch", "sh", installed.store]
        ).outputText
        text += try installed.git(["log", "--all", "--format=%B"])
        text += providerText()
        return text
    }
}

/// `coffer secret-service` with the real clients of Debian: libsecret's `secret-tool`, Python's
/// secretstorage and keyring.
@Suite("Secret Service provider")
struct SecretServiceTests {
    @Test("secret-tool store, lookup, search --all, replace and clear; items are entries pass and gpg read")
    func secretTool() throws {
        let (bus, result) = try SecretServiceSandbox.started(
            #"""
            printf %s 'hunter2-Sekret' | secret-tool store --label='GitHub token 4711' service gh-8c1 user alice-93
            echo "store=$?"
            echo "lookup=$(secret-tool lookup service gh-8c1 user alice-93)"
            printf %s 'second-Sekret' | secret-tool store --label='Second 5123' service gh-8c1 user bob-17
            secret-tool search --all service gh-8c1 > search.txt 2>&1
            echo "found=$(grep -c '^\[' search.txt)"
            grep -q '^label = GitHub token 4711$' search.txt && echo label-ok
            grep -q '^attribute.user = bob-17$' search.txt && echo attribute-ok
            grep -q '^secret = second-Sekret$' search.txt && echo secret-ok
            printf %s 'replaced-Sekret' | secret-tool store --label='GitHub token 4711' service gh-8c1 user alice-93
            echo "replaced=$(secret-tool lookup service gh-8c1 user alice-93)"
            secret-tool clear service gh-8c1 user bob-17
            echo "clear=$?"
            secret-tool lookup service gh-8c1 user bob-17
            echo "gone=$?"
            rm -f search.txt
            """#)
        let output = result.outputText
        #expect(output.contains("store=0\n"), "\(output)")
        #expect(output.contains("lookup=hunter2-Sekret\n"), "\(output)")
        #expect(output.contains("found=2\n"), "\(output)")
        #expect(output.contains("label-ok\nattribute-ok\nsecret-ok\n"), "\(output)")
        #expect(output.contains("replaced=replaced-Sekret\n"), "\(output)")
        #expect(output.contains("clear=0\n"), "\(output)")
        #expect(output.contains("gone=1\n"), "\(output)")

        // One item is left: an ordinary entry that gpg and Debian's pass decrypt.
        let names = bus.items()
        try #require(names.count == 1, "\(names)")
        let decrypted = try #require(try bus.installed.decrypted(names[0]))
        let lines = decrypted.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "replaced-Sekret")
        #expect(lines.contains("label: GitHub token 4711"), "\(decrypted)")
        #expect(lines.contains("attribute.service: gh-8c1"), "\(decrypted)")
        #expect(lines.contains("attribute.user: alice-93"), "\(decrypted)")
        let shown = try bus.installed.sandbox.check(
            ["/usr/bin/pass", "show", names[0]], environment: ["PATH": "/usr/bin:/bin"])
        #expect(shown.outputText.split(separator: "\n") == decrypted.split(separator: "\n"))

        // Every change is committed, and nothing of the items is in clear anywhere.
        #expect(try bus.installed.uncommitted().isEmpty)
        let clear = try bus.clearBytes()
        // Words that hexadecimal object ids and random ciphertext cannot spell by chance (a bare "4711"
        // can: it was found once in a git object id).
        for secretWord in [
            "gh-8c1", "alice-93", "bob-17", "GitHub token", "token 4711", "Second 5123", "Sekret",
        ] {
            #expect(!clear.contains(secretWord), "\(secretWord) is in clear")
        }
    }

    @Test("SearchItems answers from the index: it works while nothing can be decrypted")
    func searchNeverDecrypts() throws {
        let (_, result) = try SecretServiceSandbox.started(
            #"""
            printf %s 'indexed-Sekret' | secret-tool store --label='Indexed' service idx-5521 user carol-8
            # From now on no entry can be decrypted: the secret keys are gone and the agent forgets them.
            mv "$GNUPGHOME/private-keys-v1.d" "$GNUPGHOME/private-keys-away"
            gpgconf --kill gpg-agent
            call /org/freedesktop/secrets org.freedesktop.Secret.Service.SearchItems \
                dict:string:string:service,idx-5521 > search.txt
            grep -c 'object path "/org/freedesktop/secrets/collection/login/' search.txt
            call /org/freedesktop/secrets org.freedesktop.Secret.Service.SearchItems \
                dict:string:string:service,absent-0 | grep -c 'object path' || true
            # Getting the secret now fails, with an error that names no attribute.
            python3 - <<'PYTHON'
            import secretstorage
            bus = secretstorage.dbus_init()
            items = list(secretstorage.search_items(bus, {"service": "idx-5521"}))
            try:
                items[0].get_secret()
                print("get=ok")
            except Exception as error:
                print("get-error", str(error).replace("\\n", " "))
            PYTHON
            mv "$GNUPGHOME/private-keys-away" "$GNUPGHOME/private-keys-v1.d"
            rm -f search.txt
            """#)
        let lines = result.outputText.split(separator: "\n").map(String.init)
        #expect(lines.first == "1", "\(result.outputText)")
        #expect(lines.dropFirst().first == "0", "\(result.outputText)")
        #expect(
            lines.last?.hasPrefix("get-error [org.freedesktop.DBus.Error.Failed]") == true,
            "\(result.outputText)")
        #expect(!result.outputText.contains("idx-5521") && !result.outputText.contains("carol-8"))
        #expect(!result.outputText.contains("Sekret"))
    }

    @Test("A second provider is refused with a clear message; --replace takes the name")
    func nameOwnership() throws {
        let (bus, result) = try SecretServiceSandbox.started(
            #"""
            first=$provider
            "$coffer" secret-service 2> second.txt
            echo "second=$?"
            cat second.txt
            "$coffer" secret-service --replace 2>>"$PROVIDER_LOG" &
            provider=$!
            wait "$first"
            echo "first=$?"
            wait_for_name && echo replaced
            printf %s 'after-Sekret' | secret-tool store --label='After' service after-1
            echo "lookup=$(secret-tool lookup service after-1)"
            rm -f second.txt
            """#)
        let output = result.outputText
        #expect(output.contains("second=1\n"), "\(output)")
        #expect(
            output.contains(
                "coffer: org.freedesktop.secrets is already owned by another provider (coffer, pid "),
            "\(output)")
        #expect(output.contains("); stop it, or run coffer secret-service --replace\n"), "\(output)")
        #expect(output.contains("first=0\nreplaced\n"), "\(output)")
        #expect(output.contains("lookup=after-Sekret\n"), "\(output)")
        #expect(bus.providerText().contains("another provider took org.freedesktop.secrets; stopping"))
    }

    /// A client of Python's secretstorage that checks collections, items, search, replace, delete and
    /// locking in one session algorithm (`dh` or `plain`), printing `ok` and what it checked.
    static let secretStorageClient = #"""
        import sys
        import secretstorage
        from secretstorage.dhcrypto import Session
        from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE

        algorithm = sys.argv[1]
        bus = secretstorage.dbus_init()
        session = None
        if algorithm == "plain":
            service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)
            output, path = service.call("OpenSession", "sv", "plain", ("s", ""))
            session = Session()
            session.object_path = path
            session.encrypted = False
        else:
            session = secretstorage.util.open_session(bus)
            assert session.encrypted and session.aes_key is not None

        def collection_at(path):
            return secretstorage.Collection(bus, path, session=session)

        default = collection_at(secretstorage.get_collection_by_alias(bus, "default").collection_path)
        assert secretstorage.get_default_collection(bus).get_label() == "Login"
        assert default.collection_path.endswith("/collection/login"), default.collection_path
        assert default.get_label() == "Login"
        assert not default.is_locked()

        # Odd names and values: a colon, a percent sign, blanks at the ends, a line break, no ASCII.
        attributes = {"xdg:schema": "org.example.Mail", "user": "dave-" + algorithm,
                      "odd key: 100%": " spaced\nvalue ", "ünï": "çödé"}
        secret = b"bin\x00\nary\xff " + algorithm.encode()
        label = "Mail für Dave\nsecond line"
        item = default.create_item(label, attributes, secret, replace=False, content_type="application/octet-stream")
        item = secretstorage.Item(bus, item.item_path, session=session)
        assert item.get_secret() == secret
        assert item.get_secret_content_type() == "application/octet-stream"
        assert item.get_attributes() == attributes, item.get_attributes()
        assert item.get_label() == label
        assert item.get_created() > 0 and item.get_modified() >= item.get_created()
        found = list(default.search_items({"user": "dave-" + algorithm}))
        assert [f.item_path for f in found] == [item.item_path], found
        found = list(secretstorage.search_items(bus, {"odd key: 100%": " spaced\nvalue ", "user": "dave-" + algorithm}))
        assert [f.item_path for f in found] == [item.item_path], found
        assert list(default.search_items({"user": "nobody"})) == []
        print("ok create and search")

        # Replace keeps the item and changes its secret; without replace a second item is made.
        again = default.create_item("Replaced", attributes, b"new " + algorithm.encode(), replace=True)
        assert again.item_path == item.item_path
        assert secretstorage.Item(bus, item.item_path, session=session).get_secret() == b"new " + algorithm.encode()
        other = default.create_item("Twin", attributes, b"twin", replace=False)
        assert other.item_path != item.item_path
        assert len(list(default.search_items(attributes))) == 2
        print("ok replace")

        # Changing the label, attributes and secret of an item.
        item.set_label("Relabelled")
        item.set_attributes({"user": "erin-" + algorithm, "xdg:schema": "org.example.Erin"})
        item.set_secret(b"changed " + algorithm.encode())
        fresh = secretstorage.Item(bus, item.item_path, session=session)
        assert fresh.get_label() == "Relabelled"
        assert fresh.get_attributes() == {"user": "erin-" + algorithm, "xdg:schema": "org.example.Erin"}
        type_property = DBusAddressWrapper(fresh.item_path, "org.freedesktop.Secret.Item", bus).get_property("Type")
        assert type_property == "org.example.Erin", type_property
        assert fresh.get_secret() == b"changed " + algorithm.encode()
        assert list(default.search_items({"user": "dave-" + algorithm})) != []
        assert len(list(default.search_items({"user": "erin-" + algorithm}))) == 1
        print("ok change")

        # Deleting.
        other.delete()
        fresh.delete()
        assert list(default.search_items({"user": "erin-" + algorithm})) == []
        assert list(default.search_items(attributes)) == []
        keeper = default.create_item(label, attributes, secret, content_type="application/octet-stream")
        assert [i.item_path for i in default.search_items(attributes)] == [keeper.item_path]
        print("ok delete")

        # A collection of its own, and one made with an alias (which gnome-keyring refuses): asked again,
        # the alias gives the same collection.
        work = secretstorage.create_collection(bus, "Work " + algorithm, session=session)
        assert work.get_label() == "Work " + algorithm
        assert any(c.collection_path == work.collection_path for c in secretstorage.get_all_collections(bus))
        other = secretstorage.create_collection(bus, "Other", alias="other-" + algorithm, session=session)
        again = secretstorage.create_collection(bus, "Again", alias="other-" + algorithm, session=session)
        assert again.collection_path == other.collection_path
        assert secretstorage.get_collection_by_alias(bus, "other-" + algorithm).get_label() == "Other"
        other.delete()
        alias_path = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus).call("ReadAlias", "s", "other-" + algorithm)
        assert alias_path == ("/",), alias_path
        kept = work.create_item("In work", {"place": "work-" + algorithm}, b"work secret")
        assert [i.item_path for i in secretstorage.search_items(bus, {"place": "work-" + algorithm})] == [kept.item_path]
        work.set_label("Renamed " + algorithm)
        assert collection_at(work.collection_path).get_label() == "Renamed " + algorithm
        print("ok collection")

        # Locking: a locked collection's items are found as locked and give no secret until unlocked.
        work.lock()
        assert work.is_locked()
        assert secretstorage.Item(bus, kept.item_path, session=session).is_locked()
        try:
            secretstorage.Item(bus, kept.item_path, session=session).get_secret()
            raise SystemExit("a locked item gave its secret")
        except secretstorage.exceptions.LockedException:
            pass
        dismissed = work.unlock()
        assert not dismissed and not work.is_locked()
        assert secretstorage.Item(bus, kept.item_path, session=session).get_secret() == b"work secret"
        print("ok lock")

        work.delete()
        assert all(c.collection_path != work.collection_path for c in secretstorage.get_all_collections(bus))
        assert list(secretstorage.search_items(bus, {"place": "work-" + algorithm})) == []
        print("ok delete collection")
        """#

    @Test(
        "python3-secretstorage: collections, items, search, replace, delete, locking",
        arguments: ["dh", "plain"])
    func secretStorage(algorithm: String) throws {
        let bus = try SecretServiceSandbox()
        try Self.secretStorageClient.write(toFile: bus.installed.sandbox.directory + "/client.py")
        let result = try bus.check(
            """
            start_provider
            python3 "$(dirname "$0")/client.py" \(algorithm)
            """)
        #expect(
            result.outputText
                == "ok create and search\nok replace\nok change\nok delete\nok collection\nok lock\nok delete collection\n",
            "\(result.outputText)\(result.errorText)")

        // The item left is an entry whose fields read back exactly; nothing of it is in clear.
        let names = bus.items()
        try #require(names.count == 1, "\(names)")
        let text = try #require(try bus.installed.decrypted(names[0]))
        let restored = ItemStore.parse(SecureBytes(string: text), name: "x")
        #expect(restored.metadata.attributes["odd key: 100%"] == " spaced\nvalue ")
        #expect(restored.metadata.attributes["ünï"] == "çödé")
        #expect(restored.metadata.label == "Mail für Dave\nsecond line")
        #expect(text.contains("secret-encoding: base64\n"), "\(text)")
        #expect(try bus.installed.uncommitted().isEmpty)
        // The collection made and deleted left no folder.
        #expect(try FileSystem.contents(of: bus.installed.store + "/secret-service") == ["login"])
        let clear = try bus.clearBytes()
        for word in ["dave-", "erin-", "spaced", "Mail f", "org.example.Mail", "work secret", "Relabelled"] {
            #expect(!clear.contains(word), "\(word) is in clear")
        }
    }

    @Test("Python keyring (SecretService backend): keyring set, get and del")
    func pythonKeyring() throws {
        let (bus, result) = try SecretServiceSandbox.started(
            #"""
            printf '%s\n' 'kr-Sekret 1' | keyring set mail.example.org frank-77 2>/dev/null
            echo "set=$?"
            echo "get=$(keyring get mail.example.org frank-77)"
            printf '%s\n' 'kr-Sekret 2' | keyring set mail.example.org frank-77 2>/dev/null
            echo "again=$(keyring get mail.example.org frank-77)"
            keyring del mail.example.org frank-77
            echo "del=$?"
            keyring get mail.example.org frank-77
            echo "gone=$?"
            """#)
        #expect(
            result.outputText == "set=0\nget=kr-Sekret 1\nagain=kr-Sekret 2\ndel=0\ngone=1\n",
            "\(result.outputText)\(result.errorText)")
        #expect(bus.items().isEmpty)
        #expect(try bus.installed.git(["log", "--format=%s"]).contains("Remove secret-service/login/"))
        let clear = try bus.clearBytes()
        #expect(
            !clear.contains("frank-77") && !clear.contains("mail.example.org") && !clear.contains("Sekret"))
    }

    @Test("Entries written by pass reach the index (inotify); clients are told through signals")
    func refreshAndSignals() throws {
        let (bus, result) = try SecretServiceSandbox.started(
            #"""
            dbus-monitor --session "type='signal',sender='org.freedesktop.secrets'" > signals.txt 2>/dev/null &
            monitor=$!
            sleep 0.5
            poll() {
                local i
                for i in $(seq 100); do
                    if [ "$(secret-tool lookup "$@" 2>/dev/null)" = "$expected" ]; then return 0; fi
                    sleep 0.1
                done
                return 1
            }
            printf %s 'tool-Sekret' | secret-tool store --label='By secret-tool' service tool-1
            # Debian's pass writes an item in the provider's format, then removes it.
            printf 'ext-Sekret\nlabel: By pass\nattribute.service: ext-1\n' |
                /usr/bin/pass insert -m secret-service/login/external >/dev/null
            expected=ext-Sekret poll service ext-1 && echo "pass-insert seen"
            printf 'other-Sekret\nlabel: Elsewhere\nattribute.service: ext-2\n' |
                /usr/bin/pass insert -m secret-service/elsewhere/item >/dev/null
            expected=other-Sekret poll service ext-2 && echo "new collection seen"
            /usr/bin/pass rm -f secret-service/login/external >/dev/null
            expected= poll service ext-1 && echo "pass-rm seen"
            secret-tool lookup service tool-1
            echo
            sleep 0.5
            kill "$monitor"
            wait "$monitor" 2>/dev/null
            for signal in ItemCreated ItemDeleted; do
                echo "$signal $(grep -A1 "member=$signal" signals.txt | grep -c 'collection/login/')"
            done
            echo "CollectionCreated $(grep -A1 'member=CollectionCreated' signals.txt | grep -c 'collection/elsewhere"')"
            grep -A1 'member=ItemCreated' signals.txt | grep -c 'collection/login/external"' || true
            echo "PropertiesChanged $(grep 'path=/org/freedesktop/secrets/collection/login;' signals.txt | grep -c 'member=PropertiesChanged')"
            rm -f signals.txt
            """#)
        #expect(
            result.outputText
                == "pass-insert seen\nnew collection seen\npass-rm seen\ntool-Sekret\nItemCreated 2\n"
                + "ItemDeleted 1\nCollectionCreated 1\n1\nPropertiesChanged 3\n",
            "\(result.outputText)\(result.errorText)\(bus.providerText())")
    }

    @Test("make install's activation file starts the provider when a client first asks for it")
    func activation() throws {
        let folder = try TestFiles.temporaryFolder("coffer-dbus-services")
        defer { _ = try? TestProcess.run(["rm", "-rf", folder], environment: ["PATH": "/usr/bin:/bin"]) }
        let template = String(
            decoding: TestFiles.read(TestFiles.packageRoot + "/data/org.freedesktop.secrets.service.in")
                ?? [],
            as: UTF8.self)
        let binFolder = String(try CofferBinary.path().dropLast("/coffer".count))
        try TestFiles.write(
            template.split(separator: "@BINDIR@", omittingEmptySubsequences: false).joined(
                separator: binFolder),
            to: folder + "/org.freedesktop.secrets.service", mode: 0o644)
        let bus = try SecretServiceSandbox(serviceDirectory: folder)
        let result = try bus.check(
            #"""
            printf %s 'activated-Sekret' | secret-tool store --label='Activated' service act-1
            echo "store=$?"
            echo "lookup=$(secret-tool lookup service act-1)"
            provider=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
                org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets |
                sed -n 's/.*uint32 //p')
            echo "by=$(cat /proc/$provider/comm)"
            """#)
        #expect(
            result.outputText == "store=0\nlookup=activated-Sekret\nby=coffer\n",
            "\(result.outputText)\(result.errorText)")
        #expect(bus.items().count == 1)
    }

    @Test(
        "Clients that leave mid-call, use another's session or send nonsense get errors; the provider stays")
    func misbehavingClients() throws {
        let bus = try SecretServiceSandbox()
        try Self.secretStorageClient.write(toFile: bus.installed.sandbox.directory + "/unused.py")
        let result = try bus.check(
            #"""
            start_provider
            python3 - <<'PYTHON'
            import secretstorage
            from jeepney import new_method_call, DBusAddress
            from jeepney.io.blocking import open_dbus_connection
            from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE

            def error_name(error):
                return str(error.__cause__ or error).split("]")[0] + "]"

            # A client that sends CreateItem and leaves before the answer.
            leaving = open_dbus_connection(bus="SESSION")
            service = DBusAddress(SS_PATH, "org.freedesktop.secrets", SERVICE_IFACE)
            reply = leaving.send_and_get_reply(new_method_call(service, "OpenSession", "sv", ("plain", ("s", ""))))
            session = reply.body[1]
            collection = DBusAddress("/org/freedesktop/secrets/collection/login", "org.freedesktop.secrets",
                                     "org.freedesktop.Secret.Collection")
            leaving.send(new_method_call(collection, "CreateItem", "a{sv}(oayays)b", (
                {"org.freedesktop.Secret.Item.Label": ("s", "Left"),
                 "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"who": "leaver-1"})},
                (session, b"", b"left-Sekret", "text/plain"), False)))
            leaving.close()

            bus = secretstorage.dbus_init()
            found = list(secretstorage.search_items(bus, {"who": "leaver-1"}))
            print("left item", len(found), found[0].get_secret() if found else None)

            # Its session died with it: nobody else can use it.
            item = DBusAddressWrapper(found[0].item_path, "org.freedesktop.Secret.Item", bus)
            try:
                item.call("GetSecret", "o", session)
                print("dead session answered")
            except Exception as error:
                print("dead session", error_name(error))

            # Another client's live session is refused.
            other = open_dbus_connection(bus="SESSION")
            reply = other.send_and_get_reply(new_method_call(service, "OpenSession", "sv", ("plain", ("s", ""))))
            try:
                item.call("GetSecret", "o", reply.body[1])
                print("foreign session answered")
            except Exception as error:
                print("foreign session", error_name(error))

            # Wrong argument types, an unknown algorithm, a secret that does not decrypt.
            service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)
            for name, signature, body in [("SearchItems", "s", ("x",)), ("OpenSession", "sv", ("rot13", ("s", ""))),
                                          ("Unlock", "s", ("x",)), ("NoSuchMethod", "", ())]:
                try:
                    service.call(name, signature, *body)
                    print(name, "answered")
                except Exception as error:
                    print(name, error_name(error))
            session = secretstorage.util.open_session(bus)
            login = DBusAddressWrapper("/org/freedesktop/secrets/collection/login",
                                       "org.freedesktop.Secret.Collection", bus)
            try:
                login.call("CreateItem", "a{sv}(oayays)b", {}, (session.object_path, b"0123456789abcdef",
                                                                   b"not a multiple of sixteen", "text/plain"), False)
                print("bad ciphertext answered")
            except Exception as error:
                print("bad ciphertext", error_name(error))
            print("still serving", len(list(secretstorage.search_items(bus, {"who": "leaver-1"}))))
            PYTHON
            kill -0 "$provider" && echo alive
            """#)
        #expect(
            result.outputText == """
                left item 1 b'left-Sekret'
                dead session [org.freedesktop.Secret.Error.NoSession]
                foreign session [org.freedesktop.DBus.Error.AccessDenied]
                SearchItems [org.freedesktop.DBus.Error.InvalidArgs]
                OpenSession [org.freedesktop.DBus.Error.NotSupported]
                Unlock [org.freedesktop.DBus.Error.InvalidArgs]
                NoSuchMethod [org.freedesktop.DBus.Error.UnknownMethod]
                bad ciphertext [org.freedesktop.DBus.Error.InvalidArgs]
                still serving 1
                alive

                """, "\(result.outputText)\(result.errorText)")
        #expect(!bus.providerText().contains("Sekret") && !bus.providerText().contains("leaver"))
    }

    @Test("A commit that fails fails the call with git's reason and no secret; the provider goes on")
    func failingCommit() throws {
        let bus = try SecretServiceSandbox()
        let hook = bus.installed.store + "/.git/hooks/pre-commit"
        try TestFiles.write("#!/bin/sh\necho 'commits are refused here' >&2\nexit 1\n", to: hook, mode: 0o755)
        let result = try bus.check(
            #"""
            start_provider
            printf %s 'hooked-Sekret' | secret-tool store --label='Hooked label' service hook-1 2> store.txt
            echo "store=$?"
            cat store.txt
            rm -f store.txt "$PASSWORD_STORE_DIR/.git/hooks/pre-commit"
            printf %s 'after-Sekret' | secret-tool store --label='After' service hook-2
            echo "after=$(secret-tool lookup service hook-2)"
            """#)
        let output = result.outputText
        #expect(output.contains("store=1\n"), "\(output)")
        #expect(output.contains("commits are refused here"), "\(output)")
        #expect(
            !output.contains("hooked-Sekret") && !output.contains("hook-1")
                && !output.contains("Hooked label"))
        #expect(output.hasSuffix("after=after-Sekret\n"), "\(output)")
    }

    @Test("Lock tells gpg-agent to forget the passphrase of the collection's key")
    func lockForgetsPassphrase() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            lock_login
            printf %s 'lock-pass' | /usr/lib/gnupg/gpg-preset-passphrase --preset "$grip"
            cached() { gpg-connect-agent 'KEYINFO --list' /bye | awk -v g="$grip" '$3 == g {print $7}'; }
            start_provider
            printf %s 'locked-Sekret' | secret-tool store --label='Locked' service lock-1
            echo "lookup=$(secret-tool lookup service lock-1)"
            echo "before=$(cached)"
            python3 -c 'import secretstorage; c = secretstorage.get_default_collection(secretstorage.dbus_init()); c.lock(); print("locked", c.is_locked())'
            # The agent forgets in the background (pinentry may ask this very provider about its own cache).
            for i in $(seq 100); do [ "$(cached)" = - ] && break; sleep 0.1; done
            echo "after=$(cached)"
            """#)
        #expect(
            result.outputText == "lookup=locked-Sekret\nbefore=1\nlocked True\nafter=-\n",
            "\(result.outputText)\(result.errorText)")
    }

    @Test("A collection whose key's passphrase is not given at start is locked, not empty, until unlocked")
    func unreadableAtStartIsLocked() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            # pinentry is cancelled (the user dismisses it, or none can be shown).
            lock_login /bin/false
            printf %s 'lock-pass' | /usr/lib/gnupg/gpg-preset-passphrase --preset "$grip"
            start_provider
            printf %s 'kept-Sekret' | secret-tool store --label='Kept' service kept-1
            stop_provider
            # A new login: the agent has forgotten the passphrase.
            gpgconf --kill gpg-agent
            start_provider
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            c = secretstorage.get_default_collection(bus)
            print("locked", c.is_locked())
            try:
                c.create_item("Other", {"service": "other-1"}, b"other-Sekret")
                print("created while locked")
            except Exception as error:
                print("refused", type(error).__name__)
            try:
                c.set_label("Renamed")
                print("renamed while locked")
            except Exception as error:
                print("refused", type(error).__name__)
            '
            printf %s 'lock-pass' | /usr/lib/gnupg/gpg-preset-passphrase --preset "$grip"
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            c = secretstorage.get_default_collection(bus)
            print("dismissed", c.unlock())
            print("locked", c.is_locked(), [i.get_secret() for i in c.get_all_items()])
            '
            """#)
        #expect(
            result.outputText
                == "locked True\nrefused LockedException\nrefused LockedException\ndismissed False\n"
                + "locked False [b'kept-Sekret']\n",
            "\(result.outputText)\(result.errorText)")
        #expect(try bus.installed.uncommitted().isEmpty)
    }

    @Test("A collection under a key with a passphrase stays locked at a new login, its index kept or not")
    func lockedDespiteIndex() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            lock_login /bin/false
            printf %s 'lock-pass' | /usr/lib/gnupg/gpg-preset-passphrase --preset "$grip"
            start_provider
            printf %s 'kept-Sekret' | secret-tool store --label='Kept label' service kept-1
            # Settled and kept in the index (the provider reads it again after two seconds).
            sleep 3
            stop_provider
            index="$HOME/.cache/coffer/secret-service"
            gpg --batch --quiet -d "$(find "$index" -name '*.gpg' | head -n 1)" | grep -c '^label: Kept label'
            # A new login: the agent has forgotten the passphrase.
            gpgconf --kill gpg-agent
            start_provider
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            c = secretstorage.get_default_collection(bus)
            print("locked", c.is_locked(), [i.get_label() for i in c.get_all_items()])
            '
            """#)
        #expect(
            result.outputText == "1\nlocked True []\n", "\(result.outputText)\(result.errorText)")
    }

    @Test("An entry that did not decrypt is not tried again on every change: pinentry is not asked each time")
    func unreadableNotRetried() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            # A pinentry that counts how often it is asked, and is cancelled.
            count="$(dirname "$0")/pinentry-count"
            printf '#!/bin/sh\necho asked >> "%s"\nexit 1\n' "$count" > "$count-ing"
            chmod 755 "$count-ing"
            lock_login "$count-ing"
            printf 'locked-Sekret\n' | gpg --batch --quiet -e -r "$fpr" -o "$PASSWORD_STORE_DIR/secret-service/login/held.gpg"
            start_provider
            asked() { [ -f "$count" ] && wc -l < "$count" || echo 0; }
            first=$(asked)
            [ "$first" -ge 1 ] && echo "asked at start"
            # Changes of the store (another collection, readable) make the provider read it again.
            served() {
                python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            print(sum(1 for c in secretstorage.get_all_collections(bus) for i in c.get_all_items()))'
            }
            for n in 1 2 3; do
                printf 'free-%s\n' "$n" | /usr/bin/pass insert -m "secret-service/free/item-$n" >/dev/null
                for i in $(seq 100); do [ "$(served)" = "$n" ] && break; sleep 0.1; done
            done
            echo "served $(served)"
            echo "asked again: $(( $(asked) - first ))"
            """#)
        #expect(
            result.outputText == "asked at start\nserved 3\nasked again: 0\n",
            "\(result.outputText)\(result.errorText)")
    }

    @Test("Unlock needs an entry that did not decrypt: a .collection entry of another key unlocks nothing")
    func unlockNeedsLockedEntry() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            lock_login /bin/false
            folder="$PASSWORD_STORE_DIR/secret-service/login"
            printf 'locked-Sekret\n' | gpg --batch --quiet -e -r "$fpr" -o "$folder/held.gpg"
            # A .collection entry encrypted to the store's own key, which needs no passphrase.
            printf '\nlabel: Planted\n' | gpg --batch --quiet -e -r "$(head -n 1 "$PASSWORD_STORE_DIR/.gpg-id")" -o "$folder/.collection.gpg"
            start_provider
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            c = secretstorage.get_default_collection(bus)
            print("locked", c.is_locked())
            print("dismissed", c.unlock())
            print("locked", c.is_locked(), len(list(c.get_all_items())))
            '
            """#)
        #expect(
            result.outputText == "locked True\ndismissed True\nlocked True 0\n",
            "\(result.outputText)\(result.errorText)")
    }

    @Test("An entry encrypted to others only (a pusher's) locks nothing and is not what an unlock asks for")
    func othersEntryLocksNothing() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            lock_login /bin/false
            folder="$PASSWORD_STORE_DIR/secret-service"
            printf 'held-Sekret\nlabel: Held\n' | gpg --batch --quiet -e -r "$fpr" -o "$folder/login/held.gpg"
            # A pusher's entries, encrypted to a key whose secret this keyring does not have: one in
            # login (sorted first), one in a collection of its own.
            gpg --batch --quiet --passphrase '' --quick-gen-key 'Pusher <pusher@coffer.test>' ed25519 sign never
            other=$(gpg --with-colons --list-keys pusher@coffer.test | awk -F: '/^fpr/ {print $10; exit}')
            gpg --batch --quiet --passphrase '' --quick-add-key "$other" cv25519 encr never
            gpg --batch --yes --delete-secret-keys "$other"
            mkdir "$folder/pushed"
            for file in login/0 pushed/0; do
                printf 'pushed\n' | gpg --batch --quiet --trust-model always -e -r "$other" -o "$folder/$file.gpg"
            done
            start_provider
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            print(sorted((c.get_label(), c.is_locked()) for c in secretstorage.get_all_collections(bus)))
            '
            printf %s 'lock-pass' | /usr/lib/gnupg/gpg-preset-passphrase --preset "$grip"
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            c = secretstorage.get_default_collection(bus)
            print("dismissed", c.unlock())
            print("locked", c.is_locked(), [i.get_label() for i in c.get_all_items()])
            '
            """#)
        #expect(
            result.outputText
                == "[('', False), ('Login', True), ('pushed', False)]\ndismissed False\nlocked False ['Held']\n",
            "\(result.outputText)\(result.errorText)")
    }

    @Test("An entry made by hand is an item; changing it through the bus keeps its other lines")
    func handMadeEntry() throws {
        let bus = try SecretServiceSandbox()
        try bus.installed.insert(
            "secret-service/login/odd name é", "hand-Sekret\nurl: https://example.org\nfree notes\n")
        let result = try bus.checkPython(
            #"""
            items = list(secretstorage.get_default_collection(bus).get_all_items())
            print([(i.get_label(), i.get_attributes(), i.get_secret()) for i in items])
            item = items[0]
            item.set_label("Labelled")
            item.set_attributes({"service": "hand-1"})
            item.set_secret(b"new-Sekret")
            found = list(secretstorage.search_items(bus, {"service": "hand-1"}))
            print(len(found), found[0].get_label(), found[0].get_secret())
            """#)
        #expect(
            result.outputText == "[('odd name é', {}, b'hand-Sekret')]\n1 Labelled b'new-Sekret'\n",
            "\(result.outputText)\(result.errorText)")
        let text = try #require(try bus.installed.decrypted("secret-service/login/odd name é"))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "new-Sekret")
        #expect(lines.contains("label: Labelled") && lines.contains("attribute.service: hand-1"), "\(text)")
        #expect(lines.suffix(2) == ["url: https://example.org", "free notes"], "\(text)")
    }

    @Test("Forged NameLost and NameOwnerChanged sent straight to the provider stop nothing, drop no session")
    func forgedBusSignals() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.checkPython(
            #"""
            import time
            from jeepney import DBusAddress, HeaderFields, new_method_call, new_signal
            daemon = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus",
                                 interface="org.freedesktop.DBus")
            owner = bus.send_and_get_reply(
                new_method_call(daemon, "GetNameOwner", "s", ("org.freedesktop.secrets",))).body[0]
            item = secretstorage.get_default_collection(bus).create_item("Forged", {"k": "v"}, b"sig-Sekret")
            print(item.get_secret())
            def forge(member, signature, body):
                signal = new_signal(DBusAddress("/org/freedesktop/DBus", interface="org.freedesktop.DBus"),
                                    member, signature, body)
                signal.header.fields[HeaderFields.destination] = owner
                bus.send(signal)
            forge("NameOwnerChanged", "sss", (bus.unique_name, bus.unique_name, ""))
            forge("NameLost", "s", ("org.freedesktop.secrets",))
            time.sleep(0.5)
            print(item.get_secret())
            print(bus.send_and_get_reply(
                new_method_call(daemon, "GetNameOwner", "s", ("org.freedesktop.secrets",))).body[0] == owner)
            """#)
        #expect(
            result.outputText == "b'sig-Sekret'\nb'sig-Sekret'\nTrue\n",
            "\(result.outputText)\(result.errorText)\(bus.providerText())")
        #expect(!bus.providerText().contains("another provider"), "\(bus.providerText())")
    }

    @Test("A hand-kept entry whose first line is not text keeps every byte when a client changes its label")
    func handMadeBinaryEntry() throws {
        let bus = try SecretServiceSandbox()
        let name = "secret-service/login/hand"
        let bytes: [UInt8] = Array("pw".utf8) + [0, 0xFF] + Array("\nnotes\r\n#label: q".utf8)
        _ = try bus.installed.sandbox.run(
            [bus.installed.program, "insert", "-m", "-f", name], input: bytes,
            environment: bus.installed.environment
        ).exitedZero("insert")
        let file = bus.installed.store + "/" + name + ".gpg"
        let before = try bus.installed.sandbox.check(["gpg", "--batch", "--quiet", "-d", file]).standardOutput
        #expect(before == bytes)
        let result = try bus.checkPython(
            #"""
            item = list(secretstorage.get_default_collection(bus).get_all_items())[0]
            print(item.get_secret())
            try:
                item.set_label("Labelled")
                print("changed")
            except secretstorage.exceptions.SecretServiceNotAvailableException as error:
                print("refused")
            except Exception as error:
                print("refused", type(error).__name__)
            print(item.get_secret())
            """#)
        #expect(
            result.outputText.hasPrefix("b'pw\\x00\\xff'\nrefused"), "\(result.outputText)\(result.errorText)"
        )
        #expect(result.outputText.hasSuffix("b'pw\\x00\\xff'\n"), "\(result.outputText)")
        let after = try bus.installed.sandbox.check(["gpg", "--batch", "--quiet", "-d", file]).standardOutput
        #expect(after == bytes, "the entry's bytes are as they were")
        #expect(try bus.installed.uncommitted() == "")
    }

    @Test("A collection label change keeps a hand-kept .collection entry's lines, or refuses its binary line")
    func handMadeCollectionEntry() throws {
        let bus = try SecretServiceSandbox()
        let texts: [String: [UInt8]] = [
            "binary": Array("s3cr".utf8) + [0] + Array("t".utf8) + [0xFF]
                + Array("\nlabel: binary\nnote: keep me\n".utf8),
            "text": Array("\nlabel: text\nnote: keep me\n".utf8),
        ]
        for (label, bytes) in texts {
            _ = try bus.installed.sandbox.run(
                [bus.installed.program, "insert", "-m", "-f", "secret-service/\(label)/.collection"],
                input: bytes,
                environment: bus.installed.environment
            ).exitedZero("insert")
        }
        let result = try bus.checkPython(
            #"""
            for collection in sorted(secretstorage.get_all_collections(bus), key=lambda c: c.get_label()):
                label = collection.get_label()
                if label not in ("binary", "text"):
                    continue
                try:
                    collection.set_label(label + " renamed")
                    print(label, "changed")
                except Exception as error:
                    print(label, "refused")
            """#)
        #expect(
            result.outputText == "binary refused\ntext changed\n", "\(result.outputText)\(result.errorText)")
        func decrypted(_ label: String) throws -> [UInt8] {
            try bus.installed.sandbox.check([
                "gpg", "--batch", "--quiet", "-d",
                bus.installed.store + "/secret-service/\(label)/.collection.gpg",
            ]).standardOutput
        }
        #expect(try decrypted("binary") == texts["binary"], "the refused entry is as it was")
        let renamed = String(decoding: try decrypted("text"), as: UTF8.self)
        #expect(renamed.hasPrefix("\nlabel: text renamed\n"), "\(renamed)")
        #expect(renamed.hasSuffix("note: keep me\n"), "\(renamed)")
        #expect(try bus.installed.uncommitted() == "")
    }

    @Test(
        "Properties and CreateItem/CreateCollection values of another type are InvalidArgs, nothing changed")
    func wrongTypes() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.checkPython(
            #"""
            from jeepney import DBusAddress, new_method_call, MessageType
            item = secretstorage.get_default_collection(bus).create_item("Typed", {"k": "v"}, b"t-Sekret")
            def call(path, interface, member, signature, body):
                address = DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface)
                reply = bus.send_and_get_reply(new_method_call(address, member, signature, body))
                return reply.header.fields.get(4, "ok") if reply.header.message_type == MessageType.error else "ok"
            properties = "org.freedesktop.DBus.Properties"
            print(call(item.item_path, properties, "Set", "ssv",
                       ("org.freedesktop.Secret.Item", "Attributes", ("a{sv}", {}))))
            print(call(item.item_path, properties, "Set", "ssv",
                       ("org.freedesktop.Secret.Item", "Label", ("o", "/x"))))
            print(call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "CreateCollection", "a{sv}s",
                       ({"org.freedesktop.Secret.Collection.Label": ("u", 7)}, "")))
            from secretstorage.util import open_session
            session = open_session(bus).object_path
            print(call(item.item_path.rsplit("/", 1)[0], "org.freedesktop.Secret.Collection", "CreateItem", "a{sv}(oayays)b",
                       ({"org.freedesktop.Secret.Item.Label": ("u", 7)}, (session, b"", b"x", "text/plain"), False)))
            print(item.get_label(), item.get_attributes())
            print(len(list(secretstorage.get_all_collections(bus))),
                  len(list(secretstorage.get_default_collection(bus).get_all_items())))
            """#)
        let lines = result.outputText.split(separator: "\n").map(String.init)
        #expect(
            lines.prefix(4).allSatisfy { $0 == "org.freedesktop.DBus.Error.InvalidArgs" },
            "\(result.outputText)\(result.errorText)")
        #expect(
            lines.count > 5 && lines[4] == "Typed {'k': 'v'}" && lines[5] == "2 1", "\(result.outputText)")
    }

    @Test("Introspect describes every object; Properties answers Get, GetAll and refuses read-only Set")
    func introspectionAndProperties() throws {
        let (_, result) = try SecretServiceSandbox.started(
            #"""
            printf %s 'intro-Sekret' | secret-tool store --label='Intro' service intro-1
            item=$(call /org/freedesktop/secrets org.freedesktop.Secret.Service.SearchItems \
                dict:string:string:service,intro-1 | sed -n 's/.*object path "\(.*\)"/\1/p' | head -1)
            introspect() {
                call "$1" org.freedesktop.DBus.Introspectable.Introspect | grep -o "$2" | head -1
            }
            introspect /org/freedesktop/secrets 'interface name="org.freedesktop.Secret.Service"'
            introspect /org/freedesktop/secrets 'node name="collection"'
            introspect /org/freedesktop/secrets/collection 'node name="login"'
            introspect /org/freedesktop/secrets/collection/login 'method name="CreateItem"'
            introspect /org/freedesktop/secrets/collection/login "node name=\"${item##*/}\""
            introspect "$item" 'property name="Attributes" type="a{ss}" access="readwrite"'
            call "$item" org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Item string:Label |
                grep -o 'string "Intro"'
            call /org/freedesktop/secrets/aliases/default org.freedesktop.DBus.Properties.GetAll \
                string:org.freedesktop.Secret.Collection | grep -c 'string "\(Items\|Label\|Locked\|Created\|Modified\)"'
            call "$item" org.freedesktop.DBus.Properties.Set string:org.freedesktop.Secret.Item \
                string:Created variant:uint64:5 2>&1 | grep -o 'org.freedesktop.DBus.Error.InvalidArgs'
            """#)
        let lines: [String] = result.outputText.split(separator: "\n").map(String.init)
        let expected: [String] = [
            #"interface name="org.freedesktop.Secret.Service""#, #"node name="collection""#,
            #"node name="login""#, #"method name="CreateItem""#, "item node",
            #"property name="Attributes" type="a{ss}" access="readwrite""#, #"string "Intro""#, "5",
            "org.freedesktop.DBus.Error.InvalidArgs",
        ]
        try #require(lines.count == expected.count, "\(result.outputText)\(result.errorText)")
        for (index, line) in lines.enumerated() where index != 4 {
            #expect(line == expected[index])
        }
        // The collection lists its item as a child node.
        #expect(lines[4].hasPrefix("node name=\"") && lines[4].count > "node name=\"\"".count, "\(lines[4])")
    }

    @Test("A locked collection cannot be deleted (IsLocked, as gnome-keyring refuses); unlocked, it can")
    func lockedCollectionDelete() throws {
        let (bus, result) = try SecretServiceSandbox.startedPython(
            #"""
            vault = collection_with_item("Vault", "In vault", {"place": "vault-1"}, b"vault-Sekret")
            vault.lock()
            try:
                vault._collection.call("Delete", "")
                print("deleted while locked")
            except Exception as error:
                print("refused", str(error.__cause__ or error).split("]")[0] + "]")
            print("kept", len(list(secretstorage.search_items(bus, {"place": "vault-1"}))))
            vault.unlock()
            vault.delete()
            print("deleted", len(list(secretstorage.search_items(bus, {"place": "vault-1"}))))
            """#)
        #expect(
            result.outputText == "refused [org.freedesktop.Secret.Error.IsLocked]\nkept 1\ndeleted 0\n",
            "\(result.outputText)\(result.errorText)")
        #expect(try bus.installed.uncommitted().isEmpty)
    }

    @Test("Deleting a collection removes the items it serves, never other entries in its folder")
    func collectionDeleteKeepsOtherEntries() throws {
        let bus = try SecretServiceSandbox()
        try bus.installed.insert("secret-service/login/notes/bank", "bank-Sekret\n")
        let result = try bus.checkPython(
            #"""
            login = secretstorage.get_default_collection(bus)
            login.create_item("Web", {"service": "web-1"}, b"web-Sekret")
            print(sorted(i.get_label() for i in login.get_all_items()))
            login.delete()
            work = collection_with_item("Work", "Plan", {"service": "work-1"}, b"work-Sekret")
            work.delete()
            print("gone", len(list(secretstorage.search_items(bus, {"service": "web-1"}))),
                  len(list(secretstorage.search_items(bus, {"service": "work-1"}))))
            """#)
        #expect(result.outputText == "['Web']\ngone 0 0\n", "\(result.outputText)\(result.errorText)")
        // The entry kept by hand under the collection's folder is still there, and committed.
        #expect(try bus.installed.decrypted("secret-service/login/notes/bank") == "bank-Sekret\n")
        #expect(bus.items().isEmpty)
        #expect(!FileSystem.isFile(bus.installed.store + "/secret-service/login/.collection.gpg"))
        // A folder left empty goes.
        let left = try FileSystem.contents(of: bus.installed.store + "/secret-service")
        #expect(left == ["login"], "\(left)")
        #expect(try bus.installed.uncommitted().isEmpty)
    }

    @Test("CreateItem with replace and a Type but no xdg:schema replaces the item: one item, the last secret")
    func replaceWithType() throws {
        let (bus, result) = try SecretServiceSandbox.started(
            #"""
            python3 - <<'PYTHON'
            import secretstorage
            from secretstorage.util import format_secret, open_session
            bus = secretstorage.dbus_init()
            login = secretstorage.get_default_collection(bus)
            session = open_session(bus)
            prefix = "org.freedesktop.Secret.Item."
            paths = set()
            for number in range(1, 6):
                properties = {prefix + "Label": ("s", "Mail %d" % number),
                              prefix + "Attributes": ("a{ss}", {"service": "mail-7", "user": "bob-7"}),
                              prefix + "Type": ("s", "org.example.Mail")}
                path, prompt = login._collection.call(
                    "CreateItem", "a{sv}(oayays)b", properties,
                    format_secret(session, b"PASSWORD-%d" % number, "text/plain"), True)
                paths.add(path)
            print("paths", len(paths), "found", len(list(login.search_items({"service": "mail-7", "user": "bob-7"}))))
            PYTHON
            echo "lookup=$(secret-tool lookup service mail-7 user bob-7)"
            """#)
        #expect(
            result.outputText == "paths 1 found 1\nlookup=PASSWORD-5\n",
            "\(result.outputText)\(result.errorText)")
        #expect(bus.items().count == 1, "\(bus.items())")
        #expect(try bus.installed.uncommitted().isEmpty)
    }

    @Test("When the commit fails, CreateItem, SetSecret and Delete fail and leave the store as it was")
    func failedCommitUndone() throws {
        let (bus, result) = try SecretServiceSandbox.started(
            #"""
            printf %s 'kept-Sekret' | secret-tool store --label='Kept' service keep-1
            hook="$PASSWORD_STORE_DIR/.git/hooks/pre-commit"
            printf '#!/bin/sh\necho "commits are refused here" >&2\nexit 1\n' > "$hook"
            chmod +x "$hook"
            for attempt in 1 2 3; do
                printf %s 'new-Sekret' | secret-tool store --label='New' service new-1 2>/dev/null
                echo "store=$?"
            done
            python3 - <<'PYTHON'
            import secretstorage
            bus = secretstorage.dbus_init()
            item = list(secretstorage.search_items(bus, {"service": "keep-1"}))[0]
            for name, change in [("set", lambda: item.set_secret(b"changed-Sekret")), ("delete", item.delete)]:
                try:
                    change()
                    print(name, "succeeded")
                except Exception as error:
                    print(name, "failed", "commits are refused here" in str(error))
            PYTHON
            sleep 0.5
            echo "new=$(secret-tool search --all service new-1 2>/dev/null | grep -c '^\[')"
            echo "kept=$(secret-tool lookup service keep-1)"
            rm -f "$hook"
            """#)
        #expect(
            result.outputText
                == "store=1\nstore=1\nstore=1\nset failed True\ndelete failed True\nnew=0\nkept=kept-Sekret\n",
            "\(result.outputText)\(result.errorText)")
        #expect(try bus.installed.uncommitted().isEmpty)
        let names = bus.items()
        try #require(names.count == 1, "\(names)")
        #expect(try bus.installed.decrypted(names[0])?.hasPrefix("kept-Sekret\n") == true)
    }

    @Test("SIGTERM during a write: the call finishes, is committed and answered, then the provider exits 0")
    func terminateDuringWrite() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            hook="$PASSWORD_STORE_DIR/.git/hooks/pre-commit"
            printf '#!/bin/sh\ntouch "%s"\nsleep 2\n' "$PWD/committing" > "$hook"
            chmod +x "$hook"
            start_provider
            printf %s 'term-Sekret' | secret-tool store --label='Term' service term-1 &
            client=$!
            for i in $(seq 300); do [ -e committing ] && break; sleep 0.05; done
            kill -TERM "$provider"
            wait "$client"
            echo "store=$?"
            wait "$provider"
            echo "provider=$?"
            provider=
            rm -f "$hook" committing
            start_provider
            echo "lookup=$(secret-tool lookup service term-1)"
            kill -HUP "$provider"
            wait "$provider"
            echo "hangup=$?"
            provider=
            """#)
        #expect(
            result.outputText == "store=0\nprovider=0\nlookup=term-Sekret\nhangup=0\n",
            "\(result.outputText)\(result.errorText)\(bus.providerText())")
        #expect(bus.providerText().contains("coffer: SIGTERM received; stopping\n"), "\(bus.providerText())")
        #expect(bus.providerText().contains("coffer: SIGHUP received; stopping\n"), "\(bus.providerText())")
        #expect(try bus.installed.uncommitted().isEmpty)
        #expect(bus.items().count == 1)
    }

    @Test("A collection's label is only inside its encrypted .collection entry, not in its folder's name")
    func collectionLabelNotInClear() throws {
        let (bus, result) = try SecretServiceSandbox.startedPython(
            #"""
            project = collection_with_item("Project Nightingale", "Plan", {"service": "plan-1"}, b"plan-Sekret")
            print(secretstorage.Collection(bus, project.collection_path).get_label())
            """#)
        #expect(result.outputText == "Project Nightingale\n", "\(result.outputText)\(result.errorText)")
        let leaked = try bus.clearBytes().contains("Nightingale")
        #expect(!leaked, "the collection label is in clear")
        #expect(try bus.installed.uncommitted().isEmpty)
    }

    @Test(
        "A collection folder, or secret-service/ itself, that is a link out of the store: calls fail, nothing is written there"
    )
    func linkedOutOfTheStore() throws {
        let bus = try SecretServiceSandbox()
        let outside = bus.installed.sandbox.directory + "/outside"
        mkdir(outside, 0o700)
        let result = try bus.check(
            #"""
            outside='\#(outside)'
            errors="$outside.errors"
            start_provider
            printf %s 'first-Sekret' | secret-tool store --label='First' service out-1 || exit 1
            # Another clone made the login collection a link to a copy of it outside the store.
            store="$PASSWORD_STORE_DIR/secret-service"
            mkdir "$outside/login"
            cp -a "$store/login/." "$outside/login/"
            rm -r "$store/login"
            ln -s "$outside/login" "$store/login"
            sleep 1
            printf %s 'second-Sekret' | secret-tool store --label='Second' service out-2 2>>"$errors"
            echo "new=$?"
            printf %s 'changed-Sekret' | secret-tool store --label='First' service out-1 2>>"$errors"
            echo "replace=$?"
            # The linked collection is not served: clear finds nothing there to remove.
            secret-tool clear service out-1 2>>"$errors"
            echo "clear=$?"
            # And then secret-service/ itself.
            rm "$store/login"
            mv "$store" "$outside/all"
            ln -s "$outside/all" "$store"
            sleep 1
            printf %s 'third-Sekret' | secret-tool store --label='Third' service out-3 2>>"$errors"
            echo "new=$?"
            python3 - <<'PYTHON' 2>>"$errors"
            import secretstorage
            bus = secretstorage.dbus_init()
            try:
                secretstorage.create_collection(bus, "Elsewhere")
                print("collection=made")
            except Exception as error:
                print("collection=refused", "outside the password store" in str(error) or "not a plain" in str(error))
            PYTHON
            echo "refusals=$(grep -c 'outside the password store\|not a plain' "$errors")"
            echo "alive=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets | grep -c 'boolean true')"
            rm -f "$errors"
            """#)
        #expect(
            result.outputText
                == "new=1\nreplace=1\nclear=1\nnew=1\ncollection=refused True\nrefusals=3\nalive=1\n",
            "\(result.outputText)\(result.errorText)\(bus.providerText())")
        // Outside: the copy of the one item (and the folder moved there), nothing else.
        let listing = try bus.installed.sandbox.check(["find", outside, "-type", "f"]).outputText
        #expect(listing.split(separator: "\n").count == 1, "\(listing)")
    }

    @Test(
        "links under secret-service/ to other folders of the store are not followed: nothing there is read, changed or removed"
    )
    func linksInsideTheStoreAreNotFollowed() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            printf 'bank pin\n' | "$coffer" insert -m personal/bank >/dev/null || exit 1
            printf 'mail pw\n' | "$coffer" insert -m personal/mail >/dev/null || exit 1
            store="$PASSWORD_STORE_DIR/secret-service"
            mkdir -p "$store"
            ln -s ../personal "$store/work"
            ln -s .. "$store/all"
            start_provider
            printf %s 'item-Sekret' | secret-tool store --label='Mine' service own || exit 1
            mkdir -p "$store/login"
            ln -s ../../personal/mail.gpg "$store/login/mail.gpg"
            sleep 1
            python3 - <<'PYTHON'
            import secretstorage
            bus = secretstorage.dbus_init()
            labels = sorted(c.get_label() or "" for c in secretstorage.get_all_collections(bus))
            paths = sorted(c.collection_path.split("/")[-1] for c in secretstorage.get_all_collections(bus))
            print("collections", [p for p in paths if p in ("work", "all")])
            items = [i for c in secretstorage.get_all_collections(bus) for i in c.get_all_items()]
            print("items", sorted(i.item_path.split("/")[-1] for i in items if i.item_path.split("/")[-1] in ("bank", "mail")))
            for collection in secretstorage.get_all_collections(bus):
                if collection.collection_path.endswith("/work") or collection.collection_path.endswith("/all"):
                    collection.delete()
            PYTHON
            "$coffer" show personal/bank
            "$coffer" show personal/mail
            git -C "$PASSWORD_STORE_DIR" status --porcelain | grep -v '^?? secret-service/' || true
            """#)
        #expect(
            result.outputText == "collections []\nitems []\nbank pin\nmail pw\n",
            "\(result.outputText)\(result.errorText)\(bus.providerText())")
    }
}
