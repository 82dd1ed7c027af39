/// This release of Coffer, described in one place: the command line prints it, and a program can ask.
public enum CofferRelease {
    /// The version of this build of Coffer.
    public static let version = "0.9.0"
    /// The version of pass whose behaviour the command line reproduces.
    public static let passCompatibility = "1.7.4"
}
