import Coffer
import CofferTestSupport
import Testing

/// One client script run against gnome-keyring-daemon (Debian's gnome-keyring, its login keyring made
/// and unlocked with a password on standard input) and against `coffer secret-service`, each on a
/// private session bus: both must print the same thing.
@Suite("Secret Service: coffer against gnome-keyring")
struct SecretServiceDifferentialTests {
    /// The client: python3-secretstorage over the default collection (a new collection needs a password
    /// prompt in gnome-keyring, which a test cannot answer). It prints what a program sees: labels,
    /// attributes, secrets, types, search results and the errors of wrong calls, no object paths or times.
    /// Two quirks of gnome-keyring 42 are left out: it reports every secret as `text/plain` whatever
    /// content type was stored (coffer keeps it), and it sometimes adds `xdg:schema:
    /// org.freedesktop.Secret.Generic` to items stored without a schema (the first of a new keyring, one
    /// replaced), so the items here that are created or replaced carry a schema of their own.
    static let client = #"""
        import secretstorage
        from secretstorage.util import DBusAddressWrapper, SS_PATH, SERVICE_IFACE
        from jeepney import DBusErrorResponse

        bus = secretstorage.dbus_init()

        def show_item(item):
            kind = DBusAddressWrapper(item.item_path, "org.freedesktop.Secret.Item", bus).get_property("Type")
            print("  item", repr(item.get_label()), sorted(item.get_attributes().items()), item.get_secret(),
                  item.get_secret_content_type(), repr(kind), item.is_locked())

        def error_name(call):
            try:
                call()
                return "no error"
            except DBusErrorResponse as error:
                return error.name
            except Exception as error:
                return type(error).__name__

        def search(query):
            found = sorted(i.get_label() for i in secretstorage.search_items(bus, query))
            print("search", sorted(query.items()), found)

        default = secretstorage.get_default_collection(bus)
        print("default", repr(default.get_label()), default.is_locked())
        print("alias default", secretstorage.get_collection_by_alias(bus, "default").get_label())

        for label, attributes, secret in [
            ("Schema", {"service": "diff", "user": "bob", "xdg:schema": "org.example.Diff"}, b"bob\nsecret"),
            ("Plain", {"service": "diff", "user": "ann", "xdg:schema": "org.example.Plain"}, b"ann secret"),
            ("Binary ü", {"service": "diff", "user": "cyd", "odd: name": " value "}, b"\x00\xff\x01"),
        ]:
            default.create_item(label, attributes, secret)

        search({"service": "diff"})
        search({"user": "bob"})
        search({"service": "diff", "user": "nobody"})
        search({"odd: name": " value "})
        search({"xdg:schema": "org.example.Diff"})
        for item in sorted(default.search_items({"service": "diff"}), key=lambda i: i.get_label()):
            show_item(item)

        ann = {"service": "diff", "user": "ann", "xdg:schema": "org.example.Plain"}
        again = default.create_item("Plain again", ann, b"ann new", replace=True)
        search({"user": "ann"})
        show_item(again)
        twin = default.create_item("Plain twin", ann, b"twin", replace=False)
        search({"user": "ann"})

        twin.set_label("Twin renamed")
        twin.set_attributes({"service": "diff", "user": "dee"})
        twin.set_secret(b"dee secret")
        show_item(twin)
        search({"user": "dee"})
        twin.set_attributes({"service": "diff", "user": "dee", "xdg:schema": "org.example.Other"})
        show_item(twin)

        twin.delete()
        search({"service": "diff"})
        print("deleted item", error_name(lambda: twin.get_label()))

        # Aliases other than default: gnome-keyring refuses them, coffer keeps them (a deliberate difference).
        print("other alias", error_name(lambda: secretstorage.create_collection(bus, "Aliased", alias="elsewhere")))
        for collection in secretstorage.get_all_collections(bus):
            if collection.get_label() == "Aliased":
                collection.delete()
        print("labels", sorted(c.get_label() for c in secretstorage.get_all_collections(bus) if c.get_label()))
        print("items", len(list(default.get_all_items())))

        service = DBusAddressWrapper(SS_PATH, SERVICE_IFACE, bus)
        print("unknown algorithm", error_name(lambda: service.call("OpenSession", "sv", "rot13", ("s", ""))))
        print("read alias", service.call("ReadAlias", "s", "nothing-here"))
        print("missing item", error_name(lambda: secretstorage.Item(bus, "/org/freedesktop/secrets/collection/login/4242")))
        print("missing collection", error_name(lambda: secretstorage.Collection(bus, "/org/freedesktop/secrets/collection/nothing")))
        print("set alias", error_name(lambda: service.call("SetAlias", "so", "elsewhere", default.collection_path)))
        """#

    /// Starts gnome-keyring-daemon on the sandbox's bus, its login keyring made and unlocked.
    static let startGnomeKeyring = #"""
        export XDG_RUNTIME_DIR="$HOME/runtime"
        mkdir -m 700 "$XDG_RUNTIME_DIR"
        printf %s 'keyring password' |
            gnome-keyring-daemon --unlock --components=secrets --foreground >/dev/null 2>&1 &
        provider=$!
        wait_for_name || exit 1
        """#

    /// Runs the client against the provider `start` starts, on a bus of its own.
    private func run(_ bus: SecretServiceSandbox, start: String) throws -> String {
        try Self.client.write(toFile: bus.installed.sandbox.directory + "/client.py")
        return try bus.check(
            """
            \(start)
            python3 "$(dirname "$0")/client.py"
            """
        ).outputText
    }

    @Test("The same client script gives the same results against gnome-keyring-daemon and coffer")
    func sameResults() throws {
        let keyring = try SecretServiceSandbox()
        let gnomeKeyring = try run(keyring, start: Self.startGnomeKeyring)
        let coffer = try run(try SecretServiceSandbox(), start: "start_provider")
        // Aliases other than default are the one deliberate difference: coffer keeps them.
        let deliberate = ["other alias ", "set alias "]
        // gnome-keyring gives an item made without a schema the generic one only at times (when it has
        // read its keyring file again, which a loaded machine makes it do): the same item either way.
        func shared(_ output: String) -> [String] {
            output.split(separator: "\n").map(String.init).filter { line in
                !deliberate.contains { line.hasPrefix($0) }
            }.map { line in
                line.replacing(", ('xdg:schema', 'org.freedesktop.Secret.Generic')", with: "")
                    .replacing(" 'org.freedesktop.Secret.Generic' ", with: " '' ")
            }
        }
        #expect(shared(coffer) == shared(gnomeKeyring))
        for prefix in deliberate {
            #expect(
                gnomeKeyring.contains(prefix + "org.freedesktop.DBus.Error.NotSupported\n"), "\(gnomeKeyring)"
            )
            #expect(coffer.contains(prefix + "no error\n"), "\(coffer)")
        }
        // The script did its work: it saw the items it made, and the errors.
        #expect(gnomeKeyring.contains("search [('user', 'dee')] ['Twin renamed']\n"), "\(gnomeKeyring)")
        #expect(gnomeKeyring.contains("'org.example.Other'"), "\(gnomeKeyring)")
        #expect(gnomeKeyring.contains("unknown algorithm org.freedesktop.DBus.Error.NotSupported\n"))
        #expect(gnomeKeyring.contains("missing item ItemNotFoundException\n"))
    }

    /// Calls to objects that are not there, to interfaces and methods an object does not have, and with
    /// values of the wrong type: the error names, as dbus-send prints them, one call a line.
    static let errorProbe = #"""
        R=/org/freedesktop/secrets
        call() {
            local path=$1 method=$2 out
            shift 2
            out=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets "$path" "$method" "$@" 2>&1 | head -1)
            case $out in
            Error*) out=${out#Error }; echo "$path $method ${out%%:*}" ;;
            *) echo "$path $method ok" ;;
            esac
        }
        for path in / /org /org/freedesktop /nothing $R/nothing $R/collection/nothing $R/collection/login/4242 \
            $R/aliases/nothing $R/session/99 $R/prompt/99; do
            call "$path" org.freedesktop.DBus.Properties.GetAll string:org.freedesktop.Secret.Item
            call "$path" org.freedesktop.DBus.Introspectable.Introspect
        done
        call $R org.freedesktop.Secret.Service.NoSuchMethod
        call $R org.example.Nothing.Method
        call $R org.freedesktop.Secret.Collection.Delete
        call $R org.freedesktop.Secret.Service.SearchItems string:x
        call $R org.freedesktop.Secret.Service.ReadAlias uint32:3
        call $R org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Service string:Nothing
        call $R org.freedesktop.DBus.Properties.Get string:org.example.X string:Collections
        call $R org.freedesktop.DBus.Properties.Set string:org.freedesktop.Secret.Service string:Collections variant:string:x
        default=$R/aliases/default
        call $default org.freedesktop.DBus.Properties.Set string:org.freedesktop.Secret.Collection string:Label variant:uint32:3
        call $default org.freedesktop.DBus.Properties.Set string:org.freedesktop.Secret.Collection string:Nothing variant:string:x
        call $default org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Item string:Label
        call $default org.freedesktop.Secret.Item.Delete
        call $R org.freedesktop.Secret.Service.ReadAlias string:session
        call $R/collection/session org.freedesktop.DBus.Properties.GetAll string:org.freedesktop.Secret.Collection
        dbus-send --session --print-reply --dest=org.freedesktop.secrets $R/aliases/session \
            org.freedesktop.DBus.Properties.GetAll string:org.freedesktop.Secret.Collection | grep -c 'string "Label"'
        """#

    @Test("Unknown objects, interfaces, methods and wrong types get gnome-keyring's errors")
    func sameErrors() throws {
        let gnomeKeyring = try SecretServiceSandbox().check(Self.startGnomeKeyring + "\n" + Self.errorProbe)
            .outputText
        let coffer = try SecretServiceSandbox().check("start_provider\n" + Self.errorProbe).outputText
        #expect(coffer == gnomeKeyring)
        // The probe saw errors, and the session collection, on both.
        #expect(
            gnomeKeyring.contains(
                "/nothing org.freedesktop.DBus.Properties.GetAll org.freedesktop.DBus.Error.UnknownMethod\n"))
        #expect(gnomeKeyring.contains("org.freedesktop.DBus.Error.InvalidArgs\n"))
        #expect(
            gnomeKeyring.hasSuffix(
                "/org/freedesktop/secrets/collection/session org.freedesktop.DBus.Properties.GetAll ok\n1\n"))
    }
}
