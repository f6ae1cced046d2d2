#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`).
public enum DescriptorLimit {
    /// Raises the soft limit to the hard limit (on Darwin at most `OPEN_MAX`, what `setrlimit` accepts)
    /// and returns the soft limit in effect afterwards; `nil` if it cannot be read. Each connection costs
    /// the server one descriptor and each loaded partition two, so the default soft limit (often 1,024)
    /// would cap a server far below what it can serve.
    @discardableResult
    public static func raiseToHardLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        var target = limit.rlim_max
        #if canImport(Darwin)
            target = min(target, rlim_t(OPEN_MAX))
        #endif
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resource, &raised) == 0 { return UInt64(target) }
        }
        return UInt64(limit.rlim_cur)
    }

    #if canImport(Glibc)
        private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resource = RLIMIT_NOFILE
    #endif
}
