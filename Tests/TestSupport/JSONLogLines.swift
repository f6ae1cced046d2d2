import Foundation
import Testing

/// Checks a server's `--log-format json` standard error (`sync-server`, `sync-server-nio`): every line is a
/// JSON object with `time`, `level` and `message` strings and `connection` and `peer` keys, and every line
/// whose message contains one of `markers` names connection `connection` and a loopback peer
/// (`127.0.0.1:PORT`). Returns how many lines carried a marker.
@discardableResult
public func expectJSONLogLines(
    _ stderr: String, connectionLinesContaining markers: [String], connection: Int = 1,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> Int {
    var connectionLines = 0
    for line in stderr.split(separator: "\n", omittingEmptySubsequences: true) {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let fields = try #require(object, "not a JSON object: \(line)", sourceLocation: sourceLocation)
        #expect(
            fields["time"] is String && fields["level"] is String && fields["message"] is String, "\(line)",
            sourceLocation: sourceLocation)
        #expect(
            fields.keys.contains("connection") && fields.keys.contains("peer"), "\(line)",
            sourceLocation: sourceLocation)
        let message = fields["message"] as? String ?? ""
        guard markers.contains(where: { message.contains($0) }) else { continue }
        connectionLines += 1
        #expect(fields["connection"] as? Int == connection, "\(line)", sourceLocation: sourceLocation)
        let peer = fields["peer"] as? String ?? ""
        #expect(
            peer.hasPrefix("127.0.0.1:") && Int(peer.dropFirst(10)) != nil, "\(line)",
            sourceLocation: sourceLocation)
    }
    return connectionLines
}
