/// A duration written as a positive whole number and a unit — `90s`, `45m`, `12h`, `30d` — as the servers'
/// duration options take it; `nil` otherwise (no unit, another unit, zero, a sign, or more than about
/// 290 million years).
///
/// ```swift
/// parseDuration("45m")  // .seconds(2_700)
/// parseDuration("30")   // nil: no unit
/// parseDuration("0d")   // nil: not positive
/// ```
public func parseDuration(_ text: String) -> Duration? {
    guard let unit = text.last, let count = Int64(text.dropLast()), count > 0, text.first?.isNumber == true else {
        return nil
    }
    let seconds: Int64
    switch unit {
    case "s": seconds = 1
    case "m": seconds = 60
    case "h": seconds = 3_600
    case "d": seconds = 86_400
    default: return nil
    }
    let (total, overflow) = count.multipliedReportingOverflow(by: seconds)
    return overflow ? nil : .seconds(total)
}
