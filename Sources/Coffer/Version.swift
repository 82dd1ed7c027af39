/// Coffer's version, in one place: the command line prints it, and a program can ask for it.
public enum CofferVersion {
    /// The version of this build of Coffer.
    public static let current = "0.9.0"
    /// The version of pass whose behaviour the command line reproduces.
    public static let passCompatibility = "1.7.4"
}
