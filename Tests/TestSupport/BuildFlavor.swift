import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How this test process was built and asked to run: under a sanitizer or not, stress counts or not.
///
/// Swift has no compile-time condition for a sanitizer, so it is detected at run time: a build with
/// `--sanitize=thread` (or `address`) links the sanitizer's runtime, whose entry point `__tsan_init`
/// (`__asan_init`) is then visible to `dlsym`. A plain build has neither.
public enum BuildFlavor {
    /// Built with `--sanitize=thread`.
    public static let threadSanitizer = hasSymbol("__tsan_init")

    /// Built with `--sanitize=address`.
    public static let addressSanitizer = hasSymbol("__asan_init")

    /// Built with either sanitizer.
    public static var sanitized: Bool { threadSanitizer || addressSanitizer }

    /// `SYNC_STRESS=1` in the environment: heavy tests run their full counts even under a sanitizer, and
    /// the tests tagged `stress` that only that run needs are enabled (see docs/TESTING.md).
    public static let stress = ProcessInfo.processInfo.environment["SYNC_STRESS"] == "1"

    /// What every deadline is multiplied by: 6 under ThreadSanitizer, 3 under AddressSanitizer, 1 otherwise.
    /// Code runs 5–15× slower under TSan and the two cores are shared with the whole suite, whose ~1,000
    /// tests all start at once: a test's next event can wait behind the rest of the run (about 100–150 s
    /// under TSan), so a deadline there must outlast the run, not the event.
    public static let deadlineScale: Double = threadSanitizer ? 6 : addressSanitizer ? 3 : 1

    /// The number of iterations of a stress loop: `full` in a plain build or a stress run (`SYNC_STRESS=1`),
    /// `sanitized` under a sanitizer, where each iteration costs 5–15× more and the claim needs fewer.
    public static func iterations(_ full: Int, sanitized: Int) -> Int {
        self.sanitized && !stress ? sanitized : full
    }

    private static func hasSymbol(_ name: String) -> Bool {
        // RTLD_DEFAULT: every object loaded so far, the sanitizer runtime included.
        #if canImport(Darwin)
            let handle = UnsafeMutableRawPointer(bitPattern: -2)
        #else
            let handle: UnsafeMutableRawPointer? = nil
        #endif
        return dlsym(handle, name) != nil
    }
}

extension Duration {
    /// This deadline multiplied by `BuildFlavor.deadlineScale`.
    public var scaledForBuild: Duration { self * BuildFlavor.deadlineScale }
}
