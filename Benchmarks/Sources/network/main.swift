import Dispatch
import Foundation
import SyncEngine
import SyncServer

// `swift run -c release network`: P11 (many bound sessions on one server) and P12 (write → callback
// latency over loopback), each beside the machine's own figures from the same run;
// `swift run -c release network side-by-side --root-server PATH --nio-server PATH`: sync-server beside
// sync-server-nio (see side-by-side.sh);
// `swift run -c release network p12 [samples]`: P12 alone (targets.sh);
// `swift run -c release network p13 [MiB]`: P13 (memory while syncing, and opening a large store).
// See docs/PERFORMANCE.md.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "side-by-side" {
    await SideBySide.run(SideBySide.Options(arguments: arguments.dropFirst(2)))
    exit(0)
}
if arguments.count >= 4, arguments[1] == "p11-clients" {
    await P11Clients.run(port: Int(arguments[2])!, sessions: Int(arguments[3])!)
    exit(0)
}
if arguments.count >= 2, arguments[1] == "p13" {
    let megabytes = arguments.count >= 3 ? Int(arguments[2])! : 1024
    print("P13: memory while two apps sync \(megabytes) MiB, and the cost of opening the store")
    await P13.run(megabytes: megabytes)
    exit(0)
}
if arguments.count >= 2, arguments[1] == "p12" {
    let samples = arguments.count >= 3 ? Int(arguments[2])! : 300
    print("P12: write on one app → changesets callback on another, over loopback WebSocket, 100 writes/s")
    await P12.run(samples: samples)
    exit(0)
}
let sessions = arguments.count >= 3 && arguments[1] == "--sessions" ? Int(arguments[2])! : 5_000
print("P12: write on one app → changesets callback on another, over loopback WebSocket, 100 writes/s")
await P12.run(samples: 300)
print("")
print("P11: one server, \(sessions) bound sessions on loopback (clients in another process)")
await P11.run(sessions: sessions)
