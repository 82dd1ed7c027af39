import Coffer

/// `version`, `--version`: coffer's version, or pass's banner under the name `pass`.
///
/// Tools that drive pass (QtPass, keyring backends) look for the banner's
/// `pass: the standard unix password manager` line, so coffer installed as `pass` prints it byte for byte.
enum VersionCommand {
    /// `version`.
    static let command = Command(
        names: ["version"], usage: "", operands: .none, help: { _ in ["Show version information."] },
        passHead: "version", run: { _, invocation in run(invocation) })

    /// pass 1.7.4's banner, ending with a newline.
    static let passBanner = """
        ============================================
        = pass: the standard unix password manager =
        =                                          =
        =                  v1.7.4                  =
        =                                          =
        =             Jason A. Donenfeld           =
        =               Jason@zx2c4.com            =
        =                                          =
        =      http://www.passwordstore.org/       =
        ============================================

        """

    /// coffer's own banner: its version and what it is, ending with a newline.
    static let cofferBanner = """
        coffer \(CofferRelease.version): a password store that pass can read, and a keychain for programs
        (a drop-in for pass \(CofferRelease.passCompatibility))

        """

    /// Prints the banner for the name the program was called by.
    static func run(_ invocation: Invocation) {
        standardOutput.write(invocation.speaksAsPass ? passBanner : cofferBanner)
    }
}
