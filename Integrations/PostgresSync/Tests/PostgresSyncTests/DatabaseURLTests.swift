import PostgresSync
import Testing

@Suite("DatabaseURL")
struct DatabaseURLTests {
    @Test("a full URL gives user, password, host, port, database, sslmode and application name")
    func full() throws {
        let url = try DatabaseURL(
            "postgresql://sync%40x:p%2Fw@db.example:6543/logs?sslmode=require&application_name=fe1")
        #expect(url.user == "sync@x")
        #expect(url.password == "p/w")
        #expect(url.host == "db.example")
        #expect(url.port == 6543)
        #expect(url.database == "logs")
        #expect(url.tls == .require)
        #expect(url.applicationName == "fe1")
        #expect(url.description == "postgres://sync@x@db.example:6543/logs?sslmode=require&application_name=fe1")
        #expect(!url.description.contains("p/w"))
    }

    @Test("defaults: port 5432, no TLS; IPv6 hosts in brackets; a socket directory")
    func defaults() throws {
        let url = try DatabaseURL("postgres://u@[::1]/d")
        #expect(url.port == 5432)
        #expect(url.host == "::1")
        #expect(url.tls == .disable)
        #expect(url.description == "postgres://u@[::1]:5432/d")
        #expect(try DatabaseURL("postgres://u@localhost/d?host=/run/pg").socketDirectory == "/run/pg")
    }

    @Test(
        "malformed URLs are refused with what is wrong",
        arguments: [
            ("mysql://u@h/d", DatabaseURLError.unsupportedScheme("mysql")),
            ("postgres://h/d", .missingUser), ("postgres://u@h", .missingDatabase),
            ("postgres://u@h/", .missingDatabase),
            ("postgres://u@h/d?sslmode=verify", .unsupportedSSLMode("verify")),
            ("postgres://u@h/d?pool=3", .unsupportedParameter("pool")),
        ])
    func refused(text: String, expected: DatabaseURLError) {
        #expect(throws: expected) { try DatabaseURL(text) }
    }
}
