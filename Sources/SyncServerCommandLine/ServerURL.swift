/// `scheme://host:port`, with an IPv6 host in brackets (`ws://[::1]:8080`): what a server program prints for
/// its listening address and its metrics address.
public func serverURL(scheme: String, host: String, port: Int) -> String {
    host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
}
