// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Coffer", targets: ["Coffer"]),
        .library(name: "CofferCLI", targets: ["CofferCLI"]),
        .executable(name: "coffer", targets: ["coffer"]),
    ],
    targets: [
        .systemLibrary(
            name: "CGPGME",
            pkgConfig: "gpgme",
            providers: [.apt(["libgpgme-dev"]), .brew(["gpgme"])]
        ),
        .systemLibrary(
            name: "CGcrypt",
            pkgConfig: "libgcrypt",
            providers: [.apt(["libgcrypt20-dev"]), .brew(["libgcrypt"])]
        ),
        // The C library calls Swift's Glibc module leaves out (pipe2, spawning in a folder, prctl).
        .systemLibrary(name: "CSystem"),
        // systemd's sd-bus, for the Secret Service provider on the session bus (Linux only).
        .systemLibrary(
            name: "CSDBus",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(name: "Coffer", dependencies: ["CGPGME", "CGcrypt", "CSystem"]),
        .target(
            name: "CofferSecretService",
            dependencies: [
                "Coffer", "CGcrypt", .target(name: "CSDBus", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "CofferCLI", dependencies: ["Coffer", "CofferSecretService"]),
        .executableTarget(name: "coffer", dependencies: ["CofferCLI"]),
        .executableTarget(
            name: "keychain-example",
            dependencies: ["Coffer"],
            path: "Examples/KeychainExample"
        ),
        .target(name: "CofferTestSupport", dependencies: ["Coffer"], path: "Tests/CofferTestSupport"),
        // Unit tests: no gpg, no git, no other program (the whole target in seconds).
        .testTarget(name: "CofferUnitTests", dependencies: ["Coffer", "CofferTestSupport"]),
        // The library with real gpg and git in a sandbox.
        .testTarget(name: "CofferTests", dependencies: ["Coffer", "CofferTestSupport"]),
        // The command line and the Secret Service with real gpg, git and D-Bus.
        .testTarget(
            name: "CofferCLITests",
            dependencies: ["CofferCLI", "Coffer", "CofferSecretService", "CofferTestSupport"]
        ),
        // Differential: coffer against Debian's pass 1.7.4, byte for byte (the table and the stateful
        // fuzzer).
        .testTarget(
            name: "CofferDifferentialTests", dependencies: ["CofferCLI", "Coffer", "CofferTestSupport"]),
        // The multi-clone model of sync, with a hostile clone (fixed seeds, and soaks).
        .testTarget(name: "CofferModelTests", dependencies: ["Coffer", "CofferTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
