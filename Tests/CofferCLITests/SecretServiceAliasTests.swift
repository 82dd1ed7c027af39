import Coffer
import CofferTestSupport
import Testing

/// The `session` collection (in memory only) and aliases other than `default` (kept in the store).
@Suite("Secret Service: the session collection and aliases")
struct SecretServiceAliasTests {
    @Test("What a client keeps in the session collection is served, never written, and gone after a restart")
    func sessionCollectionStaysInMemory() throws {
        let bus = try SecretServiceSandbox()
        let before = try bus.installed.git(["rev-parse", "HEAD"])
        let result = try bus.check(
            #"""
            touch "$HOME/before"
            start_provider
            printf %s 'session-Sekret' | secret-tool store --collection=session --label='For now' app sess-1
            secret-tool lookup app sess-1; echo
            python3 -c '
            import secretstorage
            bus = secretstorage.dbus_init()
            session = secretstorage.get_collection_by_alias(bus, "session")
            found = list(secretstorage.search_items(bus, {"app": "sess-1"}))
            print("found", [i.get_label() for i in found], session.collection_path)
            item = found[0]
            item.set_label("Relabelled")
            item.set_secret(b"second-Sekret")
            print("changed", item.get_label(), item.get_secret())
            '
            find "$PASSWORD_STORE_DIR" -path '*/.git' -prune -o -type f -newer "$HOME/before" -print
            stop_provider
            start_provider
            secret-tool lookup app sess-1 || echo "not found after a restart"
            """#)
        let lines = result.outputText.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "session-Sekret",
                "found ['For now'] /org/freedesktop/secrets/collection/session",
                "changed Relabelled b'second-Sekret'",
                "not found after a restart",
            ], "\(result.outputText)\(result.errorText)")
        // Nothing was written or committed: no file changed, no entry, no commit.
        #expect(try bus.installed.git(["rev-parse", "HEAD"]) == before)
        #expect(try bus.installed.uncommitted().isEmpty)
        #expect(!TestFiles.exists(bus.installed.store + "/secret-service/session"))
        #expect(bus.items().isEmpty)
    }

    @Test("An alias a client sets is kept, encrypted and committed, and read back after a restart")
    func aliasesAreKept() throws {
        let bus = try SecretServiceSandbox()
        let script = #"""
            python3 -c '
            import sys, secretstorage
            from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE
            bus = secretstorage.dbus_init()
            service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)
            def error_name(call):
                try:
                    call()
                    return "no error"
                except Exception as error:
                    return getattr(error, "name", type(error).__name__)
            if sys.argv[1] == "set":
                work = secretstorage.create_collection(bus, "Work")
                service.call("SetAlias", "so", "work-2", work.collection_path)
                print("set", secretstorage.get_collection_by_alias(bus, "work-2").get_label())
                print("session", error_name(lambda: service.call("SetAlias", "so", "session", work.collection_path)))
                print("bad name", error_name(lambda: service.call("SetAlias", "so", "no good", work.collection_path)))
                default = secretstorage.get_default_collection(bus).collection_path
                service.call("SetAlias", "so", "default", work.collection_path)
                print("default", secretstorage.get_default_collection(bus).get_label())
            else:
                print("read", secretstorage.get_collection_by_alias(bus, "work-2").get_label())
                print("default", secretstorage.get_default_collection(bus).get_label())
                print("session", service.call("ReadAlias", "s", "session"))
            ' "$1"
            """#
        try script.write(toFile: bus.installed.sandbox.directory + "/aliases.sh")
        let result = try bus.check(
            #"""
            start_provider
            sh "$(dirname "$0")/aliases.sh" set
            stop_provider
            start_provider
            sh "$(dirname "$0")/aliases.sh" read
            """#)
        #expect(
            result.outputText.split(separator: "\n").map(String.init) == [
                "set Work", "session org.freedesktop.DBus.Error.NotSupported",
                "bad name org.freedesktop.DBus.Error.InvalidArgs", "default Work",
                // `default` is not taken from the store (whoever can push to it would choose where new
                // secrets go); `work-2` is.
                "read Work", "default Login", "session ('/org/freedesktop/secrets/collection/session',)",
            ], "\(result.outputText)\(result.errorText)")
        // The alias is inside the encryption, in a commit of its own, and names the collection's folder.
        let text = try #require(try bus.installed.decrypted("secret-service/.aliases"))
        let folders = try FileSystem.contents(of: bus.installed.store + "/secret-service").filter {
            !$0.hasPrefix(".")
        }
        #expect(folders.count == 1, "\(folders)")
        #expect(text.contains("attribute.work-2: \(folders.first ?? "?")\n"), "\(text)")
        #expect(!text.contains("default"), "\(text)")
        #expect(try bus.installed.git(["log", "--format=%s"]).contains("Update Secret Service aliases."))
        #expect(try bus.installed.uncommitted().isEmpty)
        #expect(!(try bus.clearBytes()).contains("work-2"))
    }

    @Test(
        "A collection and its alias are one commit, made or removed together; a refused commit changes neither"
    )
    func aliasCommittedWithCollection() throws {
        let bus = try SecretServiceSandbox()
        try #"""
        import sys, secretstorage
        from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE
        bus = secretstorage.dbus_init()
        service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)
        def labels():
            return sorted(c.get_label() for c in secretstorage.get_all_collections(bus))
        def attempt(what, call):
            try:
                call()
                print(what, "done")
            except Exception as error:
                print(what, "failed")
        if sys.argv[1] == "make":
            attempt("make", lambda: secretstorage.create_collection(bus, "Work", "work-3"))
        elif sys.argv[1] == "refused":
            attempt("make", lambda: secretstorage.create_collection(bus, "Refused", "work-4"))
            print("work-4", service.call("ReadAlias", "s", "work-4"))
            attempt("delete", lambda: secretstorage.get_collection_by_alias(bus, "work-3").delete())
            print("work-3", secretstorage.get_collection_by_alias(bus, "work-3").get_label())
        else:
            attempt("delete", lambda: secretstorage.get_collection_by_alias(bus, "work-3").delete())
            print("work-3", service.call("ReadAlias", "s", "work-3"))
        print(labels())
        """#.write(toFile: bus.installed.sandbox.directory + "/alias_commits.py")
        let result = try bus.check(
            #"""
            set -e
            script="$(dirname "$0")/alias_commits.py"
            start_provider
            python3 "$script" make
            git -C "$PASSWORD_STORE_DIR" log -1 --format=%s --name-only | sed 's|/[0-9a-f]*/|/ID/|'
            printf '#!/bin/sh\nexit 1\n' > "$PASSWORD_STORE_DIR/.git/hooks/pre-commit"
            chmod 755 "$PASSWORD_STORE_DIR/.git/hooks/pre-commit"
            python3 "$script" refused
            rm "$PASSWORD_STORE_DIR/.git/hooks/pre-commit"
            python3 "$script" delete
            git -C "$PASSWORD_STORE_DIR" log -1 --format=%s --name-only | sed 's|/[0-9a-f]*/|/ID/|'
            """#)
        let lines = result.outputText.split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        let folder = lines.count > 2 ? lines[2] : ""
        #expect(
            lines == [
                "make done", "['', 'Login', 'Work']",
                folder.hasPrefix("Add Secret Service collection secret-service/") ? folder : "Add ...",
                "", "secret-service/.aliases.gpg", "secret-service/ID/.collection.gpg",
                "make failed", "work-4 ('/',)", "delete failed", "work-3 Work", "['', 'Login', 'Work']",
                "delete done", "work-3 ('/',)", "['', 'Login']",
                "Remove" + folder.dropFirst("Add".count),
                "", "secret-service/.aliases.gpg", "secret-service/ID/.collection.gpg", "",
            ], "\(result.outputText)\(result.errorText)")
        #expect(try bus.installed.uncommitted().isEmpty)
    }
}
