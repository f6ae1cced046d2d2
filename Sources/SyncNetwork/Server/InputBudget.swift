/// The input a listener's connections hold — frames received in part, and the fragments of messages
/// being assembled — counted against one budget shared by all of them
/// (`WebSocketLimits.maximumBufferedInputBytes`), so that many connections each sending most of a large
/// frame cannot make the server's memory grow without bound. Confined to the listener's loop thread.
///
/// **Policy.** Each server channel reports what it holds after every pass over what it read. When the
/// total passes the budget, the connection holding the most is failed with close code 1013 (*try again
/// later*; a sync client reconnects with backoff and sends again) and what it held is dropped at once —
/// again, largest first, until the total is within the budget. Every other connection reads on: a message
/// in progress completes and releases its bytes, and no connection waits on another (a stalled peer
/// cannot hold up the rest). The budget is at least two maximum-size messages, so one such message always
/// fits beside the others'.
final class InputBudget {
    /// The most bytes the connections hold together.
    let limit: Int
    /// What they hold now.
    private(set) var total = 0

    private struct Holder {
        weak var channel: WebSocketChannel?
        var bytes: Int
    }

    private var holders: [ObjectIdentifier: Holder] = [:]

    /// The budget of `limits`, raised to two maximum-size messages when it is smaller.
    init(limits: WebSocketLimits) {
        limit = max(limits.maximumBufferedInputBytes, 2 * limits.maximumMessageBytes)
    }

    /// `channel` now holds `bytes` of input; when the total passes the limit, the largest holders are
    /// told to drop theirs (`WebSocketChannel.shedInput`), largest first, until it is within.
    func update(_ channel: WebSocketChannel, holding bytes: Int) {
        let id = ObjectIdentifier(channel)
        total += bytes - (holders[id]?.bytes ?? 0)
        holders[id] = bytes > 0 ? Holder(channel: channel, bytes: bytes) : nil
        while total > limit, let (largestID, largest) = holders.max(by: { $0.value.bytes < $1.value.bytes }) {
            // Forgotten before it is told: its own report of 0 (when it ends) changes nothing.
            holders[largestID] = nil
            total -= largest.bytes
            largest.channel?.shedInput(total: total + largest.bytes, limit: limit)
        }
    }
}
