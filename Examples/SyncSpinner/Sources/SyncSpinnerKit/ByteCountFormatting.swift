import Foundation

/// Byte counts as the spinner prints them: `512 B`, `3.2 KB`, `1.5 MB` (decimal units).
enum ByteCountFormatting {
    static func text(_ bytes: Double) -> String {
        switch bytes {
        case ..<1_000: "\(Int(bytes)) B"
        case ..<1_000_000: String(format: "%.1f KB", bytes / 1_000)
        case ..<1_000_000_000: String(format: "%.1f MB", bytes / 1_000_000)
        default: String(format: "%.1f GB", bytes / 1_000_000_000)
        }
    }
}
