/// `version`, `--version`: pass's banner.
///
/// The banner is pass 1.7.4's, byte for byte: tools that drive pass (QtPass, keyring backends) look for
/// its `pass: the standard unix password manager` line and its `v1.7.4`, and `help` starts with it.
enum VersionCommand {
    /// The banner, ending with a newline.
    static let banner = """
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

    /// Prints the banner.
    static func run() {
        standardOutput.write(banner)
    }
}
