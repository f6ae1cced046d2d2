import NIOSSL

/// Which certificate authorities a `wss://` client trusts.
public struct TrustRoots: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case pemFile(String)
        case pem(String)
    }

    /// Whether the system's trust store (`/etc/ssl/certs` on Linux, the keychain on Apple platforms) is used.
    public var includesSystemRoots: Bool
    /// Further authorities, from PEM files or PEM text.
    var additional: [Source]

    /// The system's trust store only: for a server with a certificate from a public authority.
    public static let system = TrustRoots(includesSystemRoots: true, additional: [])

    /// Only the authorities in the PEM file at `path` (one or more certificates): for a private CA.
    /// `includingSystemRoots` adds the system's trust store.
    public static func certificateAuthorities(pemFile path: String, includingSystemRoots: Bool = false) -> TrustRoots {
        TrustRoots(includesSystemRoots: includingSystemRoots, additional: [.pemFile(path)])
    }

    /// Only the authorities in `pem` (one or more `-----BEGIN CERTIFICATE-----` blocks).
    /// `includingSystemRoots` adds the system's trust store.
    public static func certificateAuthorities(pem: String, includingSystemRoots: Bool = false) -> TrustRoots {
        TrustRoots(includesSystemRoots: includingSystemRoots, additional: [.pem(pem)])
    }

    /// The client TLS configuration: full verification (chain and host name) against these roots.
    func tlsConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        configuration.minimumTLSVersion = .tlsv12
        var certificates: [NIOSSLCertificate] = []
        for source in additional {
            switch source {
            case .pemFile(let path): certificates += try NIOSSLCertificate.fromPEMFile(path)
            case .pem(let text): certificates += try NIOSSLCertificate.fromPEMBytes(Array(text.utf8))
            }
        }
        if includesSystemRoots {
            configuration.trustRoots = .default
            if !certificates.isEmpty { configuration.additionalTrustRoots = [.certificates(certificates)] }
        } else {
            guard !certificates.isEmpty else { throw TrustRootsError.noCertificates }
            configuration.trustRoots = .certificates(certificates)
        }
        return configuration
    }
}

/// A `TrustRoots` that names no certificate.
enum TrustRootsError: Error, CustomStringConvertible {
    case noCertificates

    var description: String { "the custom trust roots hold no certificate" }
}
