extension String {
    /// The text with control characters (C0, DEL, C1) and line or paragraph separators written as
    /// `\u{…}` escapes, and backslashes doubled: client-controlled text (partition names, reasons) can then
    /// neither forge a log line nor send escape sequences to the terminal that shows the log.
    var escapedForLog: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar.value {
            case 0x5C: escaped += "\\\\"
            case 0..<0x20, 0x7F..<0xA0, 0x2028, 0x2029:
                escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
